"""Conformance tests every task template must pass, per mode of its contract.

:class:`TaskTemplateTests` checks what every template declares (columns that assemble into a row without a
collision, identity and axis params that exist, distinct episodes with canonical identities).
:class:`AgentTaskTemplateTests` adds the sandboxed-agent mode (:class:`harness.contracts.AgentTaskTemplate`):
no leaked answer key, scoring that never raises, reproducible episodes, matched conditions that share their
test samples.  :class:`InHarnessTaskTemplateTests` adds the in-harness mode
(:class:`harness.contracts.InHarnessTaskTemplate`): an episode gives a row of its declared columns with a
``status``, and the same params give the same scores.

Fixture contract: override ``template`` to return your template and ``params`` to return small, validated
params for it (``prepare`` is called once per test that needs it).
Optional:

- ``agent_outputs`` (agent mode): a list of ``{relative path: bytes}`` the checks write into
  the workspace before scoring, as an agent might (default: garbage in every
  file the template wrote, plus an empty workspace and a stray binary file);
- ``matched_params`` (agent mode): a list of params that differ from ``params`` only in a
  condition that must keep the same test samples, and ``sample_identity(key_dir)``
  returning a comparable identity of an episode's test samples (both needed, or
  that check is skipped);
- ``profile`` (in-harness mode): the agent profile given to ``run_in_harness`` (default None);
  ``volatile_columns``: result columns that may differ between two runs of the same episode (default:
  none; e.g. a wall-clock column).

::

    import pytest
    from harness.testing import AgentTaskTemplateTests

    class TestMyTemplate(AgentTaskTemplateTests):
        @pytest.fixture
        def template(self):
            return MyTemplate()

        @pytest.fixture
        def params(self, template):
            return template.params_model.model_validate({"size": 3})
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.contracts import CallResult, EpisodeScore, InHarnessTaskTemplate, Materialized, TaskTemplate

MIN_SECRET_BYTES = 16  # shorter key files (a label, a number) can match workspace text by chance


def materialize(template: TaskTemplate, params: Any, folder: Path, episode: str | None = None
                ) -> tuple[Materialized, Path, Path]:
    """``(materialized, workspace, key_dir)`` of ``episode`` (default: the first) under ``folder``."""
    workspace, key_dir = folder / "workspace", folder / "key"
    workspace.mkdir(parents=True)
    key_dir.mkdir(parents=True)
    episode = episode if episode is not None else template.episodes(params)[0]
    return template.materialize(params, episode, workspace, key_dir), workspace, key_dir


def files(folder: Path) -> dict[str, bytes]:
    """Relative path -> content of every file under ``folder``."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def failing_runner(module: Path, function: str, inputs: list[Path]) -> list[CallResult]:
    """A submission runner whose every call failed (what a broken ``rule.py`` gives)."""
    return [CallResult(error="RuntimeError: conformance check") for _ in inputs]


class _Base:
    @pytest.fixture
    def template(self) -> TaskTemplate:
        pytest.fail("override the `template` fixture to return your TaskTemplate instance")

    @pytest.fixture
    def params(self, template) -> Any:
        pytest.fail("override the `params` fixture to return small params for your template")

    @pytest.fixture
    def prepared(self, template, params):
        template.prepare(params, lambda done, total, what: None)
        return template


DTYPES = ("str", "int", "float", "bool")


class TaskTemplateTests(_Base):
    """What every task template declares, whichever mode its episodes run in.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.TaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template``;
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``.
    """

    def test_declared_columns_and_params(self, template, params):
        assert template.name and isinstance(params, template.params_model)
        assert isinstance(template.scorer_version, str) and template.scorer_version, \
            "scorer_version must be a non-empty string"
        for column, (dtype, meaning) in template.result_columns.items():
            assert dtype in DTYPES and meaning.strip(), f"result column {column!r}: ({dtype!r}, {meaning!r})"
        assert set(template.identity_columns) <= set(template.result_columns), "identity columns not declared"
        fields = type(params).model_fields
        for attr in ("experiment_axis", "evidence_param"):
            value = getattr(template, attr)
            assert value is None or value in fields, f"{attr} {value!r} is not a field of {type(params).__name__}"

    def test_row_columns_assemble_without_a_collision(self, template):
        from harness.columns import assemble, row_parts
        from harness.plugins import plugins

        extractors = [reg.obj for reg in plugins().registry("metric_extractor").values()]
        columns = assemble(row_parts(template, extractors))  # ColumnCollision names both owners
        assert set(template.summary_columns) <= set(columns), "summary columns that no row has"

    def test_episodes_are_distinct_with_canonical_identities(self, prepared, params):
        import json

        episodes = prepared.episodes(params)
        assert episodes and all(isinstance(e, str) and e for e in episodes)
        assert len(set(episodes)) == len(episodes), "an episode id is listed twice"
        identities = [json.dumps(prepared.episode_identity(params, e), sort_keys=True) for e in episodes]
        assert len(set(identities)) == len(identities), "two episodes have the same identity (the same id)"
        assert all(isinstance(prepared.episode_label("task", params, e), str) for e in episodes)


class TaskTemplateLeakTests(_Base):
    """The answer key never appears in the workspace the agent sees (nor in the prompt).  A key file at
    the same relative path and with the same bytes as a workspace file is a pristine copy of an input
    (kept to evaluate a submission on), not part of the answer.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.TaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template``;
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``.
    """

    def test_answer_key_never_in_the_workspace(self, prepared, params, tmp_path):
        done, workspace, key_dir = materialize(prepared, params, tmp_path)
        assert isinstance(done, Materialized) and isinstance(done.prompt, str) and done.prompt
        key, visible = files(key_dir), files(workspace)
        assert key, "materialize wrote no answer key"
        for name, secret in key.items():
            if len(secret) < MIN_SECRET_BYTES or visible.get(name) == secret:
                continue  # too short to tell, or a pristine copy of an input the agent was given
            for path, content in visible.items():
                assert secret not in content, f"answer key file {name} appears in workspace file {path}"
            assert secret.decode(errors="ignore") not in done.prompt, f"answer key file {name} is in the prompt"


class TaskTemplateScoringTests(_Base):
    """Scoring returns an :class:`EpisodeScore` whatever the agent left behind.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.TaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template``;
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``;
    - ``agent_outputs`` (optional, function scope): a list of ``{relative path: bytes}`` written into the
      workspace before scoring (default ``None``: garbage in every file, an empty workspace, a stray file).
    """

    @pytest.fixture
    def agent_outputs(self) -> list[dict[str, bytes]] | None:
        return None

    def test_scoring_never_raises_on_arbitrary_output(self, prepared, params, agent_outputs, tmp_path):
        _, workspace, key_dir = materialize(prepared, params, tmp_path / "pristine")
        written = list(files(workspace))
        cases = agent_outputs if agent_outputs is not None else [
            {},
            {path: b"\x00\xff not what was asked \xfe" for path in written},
            {**{path: b"" for path in written}, "stray.bin": bytes(range(256))},
        ]
        for i, outputs in enumerate(cases):
            case = tmp_path / f"case{i}"
            shutil.copytree(workspace, case / "workspace")
            for path, content in outputs.items():
                target = case / "workspace" / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            score = prepared.score(params, prepared.episodes(params)[0], case / "workspace", key_dir, failing_runner)
            assert isinstance(score, EpisodeScore), f"case {i}: score() returned {type(score).__name__}"
            assert isinstance(score.metrics, dict)


class TaskTemplateReproducibilityTests(_Base):
    """The same params and seed give the same episode; matched conditions share test samples.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.TaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template``;
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``;
    - ``matched_params`` (optional, function scope): params differing from ``params`` only in a condition
      that keeps the test samples (default ``None``; with the method ``sample_identity(key_dir)``).
    """

    @pytest.fixture
    def matched_params(self) -> list[Any] | None:
        return None

    def sample_identity(self, key_dir: Path) -> Any:
        """A comparable identity of the episode's test samples, read from its answer key (override)."""
        return None

    def test_same_seed_same_episode(self, prepared, params, tmp_path):
        first, ws1, key1 = materialize(prepared, params, tmp_path / "a")
        second, ws2, key2 = materialize(prepared, params, tmp_path / "b")
        assert first.prompt == second.prompt
        assert files(ws1) == files(ws2), "the workspace differs between two materializations"
        assert files(key1) == files(key2), "the answer key differs between two materializations"

    def test_matched_conditions_share_test_samples(self, prepared, params, matched_params, tmp_path):
        if not matched_params or not _overridden(self):
            pytest.skip("no matched conditions given (override `matched_params` and `sample_identity`)")
        _, _, base_key = materialize(prepared, params, tmp_path / "base")
        expected = self.sample_identity(base_key)
        assert expected is not None
        for i, other in enumerate(matched_params):
            prepared.prepare(other, lambda done, total, what: None)
            _, _, key = materialize(prepared, other, tmp_path / f"matched{i}")
            assert self.sample_identity(key) == expected, f"matched condition {i} has other test samples"


def _overridden(suite: Any) -> bool:
    return type(suite).sample_identity is not TaskTemplateReproducibilityTests.sample_identity


class AgentTaskTemplateTests(TaskTemplateTests, TaskTemplateLeakTests, TaskTemplateScoringTests,
                             TaskTemplateReproducibilityTests):
    """Aggregate conformance suite for :class:`harness.contracts.AgentTaskTemplate` (episodes an agent runs in a
    sandbox): the declarations and every agent-mode area above.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.AgentTaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template`` (agent episodes);
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``;
    - ``agent_outputs`` (optional, function scope): a list of ``{relative path: bytes}`` written into the
      workspace before scoring (default ``None``: garbage in every file, an empty workspace, a stray file);
    - ``matched_params`` (optional, function scope): params differing from ``params`` only in a condition
      that keeps the test samples (default ``None``; with the method ``sample_identity(key_dir)``).
    """

    def test_runs_agent_episodes(self, template, params):
        assert not template.runs_in_harness(params), "these params run in the harness: use InHarnessTaskTemplateTests"


class InHarnessTaskTemplateTests(TaskTemplateTests):
    """Aggregate conformance suite for :class:`harness.contracts.InHarnessTaskTemplate` (episodes run in the
    harness process): the declarations, an episode's row of declared columns, reproducible scores.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``template`` (required, function scope): your :class:`harness.contracts.InHarnessTaskTemplate` instance;
    - ``params`` (required, function scope): small, validated params for ``template`` (in-harness episodes);
    - ``prepared`` (provided, function scope): ``template`` after ``prepare(params)``;
    - ``profile`` (optional, function scope): the agent profile given to ``run_in_harness`` (default None);
    - ``volatile_columns`` (optional, function scope): result columns that may differ between two runs of
      the same episode (default: none).
    """

    @pytest.fixture
    def profile(self) -> Any:
        return None

    @pytest.fixture
    def volatile_columns(self) -> tuple[str, ...]:
        return ()

    def test_runs_in_harness_with_a_declared_status(self, template, params):
        assert isinstance(template, InHarnessTaskTemplate) and template.runs_in_harness(params)
        assert not template.agent_episode_columns, "in-harness rows carry no agent-episode columns"
        assert template.result_columns.get("status", ("",))[0] == "str", "declare a str column 'status'"

    def test_an_episode_gives_a_row_of_its_declared_columns(self, prepared, params, profile, tmp_path):
        import pandas as pd

        from harness.columns import conforms, arrow_schema

        episode = prepared.episodes(params)[0]
        score = prepared.run_in_harness(params, episode, _folder(tmp_path / "episode"), profile)
        assert isinstance(score, EpisodeScore) and isinstance(score.metrics.get("status"), str)
        undeclared = [k for k in score.metrics if k not in prepared.result_columns and not k.startswith("flag_")]
        assert not undeclared, f"run_in_harness gives undeclared columns {undeclared}"
        fields = arrow_schema(prepared.result_columns)
        wrong = [k for k, v in score.metrics.items() if k in prepared.result_columns
                 and not conforms(pd.Series([v], dtype=object), fields.field(k))]
        assert not wrong, f"values not of their declared dtype: {[(k, score.metrics[k]) for k in wrong]}"

    def test_same_params_same_scores(self, prepared, params, profile, volatile_columns, tmp_path):
        episode = prepared.episodes(params)[0]
        first = prepared.run_in_harness(params, episode, _folder(tmp_path / "a"), profile).metrics
        second = prepared.run_in_harness(params, episode, _folder(tmp_path / "b"), profile).metrics
        keep = [k for k in first if k not in volatile_columns]
        assert {k: first[k] for k in keep} == {k: second.get(k) for k in keep}


def _folder(path: Path) -> Path:
    """An episode folder as the harness makes one before ``run_in_harness``."""
    path.mkdir(parents=True, exist_ok=True)
    return path

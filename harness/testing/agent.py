"""Conformance tests every agent plugin must pass.

Fixture contract: override ``agent`` to return an instance of your
:class:`harness.contracts.Agent`.  Optionally override ``context`` (the
:class:`AgentContext` the command checks use).  An agent with ``needs_model = False``
runs (on the host, without a sandbox) on one small episode: of the
:class:`harness.contracts.AgentTaskTemplate` and params you give in ``template`` and
``params``, else of the first shipped template offering one
(:meth:`~harness.contracts.AgentTaskTemplate.conformance_params`).  The episode is materialized, the agent's command runs in
the workspace, the template scores what it left, and the test fails unless the
template calls it a valid submission
(:meth:`~harness.contracts.AgentTaskTemplate.submission_problem`: e.g. no
``results.json``, or only labels outside the allowed ones)::

    import pytest
    from harness.testing import AgentTests

    class TestMyAgent(AgentTests):
        @pytest.fixture
        def agent(self):
            return MyAgent()
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from typing import Any

import pytest

from harness.config import AgentProfile
from harness.contracts import (Agent, AgentContext, AgentInvocation, AgentTaskTemplate, EpisodeScore, SubmissionRunner,
                               TaskTemplate)

CANARY = "conformance-canary-api-key-0123456789"


def atif_problems(trajectory: dict) -> list[str]:
    """Every way ``trajectory`` breaks ATIF-v1.6's rules, as Harbor's own models check them (empty: valid):
    the schema (:func:`harness.trajectory.validate_trajectory`) and, spelled out here so that the kit
    checks it whatever the validator does, the rule that an agent step with ``llm_call_count`` 0 (a
    deterministic dispatch: a tool the agent's code ran) carries no ``metrics`` and no ``reasoning_content``."""
    from harness.trajectory import TrajectoryError, validate_trajectory

    problems = []
    try:
        validate_trajectory(trajectory)
    except TrajectoryError as exc:
        problems += exc.problems
    for index, step in enumerate(trajectory.get("steps") or []):
        if isinstance(step, dict) and step.get("source") == "agent" and step.get("llm_call_count") == 0:
            problems += [f"steps[{index}].{name}: Field '{name}' must be absent when llm_call_count is 0"
                         for name in ("metrics", "reasoning_content") if step.get(name) is not None]
    return problems


class AgentTests:
    """Aggregate conformance suite for :class:`harness.contracts.Agent`.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``agent`` (required, function scope): your :class:`harness.contracts.Agent` instance;
    - ``context`` (optional, function scope): the :class:`AgentContext` the command checks use (default:
      workspace ``/workspace``, a ``conformance`` profile, the proxy URL when ``agent.needs_model``);
    - ``template`` (optional, function scope): a :class:`harness.contracts.AgentTaskTemplate` to run a small
      episode of (default ``None``: the first shipped template whose ``conformance_params`` the agent accepts);
    - ``params`` (optional, function scope): small params for ``template`` (default ``None``; required when
      ``template`` is given);
    - ``recorded_home`` (optional, function scope): a folder holding a recorded episode of the agent --
      ``home/`` (its native log), and optionally ``agent.stdout`` and the proxy's log (``proxy.jsonl.zst`` or
      a plain ``proxy.jsonl``) --
      whose trajectory must follow ATIF-v1.6's rules (:func:`atif_problems`) and be the same when the harness
      has stored its home's logs compressed (:mod:`harness.native_logs`: read them with
      :func:`harness.atif.read_native_text` and list them with :func:`harness.atif.find_native_files`; default
      ``None``: skipped).
    """

    @pytest.fixture
    def agent(self) -> Agent:
        pytest.fail("override the `agent` fixture to return your Agent instance")

    @pytest.fixture
    def context(self, agent) -> AgentContext:
        profile = AgentProfile(name="conformance", agent=agent.name, model="test-model", reasoning_effort="high")
        return AgentContext(
            workspace="/workspace", home="/home/agent", prompt="Solve the task described in the workspace.",
            profile=profile, model_base_url="http://127.0.0.1:8765" if agent.needs_model else None,
            task_info={}, timeout=60,
        )

    @pytest.fixture
    def template(self) -> TaskTemplate | None:
        return None

    @pytest.fixture
    def params(self) -> Any:
        return None

    @pytest.fixture
    def recorded_home(self) -> Any:
        return None

    def test_identity(self, agent):
        assert isinstance(agent, Agent)
        assert agent.name and agent.name == agent.name.strip()
        assert isinstance(agent.version, str) and agent.version

    def test_command(self, agent, context, monkeypatch):
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"):
            monkeypatch.setenv(var, CANARY)
        inv = agent.command(context)
        assert isinstance(inv, AgentInvocation)
        assert inv.argv and all(isinstance(a, str) for a in inv.argv)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in inv.env.items())
        blob = json.dumps([inv.argv, inv.env, inv.stdin])
        assert CANARY not in blob, "a host API key leaked into the agent's command or environment"
        if agent.needs_model:
            assert context.model_base_url in blob or any(context.model_base_url in v for v in inv.env.values()), \
                "an LLM agent must be pointed at the model proxy URL"

    def test_logs_and_trajectory_on_empty_home(self, agent, tmp_path):
        assert agent.native_logs(tmp_path) == []
        traj = agent.trajectory(tmp_path, "", None)
        assert traj is None or ("schema_version" in traj and isinstance(traj.get("steps"), list))
        assert traj is None or atif_problems(traj) == []

    def test_recorded_trajectory_follows_atif(self, agent, recorded_home):
        if recorded_home is None:
            pytest.skip("no recorded episode given (override the `recorded_home` fixture)")
        from pathlib import Path

        folder = Path(recorded_home)
        stdout = (folder / "agent.stdout").read_text(encoding="utf-8") if (folder / "agent.stdout").is_file() else ""
        from harness.proxy_records import proxy_log

        traj = agent.trajectory(folder / "home", stdout, proxy_log(folder))
        assert traj is not None, f"{folder}: the agent made no trajectory of its recorded episode"
        assert atif_problems(traj) == []

    def test_recorded_trajectory_is_the_same_from_compressed_logs(self, agent, recorded_home, tmp_path):
        """Every text file of the recorded home (and the proxy log) stored compressed, as the harness stores
        them after an episode: the trajectory is the same, its ``native_logs`` names included."""
        if recorded_home is None:
            pytest.skip("no recorded episode given (override the `recorded_home` fixture)")
        import shutil
        from pathlib import Path

        from harness.compressed_files import compress_file
        from harness.native_logs import compress_home
        from harness.proxy_records import proxy_log

        folder = Path(recorded_home)
        stdout = (folder / "agent.stdout").read_text(encoding="utf-8") if (folder / "agent.stdout").is_file() else ""
        before = agent.trajectory(folder / "home", stdout, proxy_log(folder))
        copy = tmp_path / "episode"
        shutil.copytree(folder, copy, symlinks=True)
        compressed = compress_home(copy / "home", min_bytes=0)
        assert compressed.problems == []
        if (log := proxy_log(copy)) is not None:
            compress_file(log)
        after = agent.trajectory(copy / "home", stdout, proxy_log(copy))
        assert after == before, (f"{folder}: the trajectory differs once the home's logs are stored compressed "
                                 f"({len(compressed.files)} file(s)): read them with harness.atif.read_native_text")

    def test_runs_a_small_episode(self, agent, context, template, params, tmp_path):
        if agent.needs_model:
            pytest.skip("an LLM agent needs the model proxy and its CLI (in the agent image): run it end to end "
                        "with `harness run` and a model backend that answers from a script, not with this kit")
        template, params = _episode_of(agent, template, params)
        refusal = agent.refusal(params)
        assert refusal is None, f"agent {agent.name!r} refuses the episode of template {template.name!r}: {refusal}"
        assert type(template).submission_problem is not AgentTaskTemplate.submission_problem, (
            f"template {template.name!r} does not say what a valid submission is (implement "
            "AgentTaskTemplate.submission_problem): the kit cannot tell an agent that answered from one that did not")
        template.prepare(params, lambda done, total, what: None)
        episode = template.episodes(params)[0]
        workspace, key_dir, home = tmp_path / "workspace", tmp_path / "key", tmp_path / "home"
        for folder in (workspace, key_dir, home):
            folder.mkdir()
        done = template.materialize(params, episode, workspace, key_dir)
        if agent.privileged_inputs:
            template.write_privileged(params, episode, workspace, key_dir)
        inv = agent.command(dataclasses.replace(context, workspace=str(workspace), home=str(home),
                                                prompt=done.prompt, task_info=done.task_info))
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), **inv.env}
        try:
            proc = subprocess.run(inv.argv, cwd=workspace, env=env, input=inv.stdin, capture_output=True,
                                  text=True, timeout=EPISODE_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"agent {agent.name!r} ran longer than {EPISODE_TIMEOUT} s on a small episode")
        assert proc.returncode == 0, f"agent {agent.name!r} exited {proc.returncode}: {proc.stderr[-2000:]}"
        score = template.score(params, episode, workspace, key_dir, _host_rule_runner())
        assert isinstance(score, EpisodeScore) and score.metrics, "the template could not score the agent's output"
        problem = template.submission_problem(params, episode, score)
        assert problem is None, (f"agent {agent.name!r} made no valid submission on an episode of template "
                                 f"{template.name!r}: {problem}")
        assert not score.warnings, score.warnings


#: Seconds the agent's command may take on the kit's small episode.
EPISODE_TIMEOUT = 300


def _episode_of(agent: Agent, template: TaskTemplate | None, params: Any) -> tuple[AgentTaskTemplate, Any]:
    """The template and params the kit runs ``agent`` on: the author's (both given), else the first shipped
    template (by name) whose :meth:`~harness.contracts.AgentTaskTemplate.conformance_params` the agent does not
    refuse.  Fails the test naming what is missing."""
    if template is not None:
        assert isinstance(template, AgentTaskTemplate), \
            f"the `template` fixture gave a {type(template).__name__}, not an AgentTaskTemplate"
        if params is None:
            pytest.fail("the `template` fixture is overridden but `params` is not: give small params for it")
        return template, params
    from harness.plugins import plugins

    reasons = []
    for name, registered in sorted(plugins().registry("task_template").items()):
        candidate = registered.obj
        if not isinstance(candidate, AgentTaskTemplate) or (small := candidate.conformance_params()) is None:
            continue
        refusal = agent.refusal(small)
        if refusal is None:
            return candidate, small
        reasons.append(f"{name}: {refusal}")
    pytest.fail(f"no shipped task template offers an episode agent {agent.name!r} accepts"
                + (f" ({'; '.join(reasons)})" if reasons else "")
                + ": override the `template` and `params` fixtures")


def _host_rule_runner() -> SubmissionRunner:
    """Runs a programmatic submission's functions on this host, as the kit runs the agent (the ``none``
    sandbox backend: timeouts and a memory cap, no isolation); made on the first call."""
    made: list[SubmissionRunner] = []

    def run(module, function, inputs):
        if not made:
            from harness.plugins import get
            from harness.submission import make_runner

            made.append(make_runner(get("sandbox_backend", "none")))
        return made[0](module, function, inputs)

    return run

"""Task template contract: TaskSpec parameters -> episodes -> results rows.

A template turns the ``params`` block of a TaskSpec into episodes, of one of two modes: an agent in a sandbox
(:class:`AgentTaskTemplate`: a workspace and a hidden key per episode, then a score of what the agent left)
or in the harness process (:class:`InHarnessTaskTemplate`: e.g. a forecaster on a forecasting task).
:class:`TaskTemplate` is what both declare; a template may implement both modes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel  # only in annotations: loading the plugins needs no pydantic

    from harness.design import PairedDesign


@dataclass
class Materialized:
    """The prompt given to the agent and non-secret ``task_info`` (see AgentContext)."""

    prompt: str
    task_info: dict[str, Any] = field(default_factory=dict)


@dataclass
class EpisodeScore:
    """Scalar ``metrics`` for the results row, per-item ``details`` (with reasons)
    for ``scores.json``, and ``warnings`` shown to the user."""

    metrics: dict[str, Any]
    details: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass
class CallResult:
    """One sandboxed call of a submitted function: its return value (JSON-able) or an error."""

    value: Any = None
    error: str | None = None


class SubmissionRunner(Protocol):
    """Runs ``function`` of the submitted ``module`` (a .py file) on each input file,
    each call isolated (no network, only that input readable, timeout, memory cap)."""

    def __call__(self, module: Path, function: str, inputs: list[Path]) -> list[CallResult]: ...


class TaskTemplate(ABC):
    """What every task template declares, whichever way its episodes run (:class:`AgentTaskTemplate`: an agent
    in a sandbox; :class:`InHarnessTaskTemplate`: in the harness process; a template may do both, choosing per
    params with :meth:`runs_in_harness`).

    ``name``: the ``template:`` value in TaskSpec YAML.  ``params_model``: a
    pydantic model (``extra="forbid"``) validating the spec's ``params``.
    ``result_columns``: the columns this template's params and score add to a
    results row, ``name -> (dtype, meaning)`` with dtype ``str``, ``int``,
    ``float`` or ``bool``; the results schema (a ``pyarrow.Schema``, see
    :func:`harness.columns.arrow_schema`) is built from them, and a name the
    harness or a metric extractor declares is refused (:mod:`harness.columns`).
    ``identity_columns``: besides profile and episode, the result columns that make a row a different result
    (e.g. the model under test when one episode runs several): rows equal in all of these are one episode
    repeated in several run directories, of which a report keeps the first.
    ``summary_columns``: results column -> header of the table ``harness run``
    prints at the end; the first is shown whenever a row has it (a headline
    score may be 0), the others when a row fills them with a value other than 0.
    ``agent_episode_columns``: the rows also carry the harness's agent-episode
    columns (profile, agent, sandbox, status, token usage, trajectory metrics);
    False for templates whose rows are in-harness episodes only: the row key,
    ``episode_seconds``, ``error_kind``, ``error`` and ``result_columns``.
    ``scorer_version``: the version of the template's scoring (what :meth:`AgentTaskTemplate.score` and the
    scoring part of :meth:`InHarnessTaskTemplate.run_in_harness` compute), changed whenever a score could
    change on the same episode output; every results row records it (``scorer_version``,
    :mod:`harness.provenance`), ``harness report`` keeps rows of two versions apart and ``harness rescore``
    recomputes old rows with the current one.  Default ``"0"``: never versioned.
    """

    name: str
    params_model: type[BaseModel]
    scorer_version: str = "0"
    result_columns: dict[str, tuple[str, str]] = {}
    identity_columns: tuple[str, ...] = ()
    summary_columns: dict[str, str] = {}
    agent_episode_columns: bool = True
    #: The param listing the models under test that an experiment may give as a top-level axis of the same
    #: name (entries ``NAME`` or ``{name, options}``; each entry runs as its own unit with the param set to that
    #: one entry, see :class:`harness.config.ExperimentSpec`).  None: the template has no such axis.
    experiment_axis: str | None = None
    #: The param an experiment stage's ``evidence_from`` source (``{"run": <run dir>, "agent": <name>}``) is
    #: written into.  None: the template reads no earlier stage's output.
    evidence_param: str | None = None
    #: How the template's episodes pair up and nest (for ``harness report --compare``/``--ci`` and
    #: ``harness plan --power``, see :class:`harness.design.PairedDesign`).  None: the default design.
    paired_design: PairedDesign | None = None

    def prepare(self, params: BaseModel, progress: Callable[[int, int, str], None]) -> None:
        """Expensive one-time work before the episodes (e.g. building a sample pool),
        reporting ``progress(done, total, description)``.  Default: nothing."""

    def validate(self, params: BaseModel) -> None:
        """Cheap checks of ``params`` beyond their model that need the plugin registry or the filesystem
        (e.g. that every named forecaster exists), run before a run writes anything: ``harness run`` refuses
        the run rather than leave a run directory behind.  Raises ValueError naming the field
        (``params.forecasters[0].name: ...``).  Must not depend on earlier stages' outputs (their run
        directories do not exist yet); :meth:`prepare` checks those.  Default: nothing."""

    def episodes(self, params: BaseModel) -> list[str]:
        """Episode ids for these params (default: one episode, ``"0"``)."""
        return ["0"]

    def runs_in_harness(self, params: BaseModel) -> bool:
        """True when these episodes run in the harness process with no sandbox and no agent (e.g.
        forecasting episodes: the model under test is a forecaster; see :class:`InHarnessTaskTemplate`).
        Default False."""
        return False

    def rewrite_paths(self, params: BaseModel, spec_file: Path) -> BaseModel:
        """Resolve relative paths in params against the spec file (default: unchanged)."""
        return params

    def episode_identity(self, params: BaseModel, episode: str) -> Any:
        """The canonical content of one episode, hashed into its id (default: all params and the
        episode id).  A template whose params list several models or conditions narrows them to the
        ones this episode uses, so adding an entry never changes another episode's id."""
        return {"params": params.model_dump(mode="json"), "episode": episode}

    def episode_label(self, task_name: str, params: BaseModel, episode: str) -> str:
        """A readable name for the episode folder (its id is appended).  Default: task name, seed, episode."""
        seed = getattr(params, "seed", None)
        return task_name + (f"-seed{seed}" if seed is not None else "") + (f"-{episode}" if episode != "0" else "")

    def summary_notes(self, rows: list[dict[str, Any]]) -> list[str]:
        """Short lines ``harness run`` prints under its summary table of this template's ``rows`` (results
        rows), e.g. the chance level of the headline score.  Cheap: no files read.  Default: none."""
        return []

    def usage_estimate(self, params: BaseModel, profile: Any) -> dict[str, Any] | None:
        """Expected model usage of one episode of these params by agent profile ``profile`` when no earlier
        run says (``harness plan``): ``{"prompt_tokens", "cached_tokens", "completion_tokens"}`` (prompt
        includes cached), optionally ``"source"`` (where the numbers come from) and
        ``"reported_cost_usd": [low, high]`` (a published per-episode cost range).  Default None: unknown."""
        return None

    def inputs_digest(self, params: BaseModel, episode: str, key_dir: Path | None) -> str | None:
        """A short digest of what the episode's inputs were made from (e.g. the sample ids and noise seeds
        of a generated pool), recorded in the row's ``inputs_digest`` so that two rows can be told to have
        seen the same inputs.  Called once the episode's inputs are written: ``key_dir`` is the agent
        episode's answer key folder (None for in-harness episodes).  Default None: the template gives none."""
        return None

    def model_rescoring(self, params: BaseModel, run_dir: Path,
                        model: dict[str, Any]) -> list[tuple[str, float | None, Callable[[], str]]]:
        """What ``harness rescore`` may recompute for these params' episodes in ``run_dir`` only by calling a
        model (an LLM judge's verdicts): ``(description, estimated cost in USD or None, run)`` per piece of
        work, ``run()`` doing it and returning one line to print.  ``harness rescore`` prints each
        description and estimate and calls ``run`` only with ``--yes``.  ``model``: the command's
        ``{"backend": NAME or None, "options": {...}}`` (e.g. the ``script`` of a backend answering from a script).
        Default: nothing (the template's scoring calls no model)."""
        return []

    def finish(self, params: BaseModel, rows: list[dict[str, Any]], run_dir: Path) -> dict[str, Any]:
        """After a run's episodes of these params: write run-level files (e.g. submission files) from
        ``rows``; returns a JSON-able summary stored in ``run.json`` (default: nothing).  Two keys are
        read by the runner and not stored: ``messages`` (lines printed at the end of the run) and
        ``invalid_exports`` (paths, relative to ``run_dir``, of files written for others that failed
        their validation: the run command then fails, after the results are written)."""
        return {}


class AgentTaskTemplate(TaskTemplate):
    """A template whose episodes an agent runs in a sandbox: it writes each episode's workspace and hidden
    answer key (never mounted into a sandbox), then scores what the agent left in the workspace.  Bad agent
    output is scored with a recorded reason, never raised.  Conformance kit:
    :class:`harness.testing.AgentTaskTemplateTests`."""

    #: The template implements :meth:`write_privileged` (agents with ``privileged_inputs`` may run on it).
    privileged_inputs: bool = False

    @abstractmethod
    def materialize(self, params: BaseModel, episode: str, workspace: Path, key_dir: Path) -> Materialized:
        """Write the agent-visible files to ``workspace`` and the answer key to ``key_dir``."""

    @abstractmethod
    def score(
        self, params: BaseModel, episode: str, workspace: Path, key_dir: Path, run_submission: SubmissionRunner
    ) -> EpisodeScore:
        """Score the agent's output left in ``workspace`` against ``key_dir``."""

    def submission_problem(self, params: BaseModel, episode: str, score: EpisodeScore) -> str | None:
        """Why the agent's output that :meth:`score` scored as ``score`` is no valid submission, as one sentence
        (e.g. ``results.json not found``, or every prediction invalid: an accuracy of 0 over invalid labels is
        not an answer); None when it is one.  Read from ``score`` only (no files).  The agent conformance kit
        (:class:`harness.testing.AgentTests`) fails an agent whose episode gives a problem, and fails on a
        template that does not implement this (the default, which returns None, cannot tell)."""
        return None

    def conformance_params(self) -> BaseModel | None:
        """Small params of one cheap episode (seconds to prepare and run, no model, direct answers) that the
        agent conformance kit runs an agent on when its author names no template; None (the default): this
        template offers none.  Must need only plugins that ship with the template's own distribution."""
        return None

    def write_privileged(self, params: BaseModel, episode: str, workspace: Path, key_dir: Path) -> None:
        """Add the privileged inputs to a materialized ``workspace``; called only for agents
        that declare ``privileged_inputs`` (default: the template has none)."""
        raise NotImplementedError(f"template {self.name!r} has no privileged inputs")

    def input_references(self, params: BaseModel, episode: str, root: Path) -> dict[str, dict[str, Any]]:
        """The inputs of the episode in folder ``root`` that can be kept by reference (:mod:`harness.inputs`):
        each file's path relative to ``root`` (posix, e.g. ``workspace/test_samples/ab12.parquet``,
        ``key/heldout_samples/x.parquet``) -> a JSON-able reference that :meth:`rebuild_input` rebuilds it
        from, optionally with a ``"source"`` string naming where it comes from (e.g. ``"pool seed 0
        (simulator v3)"``; error messages name it).  Called once the inputs are written (after
        :meth:`materialize` and :meth:`write_privileged`).  Default ``{}``: every file is kept as it is."""
        return {}

    def rebuild_input(self, params: BaseModel, episode: str, reference: dict[str, Any], dest: Path) -> None:
        """Write the file that ``reference`` (from :meth:`input_references`) names again, at ``dest`` (whose
        suffix is the original file's).  Per file: rebuilding one input must not cost the work of rebuilding
        all of them.  Raises (any exception) when it cannot; the caller names the run and the source.
        Default: NotImplementedError (a template that gives references must implement it)."""
        raise NotImplementedError(f"template {self.name!r} cannot rebuild its inputs")

    def input_values_digest(self, path: Path) -> str:
        """A hex digest of what file ``path`` holds, compared between an input as written and as rebuilt:
        of its decoded values where the bytes embed more than them (a Parquet file embeds the writer's
        version).  Default: sha256 of the bytes."""
        import hashlib

        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def needs_agent_profile(self, params: BaseModel) -> bool:
        """True when these episodes need an agent profile named by the user (``--agent`` or an
        experiment's ``agents``): no default agent fits them (e.g. deep-research episodes).  Default False."""
        return False

    def default_agent(self, params: BaseModel) -> str | None:
        """The agent profile name (``agent_profiles/NAME.yaml``) that ``harness run --task`` uses for
        these sandboxed episodes when no ``--agent`` is given; None (the default): ``--agent`` is required."""
        return None


class InHarnessTaskTemplate(TaskTemplate):
    """A template whose episodes run in the harness process, with no sandbox and no agent (e.g. a forecaster
    on a forecasting task): :meth:`run_in_harness` runs one and scores it.  Its rows carry the row key and
    its ``result_columns`` only (``agent_episode_columns`` False), among which it declares ``status``.
    Conformance kit: :class:`harness.testing.InHarnessTaskTemplateTests`."""

    agent_episode_columns: bool = False

    def runs_in_harness(self, params: BaseModel) -> bool:
        return True

    @abstractmethod
    def run_in_harness(self, params: BaseModel, episode: str, folder: Path, profile: Any,
                       model: Any = None) -> EpisodeScore:
        """Run one in-harness episode, writing its files under ``folder``; ``metrics`` become the results
        row's columns (a ``status`` among them: ``failed`` is written there when this raises).  Failures of
        the model under test are scored, never raised.  ``model``: a :class:`harness.ModelClient` on the
        run's proxy for the profile :meth:`model_profile` names (rate-limited and priced with the run's other
        model calls; logs under ``folder/proxy/``); None when the episode calls no model (the argument is
        then not passed)."""

    def rescore_in_harness(self, params: BaseModel, episode: str, folder: Path,
                           row: dict[str, Any]) -> EpisodeScore:
        """Score again, with today's code, the in-harness episode whose files are in ``folder`` and whose
        results row is ``row`` (``harness rescore``), without running the model under test again: its
        ``metrics`` replace the row's score columns.  Raises NotImplementedError (the default) when the
        template cannot: ``harness rescore`` then leaves such episodes as they are and says why."""
        raise NotImplementedError(f"template {self.name!r} cannot score its in-harness episodes again without "
                                  "running them again")

    def model_settings(self, params: BaseModel) -> dict[str, Any]:
        """For episodes that call a model: the params' own model settings, ``{"backend": NAME or None,
        "options": {...} (e.g. ``{"script": FILE}``), "budget": Budget or None (per-call caps)}``; the run's
        ``--model-backend`` and ``--script`` take precedence.  Default ``{}``."""
        return {}

    def profile_problem(self, params: BaseModel, profile: Any) -> str | None:
        """Why these episodes cannot run with agent profile ``profile`` (``--agent``, an experiment's
        ``agents``; None: none given), as one sentence naming the profile or field: a profile given that no
        episode would use, or none given where one is needed.  ``harness run`` refuses the run before writing
        anything.  Default None (no problem)."""
        return None

    def model_profile(self, params: BaseModel, episode: str, profile: Any) -> Any | None:
        """The agent profile whose model episode ``episode`` calls through the model proxy (its prices and
        past usage give ``harness plan``'s estimate), given ``profile`` (``--agent``, an experiment's
        ``agents``; None: none given); None when the episode calls no model (e.g. a statistical forecaster).
        Raises ValueError when the episode calls a model and no profile can be chosen.  Default None."""
        return None


ParamsFactory = Callable[[dict], "BaseModel"]

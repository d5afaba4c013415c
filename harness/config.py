"""Configuration models: TaskSpec, AgentProfile, RunSettings, ExperimentSpec (pydantic, ``extra="forbid"``).

Every loader turns a malformed file into a :class:`ConfigError` naming the file,
the field path and what was expected.
"""

from __future__ import annotations

import glob
import types
import typing
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from harness.errors import ConfigError  # noqa: F401 - defined there so that raising one needs no pydantic
from harness.spec_bounds import (MAX_YAML_BYTES, MAX_YAML_DEPTH, SHOWN_CHARS, SHOWN_PROBLEMS, shorten,  # noqa: F401
                                 show_value, yaml_bounds_problem)

#: the folder holding the shipped ``tasks/`` and ``agent_profiles/``
REPO_ROOT = Path(__file__).resolve().parent.parent


class Strict(BaseModel):
    """Base for every config model: unknown fields are errors.

    Validators are built on a model's first use (``defer_build``), not when its module is imported: a
    command that never reads a spec (``harness plugins list``) does not pay for building some forty of them.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Prices(Strict):
    """USD per 1M tokens, as the provider lists them (input, cached input, output)."""

    input: float = Field(0.0, ge=0, description='USD per 1M uncached input tokens')
    cached: float = Field(0.0, ge=0, description='USD per 1M cached input tokens')
    output: float = Field(0.0, ge=0, description='USD per 1M output tokens (reasoning included)')

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """Token cost: ((T_prompt - T_cached) p_in + T_cached p_cached + T_completion p_out) / 1e6.

        ``prompt_tokens`` includes the cached tokens.
        """
        return ((prompt_tokens - cached_tokens) * self.input + cached_tokens * self.cached
                + completion_tokens * self.output) / 1e6


class AgentProfile(Strict):
    """An evaluated agent configuration: platform (agent plugin), model, settings, prices.

    In a file (:func:`load_profile`) ``name`` is the file's stem; ``agent`` is the one required field.
    """

    name: str = Field(description="the profile's name; in a file, its stem (if given, it must equal the file name)")
    agent: str = Field(description="plugin the profile configures: an agent (or a forecaster or judge), e.g. my-agent")
    model: str | None = Field(None, description='model name sent to the provider; null for agents that call no model')
    provider: Literal["anthropic", "openai", "google", "openrouter", "custom"] | None = Field(None, description='model backend the proxy forwards to: anthropic, openai, google, openrouter or custom')
    base_url: str | None = Field(None, description='upstream base URL for the custom backend (an OpenAI-compatible server)')
    reasoning_effort: Literal["low", "medium", "high", "xhigh"] | None = Field(None, description='reasoning effort the agent asks the model for')
    image_support: bool = Field(False, description='whether the model reads images (agents may then inspect plots)')
    prices: Prices = Field(Prices(), description='USD per 1M tokens used to price the episode')
    options: dict[str, Any] = Field(default_factory=dict, description='plugin-specific options (limits, flags), recorded in run.json')


class Budget(Strict):
    """Per-episode caps enforced by the model proxy (None: no cap)."""

    max_requests: int | None = Field(None, ge=1, description='model requests one episode may make; then the proxy refuses (429)')
    max_tokens: int | None = Field(None, ge=1, description='total tokens one episode may spend')
    max_cost_usd: float | None = Field(None, gt=0, description="USD one episode may spend at its profile's prices")


class RateLimit(Strict):
    """Limits on one provider's model traffic, shared by every concurrent episode of a run (enforced in the
    proxy by :class:`harness.limits.RateLimiter`; a request over a limit waits, none fails).

    ``requests_per_min``/``tokens_per_min`` count upstream requests and their total tokens (prompt +
    completion) in any sliding window of ``window_s`` seconds (60 by default; shorter in tests);
    ``max_concurrent``: model requests in flight at once.  None: no limit.
    """

    requests_per_min: int | None = Field(None, ge=1, description='upstream requests in any sliding window of window_s seconds; null: no limit')
    tokens_per_min: int | None = Field(None, ge=1, description='prompt + completion tokens in any sliding window of window_s seconds; null: no limit')
    max_concurrent: int | None = Field(None, ge=1, description='model requests in flight at once; null: no limit')
    window_s: float = Field(60.0, gt=0, description='length of the sliding window, seconds')


class RunSettings(Strict):
    """How episodes run.  ``episode_timeout`` defaults to 3,600 s (one hour per episode).

    ``jobs``: episodes run in parallel (``--jobs``); ``sandbox_starts``: sandboxes being created at once,
    bounded apart from ``jobs`` so a burst of episodes does not overload the container engine;
    ``rate_limits``: per provider (the profile's ``provider``, or the ``--model-backend`` name),
    see :class:`RateLimit`; ``max_run_cost_usd``: the run's cost cap (no new episode starts once the
    finished episodes' ``cost_usd`` reaches it; running ones finish under their own ``budget``).

    The model proxy's own memory and disk are bounded apart from the agent's: ``proxy_inflight_mb``, the
    request bodies all of the run's proxies hold at once (a request that would pass it waits for room; one
    larger than it is refused with 413); ``proxy_log_mb``, the bodies one episode's proxy log stores in full,
    counted uncompressed (past it a body is stored as a short prefix with ``truncated``, ``size`` and ``sha256``;
    the log is stored compressed, and stays under the reader's 1 GiB of uncompressed lines whatever this is).
    """

    jobs: int = Field(1, ge=1, description='episodes run in parallel (--jobs)')
    sandbox_starts: int = Field(2, ge=1, description='sandboxes being created at once, bounded apart from jobs')
    rate_limits: dict[str, RateLimit] = Field(default_factory=dict, description='per provider (profile provider or --model-backend name): shared request and token limits')
    max_run_cost_usd: float | None = Field(None, gt=0, description='USD: no new episode starts once finished episodes cost this much (--max-cost)')
    infra_backoff_s: float = Field(2.0, ge=0, description='seconds before the first retry after an infrastructure failure (doubles each retry)')
    proxy_inflight_mb: int = Field(1024, ge=1, description="MiB of request bodies all of a run's proxies hold at once; larger requests get 413")
    proxy_log_mb: int = Field(256, ge=0, description="MiB of bodies (uncompressed) one episode's proxy log stores in full; past it a prefix and sha256")

    episode_timeout: float = Field(3600.0, gt=0, description="seconds of wall clock for the agent's whole run")
    sandbox: str = Field("auto", description='auto | bubblewrap | unshare | docker | none')
    cpus: float = Field(2.0, gt=0, description='CPU share of a sandbox (Docker only; local backends do not enforce it)')
    memory_mb: int = Field(4096, ge=64, description="MiB: total memory of all of a sandbox's processes")
    pids: int = Field(512, ge=16, description='processes and threads of a sandbox at once')
    tmp_mb: int = Field(1024, ge=16, description="MiB: size of the sandbox's private /tmp and of its /dev/shm")
    workspace_mb: int = Field(10240, ge=16, description="MiB: most an agent may write into its workspace; past it the agent is stopped")
    rule_call_timeout: float = Field(30.0, gt=0, description='seconds per predict(df) call of a programmatic submission')
    rule_budget: float = Field(600.0, gt=0, description='seconds for all predict(df) calls of one episode; then the rest are scored wrong')
    rule_memory_mb: int = Field(1024, ge=64, description='MiB: memory of the rule.py worker')
    infra_retries: int = Field(2, ge=0, description='retries of an episode after an infrastructure failure (sandbox start, provider)')
    budget: Budget = Field(Budget(), description='model-proxy caps per episode; null fields: no cap')
    keep_inputs: bool = Field(False, description="keep every generated input file in the episode folders (--keep-inputs); default: those the agent left unchanged are dropped at the end of the episode and rebuilt on demand (harness.inputs)")
    retry_failed: bool = Field(False, description="on resume, run again the episodes whose kept row has status failed (the agent or forecaster failed; --retry-failed); default: a finished failure is a result and is kept")


class TaskSpec(Strict):
    """A YAML task spec under ``tasks/``: a template name and its parameters."""

    name: str = Field(description="the spec's name (task column of every row; part of each episode id)")
    description: str = Field("", description='free text shown by harness tasks list')
    template: str = Field(description='registered task template that materialises the episodes (harness plugins list)')
    params: dict[str, Any] = Field(default_factory=dict, description="the template's parameters (its docs list them); --set overrides them by dotted path")


def format_validation_error(exc: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem: ``field.path: message (got: value)``; values and messages are quoted as a
    short prefix (:func:`show_value`), and at most :data:`SHOWN_PROBLEMS` problems are listed."""
    lines = []
    errors = exc.errors(include_url=False, include_context=False, include_input=True)
    for err in errors[:SHOWN_PROBLEMS]:
        loc = shorten(".".join(str(p) for p in (prefix, *err["loc"]) if p != ""), 2 * SHOWN_CHARS)
        shown = "" if err["type"] == "missing" else f" (got: {show_value(err.get('input'))})"
        message = shorten(err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, "), 400)
        lines.append(f"{loc or '<root>'}: {message}{shown}")
    if len(errors) > SHOWN_PROBLEMS:
        lines.append(f"and {len(errors) - SHOWN_PROBLEMS} more")
    return lines


#: libyaml's safe loader when PyYAML was built with it (same documents, several times faster), else PyYAML's
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(path: Path | str, max_bytes: int = MAX_YAML_BYTES) -> Any:
    """Read a YAML (or JSON) document; ConfigError naming the file (and line) when unreadable, not UTF-8,
    invalid, larger than ``max_bytes``, or over the bounds of :func:`harness.spec_bounds.yaml_bounds_problem`
    (values with aliases expanded, nesting; checked in bounded time and memory)."""
    path = Path(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise ConfigError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    if len(raw) > max_bytes:
        raise ConfigError(path, [f"larger than {max_bytes // (1024 * 1024)} MiB; a spec is a short text file"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(path, [f"not UTF-8 (byte 0x{raw[exc.start]:02x} at line {line}, offset {exc.start}); "
                                 "save the file as UTF-8"]) from None
    try:
        data = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        if getattr(exc, "problem", None) == "exceeded maximum nesting depth":  # libyaml's own bound (1000 levels)
            raise ConfigError(path, [f"nested deeper than {MAX_YAML_DEPTH} levels"]) from None
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(path, [f"{where}invalid YAML: {shorten(str(getattr(exc, 'problem', exc)), 120)}"]) \
            from None
    except RecursionError:
        raise ConfigError(path, [f"nested deeper than {MAX_YAML_DEPTH} levels"]) from None
    problem = yaml_bounds_problem(data)
    if problem:
        raise ConfigError(path, [problem])
    return data


def read_yaml(path: Path | str) -> dict:
    """Read a YAML mapping; ConfigError when the file is missing, unparsable or not a mapping."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(path, [f"<root>: expected a mapping of fields, got {type(data).__name__}"])
    return data


def parse(model: type[BaseModel], data: dict, file: Path | str, prefix: str = "") -> Any:
    """Validate ``data`` against ``model``; ConfigError naming ``file`` and each field path.

    A boolean field takes ``true``/``false`` only: a string (``"yes"``, ``"off"``, ``"0"``), which pydantic
    would coerce, is refused (a quoted ``"false"`` silently read as a choice is how a spec says what it did
    not mean)."""
    problems = string_bools(model, data, prefix)
    if problems:
        raise ConfigError(file, problems[:SHOWN_PROBLEMS])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(file, format_validation_error(exc, prefix)) from None


def string_bools(model: type[BaseModel], data: Any, prefix: str = "") -> list[str]:
    """Problems (``field.path: ...``) for each string given to a boolean field of ``model`` (and of the
    models nested in it, when given as mappings)."""
    problems: list[str] = []
    if not isinstance(data, dict):
        return problems
    for name, info in model.model_fields.items():
        key = info.alias or name
        if key not in data:
            continue
        value, annotation = data[key], info.annotation
        union = typing.get_origin(annotation) in (typing.Union, types.UnionType)
        kinds = set(typing.get_args(annotation)) if union else {annotation}
        where = f"{prefix}.{key}" if prefix else key
        if bool in kinds and str not in kinds and isinstance(value, str):
            problems.append(f"{where}: expected true or false, not a string (got: {show_value(value)})")
        for kind in kinds:
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                problems += string_bools(kind, value, where)
    return problems


def load_profile(path: Path | str) -> AgentProfile:
    """Load an agent profile YAML.  Its name is the file's stem (``agent_profiles/NAME.yaml``), the name
    ``--agent NAME`` finds it by and rows record; a ``name:`` field is optional and, if given, must equal
    the stem (one name per profile: a differing ``name:`` is a ConfigError naming the file and field)."""
    path = Path(path)
    data = read_yaml(path)
    if data.setdefault("name", path.stem) != path.stem:
        raise ConfigError(path, [f"name: must be the file's name {path.stem!r} (got: {data['name']!r}); "
                                 f"drop the field or rename the file to {data['name']}{path.suffix}"])
    return parse(AgentProfile, data, path)


def load_task_spec(path: Path | str) -> TaskSpec:
    """Load a TaskSpec YAML (the template's ``params`` are validated by :func:`task_params`)."""
    return parse(TaskSpec, read_yaml(path), path)


def task_params(spec: TaskSpec, params_model: type[BaseModel], file: Path | str) -> BaseModel:
    """Validate ``spec.params`` against the template's model; errors name ``params.<field>``."""
    return parse(params_model, spec.params, file, prefix="params")


def path_component(value: str) -> str:
    """A name used as one folder name under a run's root (an experiment's, a stage's): letters, digits,
    ``_``, ``.``, ``-``, and not ``.`` or ``..`` (which would name the root itself or its parent)."""
    if value.strip(".") == "":
        raise ValueError("must name a folder: letters, digits, '_', '-', '.', not only dots")
    return value


class AxisEntry(Strict):
    """One entry of a template-declared experiment axis (``TaskTemplate.experiment_axis``): a registered name
    and its options (a bare name is ``{name: NAME}``)."""

    name: str = Field(min_length=1, description='a registered name (e.g. a forecaster)')
    options: dict[str, Any] = Field(default_factory=dict, description='options handed to it')


class AxisSpec(BaseModel):
    """Experiment fields besides the named ones are a template-declared axis of models under test
    (``TaskTemplate.experiment_axis``, e.g. ``models: [a, {name: b, options: {...}}]``): at most one, a list
    of :class:`AxisEntry`, not beside ``agents``.  Which templates declare it is checked when the stage's
    tasks are loaded (:func:`harness.experiment.expand_stage`)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _entries(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        extra = [k for k in data if k not in cls.model_fields]
        if len(extra) > 1:
            raise ValueError(f"unknown fields {', '.join(map(repr, extra))}: an experiment has at most one axis "
                             "of models under test besides agents")
        out = dict(data)
        for key in extra:
            value = out[key]
            if not isinstance(value, list):
                raise ValueError(f"{key}: an axis of models under test is a list of names or {{name, options}}")
            out[key] = tuple(AxisEntry.model_validate({"name": v} if isinstance(v, str) else v) for v in value)
        return out

    @property
    def axis(self) -> tuple[str, tuple[AxisEntry, ...]] | None:
        """``(field, entries)`` of the template-declared axis given (None: none or empty)."""
        for key, value in (self.model_extra or {}).items():
            if value:
                return key, value
        return None

    def _one_axis(self) -> None:
        if self.agents and self.axis:
            raise ValueError(f"give agents or {self.axis[0]}, not both (an entry of {self.axis[0]} is the model "
                             "under test)")


class StageSpec(AxisSpec):
    """One stage of an :class:`ExperimentSpec`: a grid of episodes (see there)."""

    name: str = Field("main", min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description='stage name: the sub-folder of the run directory')
    tasks: list[str] = Field(min_length=1, description='task spec files or glob patterns, relative to the experiment file')
    agents: list[str] = Field(default_factory=list, description='agent profile names or paths')
    seeds: list[int] = Field(default_factory=list, description="repetition seeds (default: each spec's own seed)")
    set: dict[str, Any] = Field(default_factory=dict, description='param overrides for every task (dotted paths)')
    grid: dict[str, list[Any]] = Field(default_factory=dict, description='param axes: their cartesian product')
    evidence_from: str | None = Field(None, description="an earlier stage whose agents' episodes are this stage's evidence")
    scripts: dict[str, str] = Field(default_factory=dict, description='agent profile -> its own model script file (as --script, per agent)')

    @field_validator("name")
    @classmethod
    def _folder(cls, value: str) -> str:
        return path_component(value)

    @field_validator("seeds")
    @classmethod
    def _seeds(cls, value: list[int]) -> list[int]:
        if any(s < 0 for s in value):
            raise ValueError("repetition seeds are non-negative integers")
        if len(set(value)) != len(value):
            raise ValueError("a seed is listed twice")
        return value

    @field_validator("grid")
    @classmethod
    def _grid(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in value.items():
            if not values:
                raise ValueError(f"{key}: a grid axis needs at least one value")
        return value

    @model_validator(mode="after")
    def _checked(self) -> "StageSpec":
        self._one_axis()
        return self


class ExperimentSpec(AxisSpec):
    """An experiment: a YAML file under ``tasks/experiments/`` run by ``harness run --experiment FILE``.

    It expands a grid into episodes, all written to one run directory
    (default ``runs/<name>``; with stages, one sub-directory per stage)::

        name: my-grid                      # the run directory's default name
        description: ...
        tasks:                             # task spec files or glob patterns, relative to this file
          - ../<benchmark>/<spec>.yaml
          - ../<benchmark>/<prefix>-*.yaml
        agents: [my-agent]                 # agent profile names or paths (sandboxed agents) ...
        models: [my-model, {name: other-model, options: {model: /models/some-model}}]
                                           # ... or the axis of models under test the tasks' template declares
                                           # (TaskTemplate.experiment_axis, here "models"); not both
        seeds: [0, 1]                      # repetition seeds (default: each spec's own seed)
        set: {noise: high}                 # param overrides applied to every task (dotted paths into params)
        grid: {samples: [25, 100]}         # param axes: the cartesian product of their values

    Episodes are tasks × (agents | axis entries) × grid points × seeds × the
    template's own episodes.  An axis entry sets the task's parameter of the
    axis's name to that one entry.  Each episode's id is a short hash of its
    canonical content: the task spec's name and template, the template's identity
    of the episode (its params after the overrides, narrowed to the episode), the
    profile (name and content) and the seed, so reordering or extending a grid
    never changes an existing id and a re-run resumes by id (``results.parquet``
    holds each id once).  Two specs brought to the same settings by ``set`` or
    ``grid`` give equal episodes under different ids: both run, and ``harness
    plan``/``run`` warn (:func:`harness.experiment.repeated_settings`).

    **Stages.**  Instead of the top-level grid, ``stages`` lists named grids
    (the same fields) run in order, each into ``<run dir>/<stage name>/``::

        stages:
          - name: research
            tasks: [../<benchmark>/<research-spec>.yaml]
            agents: [my-research-agent]
          - name: forecast
            tasks: [../<benchmark>/<forecast-spec>.yaml]
            models: [my-model]
            set: {contexts: [<evidence-condition>]}
            evidence_from: research

    ``evidence_from: S`` (S an earlier stage) runs this stage's grid once per
    agent profile (or axis entry) of stage S, with the parameter its template
    declares (``TaskTemplate.evidence_param``) of each task set to
    ``{"run": "<run dir>/S", "agent": "<that profile's name>"}``.
    The evidence source is therefore part of the episode's content (its id) and
    of its results row.  A template that reads evidence takes it from that run
    directory: the episodes (``episodes/*/row.json``) whose row's ``profile`` is
    the agent (what the research episodes' scoring wrote).  A stage that
    produces evidence therefore writes one episode per (agent, task); the
    shipped experiments under ``tasks/experiments/`` include such a spec.

    ``scripts: {AGENT: FILE}`` (a stage's agents, files relative to this file)
    gives an agent profile its own model script (the ``script`` option of a
    model backend that answers from a script, as ``--script`` does for a whole
    run), over ``--script``: agents that speak different protocols can share
    one offline run.

    Errors are :class:`ConfigError` naming the file and the field.
    """

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$", description="the run directory's default name (runs/<name>)")
    description: str = Field("", description='free text shown by harness tasks list')
    tasks: list[str] = Field(default_factory=list, description='task spec files or glob patterns, relative to this file')
    agents: list[str] = Field(default_factory=list, description="agent profile names or paths (or the template's declared axis, not both)")
    seeds: list[int] = Field(default_factory=list, description="repetition seeds (default: each spec's own seed)")
    set: dict[str, Any] = Field(default_factory=dict, description='param overrides for every task (dotted paths)')
    grid: dict[str, list[Any]] = Field(default_factory=dict, description='param axes: their cartesian product')
    stages: list[StageSpec] = Field(default_factory=list, description='named grids run in order, each into <run dir>/<stage>/ (instead of the top-level grid)')

    @field_validator("name")
    @classmethod
    def _folder(cls, value: str) -> str:
        return path_component(value)

    @model_validator(mode="after")
    def _stages(self) -> "ExperimentSpec":
        top = {k for k in ("tasks", "agents", "seeds", "set", "grid") if getattr(self, k)}
        top |= {self.axis[0]} if self.axis else set()
        if self.stages and top:
            raise ValueError(f"give stages or a top-level grid, not both (top-level: {', '.join(sorted(top))})")
        if not self.stages and not self.tasks:
            raise ValueError("tasks: give at least one task spec (or stages)")
        self._one_axis()
        seen: list[str] = []
        for stage in self.stages:
            if stage.name in seen:
                raise ValueError(f"stages: the stage name {stage.name!r} is used twice")
            if stage.evidence_from is not None and stage.evidence_from not in seen:
                raise ValueError(f"stages: {stage.name}.evidence_from: {stage.evidence_from!r} is not an earlier "
                                 f"stage (earlier: {', '.join(seen) or 'none'})")
            seen.append(stage.name)
        return self

    def stage_list(self) -> list[StageSpec]:
        """The stages to run (the top-level grid is one stage named ``main``)."""
        if self.stages:
            return list(self.stages)
        axis = {self.axis[0]: [e.model_dump(mode="json") for e in self.axis[1]]} if self.axis else {}
        return [StageSpec(tasks=self.tasks, agents=self.agents, seeds=self.seeds, set=self.set, grid=self.grid,
                          **axis)]


def load_experiment(path: Path | str) -> ExperimentSpec:
    """Load an experiment spec YAML (task files are resolved by :mod:`harness.experiment`)."""
    return parse(ExperimentSpec, read_yaml(path), path)


def task_files(patterns: list[str], base: Path, file: Path | str, field: str = "tasks") -> list[Path]:
    """Task spec files of ``patterns`` (paths or globs relative to ``base``), in order, each once."""
    out: list[Path] = []
    for i, pattern in enumerate(patterns):
        full = Path(pattern).expanduser()
        full = full if full.is_absolute() else base / full
        hits = sorted(Path(p) for p in glob.glob(str(full), recursive=True)) if glob.has_magic(str(full)) else \
            ([full] if full.is_file() else [])
        if not hits:
            raise ConfigError(file, [f"{field}[{i}]: no task spec matches {pattern!r} (relative to {base})"])
        out += [p for p in hits if p not in out]
    return out

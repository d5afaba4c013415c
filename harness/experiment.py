"""Experiment grids -> episodes with stable ids (``harness run --experiment FILE``; ``--set``).

:func:`expand_stage` turns one stage of an :class:`harness.config.ExperimentSpec`
into :class:`Unit` s (task spec after overrides × profile × seed);
:func:`episode_id` gives each of their episodes a short hash of its canonical
content.  The format and the stage/``evidence_from`` contract are documented
on :class:`harness.config.ExperimentSpec`.
"""

from __future__ import annotations

import copy
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from harness.config import AgentProfile, ConfigError, ExperimentSpec, StageSpec, task_files
from harness.contracts import TaskTemplate
from harness.errors import HarnessError
from harness.store import inside

#: Hex digits of an episode id (48 bits: no collision expected below ~10^6 episodes per run directory).
ID_LENGTH = 12


@dataclass
class Unit:
    """One grid point: a task spec after overrides, an agent profile (None: the template needs none), a seed
    (None: the spec's own)."""

    task: Any  # harness.run.LoadedTask
    profile: AgentProfile | None
    seed: int | None
    #: model-backend options of this unit's profile (a stage's ``scripts``), over the command line's
    model_options: dict[str, Any] = field(default_factory=dict)


def set_dotted(params: dict, key: str, value: Any) -> dict:
    """A copy of ``params`` with the dotted path ``key`` (e.g. ``budget.max_cost_usd``) set to ``value``."""
    out = copy.deepcopy(params)
    parts = key.split(".")
    node = out
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = {}
            node[part] = child
        node = child
    node[parts[-1]] = copy.deepcopy(value)
    return out


def apply_overrides(params: dict, overrides: dict[str, Any]) -> dict:
    """``params`` with every dotted-path override applied, in order."""
    for key, value in overrides.items():
        params = set_dotted(params, key, value)
    return params


def parse_set(items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``--set key=value`` items -> overrides; values are read as YAML (``3``, ``true``, ``[a, b]``)."""
    out = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip().removeprefix("params.")
        if not sep or not key:
            raise ConfigError("--set", [f"{item!r}: expected key=value (a dotted path into the task's params)"])
        try:
            out[key] = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError("--set", [f"{key}: value is not valid YAML ({exc})"]) from None
    return out


def task_title(name: str, overrides: dict[str, Any] | None) -> str:
    """A task spec's name with the overrides it ran under, as given: ``spec-a [noise=high
    n_test=20]`` (values as compact JSON unless plain strings); the bare name without overrides."""
    if not overrides:
        return name
    shown = " ".join(f"{k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}"
                     for k, v in overrides.items())
    return f"{name} [{shown}]"


def canonical(data: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace (what episode ids hash)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def episode_id(task_name: str, template: TaskTemplate, params: BaseModel, episode: str,
               profile: AgentProfile | None) -> str:
    """Short hash of an episode's canonical content: task spec name, template, the template's identity of
    the episode (params after overrides, including the seed, narrowed to the episode) and the profile
    (name and content).  Independent of the grid's order and size."""
    content = {"task": task_name, "template": template.name,
               "episode": template.episode_identity(params, episode),
               "profile": profile.model_dump(mode="json") if profile is not None else None}
    return hashlib.sha256(canonical(content).encode()).hexdigest()[:ID_LENGTH]


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The cartesian product of the grid's axes as override dicts (one empty dict for no axes)."""
    points: list[dict[str, Any]] = [{}]
    for key, values in grid.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def expand_stage(stage: StageSpec, file: Path | str, resolve_profile, load_task,
                 evidence: list[dict[str, str]] | None = None) -> list[Unit]:
    """The units of one stage: tasks × (agents | axis entries) × grid × evidence sources, each with its seeds.

    ``resolve_profile(name)`` and ``load_task(path, overrides)`` come from :mod:`harness.run`;
    ``evidence``: ``{"run", "agent"}`` sources from the stage named by ``evidence_from``, written into the
    param each task's template declares (``TaskTemplate.evidence_param``).  An axis of models under test
    (``stage.axis``) must be the one each task's template declares (``TaskTemplate.experiment_axis``);
    each entry sets that param to the one entry.
    """
    base = Path(file).resolve().parent
    prefix = f"stages.{stage.name}." if stage.name != "main" else ""
    files = task_files(stage.tasks, base, file, f"{prefix}tasks")
    profiles: list[AgentProfile | None] = [None]
    if stage.agents:
        profiles = []
        for i, name in enumerate(stage.agents):
            path = base / name
            try:
                profiles.append(resolve_profile(str(path) if path.suffix in (".yaml", ".yml") and path.exists()
                                                else name))
            except (HarnessError, ConfigError) as exc:
                raise ConfigError(file, [f"{prefix}agents[{i}]: {exc}"]) from None
    scripts = {}
    for name, script in stage.scripts.items():
        if name not in stage.agents:
            raise ConfigError(file, [f"{prefix}scripts.{name}: not one of this stage's agents {stage.agents}"])
        path = Path(script).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ConfigError(file, [f"{prefix}scripts.{name}: no such script {script!r} (relative to {base})"])
        scripts[name] = {"script": str(path.resolve())}
    axis, entries = stage.axis or (None, ())
    entry_list: list[dict | None] = [e.model_dump(mode="json") for e in entries] or [None]
    sources: list[dict | None] = list(evidence) if evidence else [None]
    units = []
    for path in files:
        template = _template_of(path, file, f"{prefix}tasks")
        if axis is not None and template.experiment_axis != axis:
            raise ConfigError(file, [f"{prefix}{axis}: template {template.name!r} of {path} declares "
                                     + (f"the axis {template.experiment_axis!r}" if template.experiment_axis
                                        else "no axis of models under test") + " (TaskTemplate.experiment_axis)"])
        if evidence and template.evidence_param is None:
            raise ConfigError(file, [f"{prefix}evidence_from: template {template.name!r} of {path} reads no "
                                     "evidence (TaskTemplate.evidence_param)"])
        for point in grid_points(stage.grid):
            for source in sources:
                for j, entry in enumerate(entry_list):
                    overrides = {**stage.set, **point}
                    if entry is not None:
                        overrides[axis] = [entry]
                    if source is not None:
                        overrides[template.evidence_param] = source
                    field = f"{prefix}{axis}[{j}]" if entry is not None else f"{prefix}tasks"
                    try:
                        task = load_task(path, overrides)
                        task.template.validate(task.params)
                    except (ConfigError, ValueError, HarnessError) as exc:
                        where = "" if isinstance(exc, ConfigError) else f"{path}: "
                        raise ConfigError(file, [f"{field}: {where}{exc}"]) from None
                    for name, profile in zip(stage.agents or [None], profiles):
                        for seed in stage.seeds or [None]:
                            units.append(Unit(task, profile, seed, scripts.get(name, {})))
    return units


def _template_of(path: Path, file: Path | str, field: str) -> Any:
    """The template the task spec at ``path`` names (its params are checked later, with the overrides);
    errors name ``field``."""
    from harness.config import load_task_spec
    from harness.plugins import UnknownPlugin, get

    try:
        return get("task_template", load_task_spec(path).template)
    except ConfigError as exc:
        raise ConfigError(file, [f"{field}: {exc}"]) from None
    except UnknownPlugin as exc:
        raise ConfigError(file, [f"{field}: {path}: template: {exc}"]) from None


def with_seed(task, seed: int | None) -> Any:
    """The params of ``task`` (a loaded task: ``.params``, ``.template``) with the repetition seed replaced;
    HarnessError when the template has no ``seed`` parameter."""
    if seed is None:
        return task.params
    if "seed" not in type(task.params).model_fields:
        raise HarnessError(f"template {task.template.name!r} has no 'seed' parameter; drop --seed")
    return task.params.model_copy(update={"seed": seed})


def repeated_settings(units: list[Unit]) -> list[tuple[Unit, Unit]]:
    """``(repeat, first)`` for each unit of one stage whose template, params after overrides (the seed
    included), profile and model options equal an earlier unit's under another task spec name.

    Episode ids hash the spec name (:func:`episode_id`), so such a repeat runs its episodes again under other
    ids; they are kept, not dropped (ids of existing run directories stay valid, and which spec's name to
    keep is the user's choice), and ``harness plan``/``run`` warn.  Units of the same spec name repeat each
    other's ids and run once anyway."""
    first: dict[str, Unit] = {}
    out = []
    for unit in units:
        try:
            params = with_seed(unit.task, unit.seed)
        except HarnessError:  # refused by the preflight, naming the file
            params = unit.task.params
        key = canonical([unit.task.template.name, params.model_dump(mode="json"),
                         unit.profile.model_dump(mode="json") if unit.profile is not None else None,
                         unit.model_options])
        seen = first.setdefault(key, unit)
        if seen is not unit and seen.task.spec.name != unit.task.spec.name:
            out.append((unit, seen))
    return out


def stage_dirs(spec: ExperimentSpec, root: Path) -> dict[str, Path]:
    """Run directory of each stage: ``root`` itself for a single-grid experiment, else ``root/<stage>``."""
    stages = spec.stage_list()
    if not spec.stages:
        return {stages[0].name: root}
    return {s.name: inside(root, s.name) for s in stages}


@dataclass
class PlannedStage:
    """A stage ready to run: its run directory, units and the identity recorded in ``run.json``."""

    name: str
    root: Path
    units: list[Unit]
    identity: dict[str, str]


def plan_experiment(spec: ExperimentSpec, file: Path | str, root: Path, resolve_profile,
                    load_task) -> list[PlannedStage]:
    """Every stage of ``spec`` with its units; a stage with ``evidence_from: S`` gets one evidence source
    ``{"run": <S's run dir>, "agent": <name>}`` per agent profile (or axis entry) of S."""
    dirs = stage_dirs(spec, root)
    produced: dict[str, list[str]] = {}
    out = []
    for stage in spec.stage_list():
        evidence = None
        if stage.evidence_from is not None:
            evidence = [{"run": str(dirs[stage.evidence_from].resolve()), "agent": name}
                        for name in produced[stage.evidence_from]]
        units = expand_stage(stage, file, resolve_profile, load_task, evidence)
        produced[stage.name] = [e.name for e in (stage.axis or (None, ()))[1]] or list(
            dict.fromkeys(u.profile.name for u in units if u.profile is not None))
        out.append(PlannedStage(stage.name, dirs[stage.name], units, {"experiment": spec.name, "stage": stage.name}))
    return out

"""Recompute a run's stored scores and metrics with today's code (``harness rescore RUN``).

Holding the run folder's lock (:func:`harness.runlock.writing`), for every finished episode of the run:

- an agent episode is scored again from what it left (its ``workspace/`` and ``key/``, the inputs kept by
  reference put back for the while: :func:`harness.inputs.restored`; one that no longer rebuilds as recorded
  is skipped with the :class:`~harness.inputs.InputMismatch` message) by the template's
  :meth:`~harness.contracts.AgentTaskTemplate.score`, through the run's own scoring step
  (:func:`harness.episode.score_episode`): a programmatic answer (``rule.py``) runs again in a rule sandbox
  (the episode's sandbox backend, or ``--sandbox``; started only when the scoring runs submitted code), and
  every registered metric extractor runs again on the stored ``trajectory.json``, proxy log and
  workspace (:func:`harness.episode.run_extractors`).  The trajectory is not converted again and the
  model proxy's measured usage is kept: they are records of the episode, not computations of it;
- an in-harness episode is scored again by the template's
  :meth:`~harness.contracts.InHarnessTaskTemplate.rescore_in_harness` from its stored output (e.g. a
  forecaster's sample paths), never by running the model under test again; a template that cannot leaves
  such episodes as they are;
- ``score.json`` and ``row.json`` are rewritten atomically, the row with the new ``scorer_version``,
  ``extractor_versions``, ``harness_version``/``harness_commit`` and ``rescored_at``
  (:data:`harness.columns.PROVENANCE`); ``spec_sha256`` and ``inputs_digest`` stay those of the run.

Then ``results.parquet`` is written again, each template's :meth:`~harness.contracts.TaskTemplate.finish`
runs on the new rows (exports, no-model judges), and what only a model can recompute (an LLM judge's
verdicts, :meth:`~harness.contracts.TaskTemplate.model_rescoring`) is listed with its estimated cost and
done only with ``yes``.  An episode that cannot be rescored (infrastructure failure, unknown template,
unreadable params, a rule sandbox that cannot start here) is left as it is and reported with the reason.
``run.json`` gets a ``rescores`` entry (when, which versions, how many episodes).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import plugins as plugin_registry
from harness import runlock
from harness.columns import PROVENANCE, USAGE, owners, row_parts
from harness.config import AgentProfile, RunSettings
from harness.contracts import EpisodeArtifacts, EpisodeScore, SubmissionRunner
from harness.episode import EpisodePlan, one_line, run_extractors, score_episode, write_row
from harness.errors import EpisodeError, ErrorKind, HarnessError
from harness.experiment import canonical
from harness.inputs import InputMismatch, episode_task, restored
from harness.provenance import code_columns, run_provenance
from harness.store import EpisodePaths, RunStore, finished_episodes, read_score, write_json

Event = Callable[[str, dict], None]


@dataclass
class Outcome:
    """What :func:`rescore` did: episode keys ``rescored`` (of which ``changed`` maps those whose score or
    metric values changed to ``{column: (before, after)}``), ``skipped`` ``(key, reason)``, the model work
    ``(description, estimated USD or None, what happened)`` and the invalid exports' paths."""

    rescored: list[str] = field(default_factory=list)
    changed: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    model_work: list[tuple[str, float | None, str]] = field(default_factory=list)
    invalid_exports: list[str] = field(default_factory=list)


class _LazyRunner:
    """A :class:`~harness.contracts.SubmissionRunner` made on its first call: scoring that runs no submitted
    code (a direct answer) starts no rule sandbox."""

    def __init__(self, make: Callable[[], SubmissionRunner]):
        self._make, self._runner = make, None

    def __call__(self, module: Path, function: str, inputs: list[Path]):
        if self._runner is None:
            self._runner = self._make()
        return self._runner(module, function, inputs)


def rescore(run_dir: Path | str, *, yes: bool = False, sandbox: str | None = None,
            model_backend: str | None = None, model_options: dict[str, Any] | None = None,
            on_event: Event = lambda event, data: None, wait: bool = False) -> Outcome:
    """Recompute the stored scores and metrics of the run in ``run_dir`` (module docstring).

    ``yes``: also do the work that calls a model (LLM judges), after its estimate was sent.  ``sandbox``: the
    rule sandbox backend (default: each episode's own).  ``model_backend``/``model_options``: for that model
    work (e.g. ``{"script": FILE}`` for a backend answering from a script).  Events: ``episode``
    ``{key, changed}``, ``skip`` ``{key, reason}``, ``model`` ``{description, cost_usd, run}`` (sent before the work runs),
    ``model_done`` ``{description, result}``, ``message`` ``{text}`` (the templates' ``finish``), and the
    lock's ``lock_wait``/``lock_taken_over``.  Raises :class:`HarnessError` for a folder that is not a run
    folder, :class:`harness.runlock.RunLocked` while another process writes it."""
    store = RunStore(Path(run_dir))
    if not (store.root / "run.json").is_file():
        raise HarnessError(f"{store.root}: not a run folder (no run.json)")
    with runlock.writing(store.root, wait, on_event):
        try:
            run = store.read_run_json() or {}
        except ValueError as exc:
            raise HarnessError(f"{store.root / 'run.json'}: not valid JSON: {exc}") from None
        context = _Context(store, run, sandbox)
        outcome = Outcome()
        groups: dict[str, tuple[str, Any, Any, list[dict[str, Any]]]] = {}
        for folder, row in finished_episodes(store.root, skip_invalid=True):
            key = folder.name
            try:
                template, params, entry = context.episode(key, row)
            except _Skip as skip:
                outcome.skipped.append((key, str(skip)))
                on_event("skip", {"key": key, "reason": str(skip)})
                continue
            task = str(row.get("task") or entry.get("task") or "")
            try:
                new = _rescore_one(context, folder, row, template, params, entry)
            except _Skip as skip:  # the template's finish still sees the row, as the run gave it
                outcome.skipped.append((key, str(skip)))
                on_event("skip", {"key": key, "reason": str(skip)})
                _group(groups, task, template, params, row)
                continue
            outcome.rescored.append(key)
            changed = _changes(row, new)
            if changed:
                outcome.changed[key] = changed
            on_event("episode", {"key": key, "changed": changed})
            _group(groups, task, template, params, new)
        if outcome.rescored:
            store.write_results()
            from harness.run import finish_tasks

            outcome.invalid_exports = finish_tasks(list(groups.values()), store, on_event, stamp=False)
        _model_work(groups, store.root, yes, {"backend": model_backend, "options": dict(model_options or {})},
                    outcome, on_event)
        data = store.read_run_json() or {}
        provenance = run_provenance([])
        data.setdefault("rescores", []).append({
            "at": _now(), "harness_version": provenance["harness_version"],
            "harness_commit": provenance["harness_commit"],
            "scorers": {t.name: str(getattr(t, "scorer_version", "0")) for _, t, _, _ in groups.values()},
            "extractors": {e.name: str(getattr(e, "version", "0")) for e in context.extractors},
            "rescored": len(outcome.rescored), "changed": len(outcome.changed), "skipped": len(outcome.skipped),
            "model_work": [{"description": d, "estimated_cost_usd": c, "result": r} for d, c, r in outcome.model_work]})
        store.write_run_json(data)
    return outcome


class _Skip(Exception):
    """An episode left as it is; the message says why."""


def _group(groups: dict, task: str, template: Any, params: Any, row: dict[str, Any]) -> None:
    """Add ``row`` to the rows of its (task, template, params) for the template's ``finish``."""
    key = f"{task}\0{template.name}\0{canonical(params.model_dump(mode='json'))}"
    groups.setdefault(key, (task, template, params, []))[3].append(row)


class _Context:
    """What every episode of the run shares: its ``run.json`` episodes, profiles, settings, the registered
    extractors, the templates and params already read."""

    def __init__(self, store: RunStore, run: dict[str, Any], sandbox: str | None):
        self.store, self.sandbox = store, sandbox
        episodes = run.get("episodes") if isinstance(run.get("episodes"), list) else []
        self.entries = {e["key"]: e for e in episodes if isinstance(e, dict) and isinstance(e.get("key"), str)}
        self.profiles_json = run.get("profiles") if isinstance(run.get("profiles"), dict) else {}
        self._profiles: dict[str, AgentProfile | None] = {}
        try:
            self.settings = RunSettings.model_validate(run.get("settings") or {})
        except ValueError:  # settings of another harness version: the rule runner's defaults
            self.settings = RunSettings()
        self.extractors = [r.obj for r in plugin_registry.plugins().registry("metric_extractor").values()]
        self._params: dict[str, Any] = {}

    def episode(self, key: str, row: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
        """(template, params, run.json entry) of episode ``key``; :class:`_Skip` when they cannot be read."""
        entry = self.entries.get(key)
        if entry is None or not isinstance(entry.get("params"), dict):
            raise _Skip("run.json does not list its params")
        name = entry.get("template") or row.get("template")
        cache = f"{name}\0{canonical(entry['params'])}"
        if cache not in self._params:
            try:
                self._params[cache] = episode_task(entry, str(name))
            except HarnessError as exc:
                raise _Skip(str(exc)) from None
        template, params = self._params[cache]
        return template, params, entry

    def profile(self, name: Any) -> AgentProfile | None:
        """The run's agent profile ``name`` as ``run.json`` recorded it (None when unknown or unreadable)."""
        if not isinstance(name, str) or name not in self.profiles_json:
            return None
        if name not in self._profiles:
            try:
                self._profiles[name] = AgentProfile.model_validate(self.profiles_json[name])
            except ValueError:
                self._profiles[name] = None
        return self._profiles[name]

    def runner(self, row: dict[str, Any]) -> SubmissionRunner:
        """The episode's rule runner, started on first use in ``--sandbox`` or the episode's own backend."""
        settings, name = self.settings, self.sandbox or row.get("sandbox") or "auto"

        def make() -> SubmissionRunner:
            from harness.run import runner_factory
            from harness.sandbox import choose_backend

            return runner_factory(settings, choose_backend(str(name)))()

        return _LazyRunner(make)

    def plan(self, key: str, row: dict[str, Any], template: Any, params: Any, entry: dict[str, Any],
             in_harness: bool) -> EpisodePlan:
        agent = None
        if not in_harness and row.get("agent"):
            try:
                agent = plugin_registry.get("agent", str(row["agent"]))
            except plugin_registry.UnknownPlugin:
                agent = None
        return EpisodePlan(key, str(row.get("task") or entry.get("task") or ""), template, params,
                           str(entry.get("episode", "0")), self.profile(row.get("profile")), agent, None,
                           self.settings, self.store.run_id, [] if in_harness else self.extractors,
                           episode_id=str(row.get("episode_id") or entry.get("id") or ""), in_harness=in_harness,
                           task_file=str(entry.get("task_file") or ""), spec_sha256=row.get("spec_sha256"))


def _rescore_one(context: _Context, folder: Path, row: dict[str, Any], template: Any, params: Any,
                 entry: dict[str, Any]) -> dict[str, Any]:
    if row.get("status") == "infra_failed":
        raise _Skip("an infrastructure failure: nothing was scored")
    in_harness = template.runs_in_harness(params)
    plan = context.plan(folder.name, row, template, params, entry, in_harness)
    paths = EpisodePaths(folder)
    try:
        before = read_score(folder) or {}
    except HarnessError:
        before = {}
    old_metrics = before.get("metrics") if isinstance(before.get("metrics"), dict) else {}
    if in_harness:
        try:
            score = template.rescore_in_harness(params, plan.episode, folder, dict(row))
        except NotImplementedError as exc:
            raise _Skip(str(exc) or f"template {template.name!r} cannot score its in-harness episodes again") \
                from None
        except Exception as exc:  # noqa: BLE001 - the episode stays as it was
            raise _Skip(f"scoring again raised {type(exc).__name__}: {one_line(str(exc), 300)}") from None
        # the template's columns it does not give again (the forecaster, its fit) stay the run's
        write_json(paths.score, {"metrics": {**old_metrics, **score.metrics},
                                 "details": score.details or before.get("details") or [], "warnings": score.warnings})
        return write_row(plan, paths, _int(row.get("infra_retries")), _kept(plan, row, {}, score,
                                                                            overrides=_stamp(plan)))
    try:
        return _score_again(context, folder, row, template, params, plan, paths, old_metrics)
    except InputMismatch as exc:  # names the run, the episode, the input and its source
        raise _Skip(str(exc)) from None


def _score_again(context: _Context, folder: Path, row: dict[str, Any], template: Any, params: Any,
                 plan: EpisodePlan, paths: EpisodePaths, old_metrics: dict[str, Any]) -> dict[str, Any]:
    """Score an agent episode again, its inputs kept by reference put back for the while."""
    from harness.proxy_records import one_parse_per_episode

    with restored(folder, template=template, params=params, episode=plan.episode):
        try:
            score, failure = score_episode(plan, paths, lambda: context.runner(row))
        except EpisodeError as exc:  # the rule sandbox cannot start here: score.json is untouched
            raise _Skip(f"its rule sandbox could not start: {exc}") from None
        errors = [part for part in str(row.get("metrics_error") or "").split("; ") if part.startswith("trajectory")]
        artifacts = EpisodeArtifacts(_trajectory(folder), _proxy_log(folder), paths.workspace, plan.profile)
        with one_parse_per_episode():
            metrics = run_extractors(plan.extractors, artifacts, errors)
    overrides = _stamp(plan)
    if failure is not None:
        overrides.update(status="failed", error_kind=ErrorKind.SCORING.value, error=one_line(failure))
    return write_row(plan, paths, _int(row.get("infra_retries")), _kept(plan, row, old_metrics, score, metrics,
                                                                        overrides))


def _kept(plan: EpisodePlan, row: dict[str, Any], old_metrics: dict[str, Any], score: EpisodeScore,
          metrics: list[tuple[Any, dict[str, Any]]] | None = None,
          overrides: dict[str, Any] | None = None) -> list[tuple[Any, dict[str, Any]]]:
    """The row's parts for :func:`harness.episode.write_row`, one column each, in the row's own order: what
    the episode recorded kept (the harness's columns, the params, the proxy's measured usage, the spec and
    inputs digests, undeclared columns), the score and metric columns replaced (a score column the scoring no
    longer gives becomes null), then the harness's ``overrides`` (e.g. the new code versions)."""
    parts = row_parts(plan.template, plan.extractors, plan.in_harness)
    owned = owners(parts)
    tags: dict[int, Any] = {id(parts[0]): "harness", id(parts[1]): "template"}
    if not plan.in_harness:
        tags[id(parts[-1])] = "proxy"
        tags.update({id(part): e for e, part in zip(plan.extractors, parts[2:-1])})
    new: dict[str, tuple[Any, Any]] = {k: ("template", None) for k in old_metrics if k not in score.metrics}
    new.update({k: ("template", v) for k, v in score.metrics.items()})
    for owner, values in metrics or []:
        new.update({k: (owner, v) for k, v in values.items()})
    if "metrics_error" in row and "metrics_error" not in new and not plan.in_harness:
        new["metrics_error"] = (None, None)
    measured = {c for e in ([] if plan.in_harness else plan.extractors) for c in (getattr(e, "columns", None) or {})}
    if not plan.in_harness and any(k in row for k in USAGE if k not in measured):  # the episode had a proxy
        new.update({k: ("proxy", row[k]) for k in USAGE if k in row})
    new.update({k: ("harness", v) for k, v in (overrides or {}).items()})
    out: list[tuple[Any, dict[str, Any]]] = []
    for name, value in row.items():
        if name in new:
            owner, value = new.pop(name)
        else:
            part = owned.get(name)
            owner = None if part is None else tags.get(id(part))
        out.append((owner, {name: value}))
    return out + [(owner, {name: value}) for name, (owner, value) in new.items()]


def _stamp(plan: EpisodePlan) -> dict[str, Any]:
    return {**code_columns(plan.template, [] if plan.in_harness else plan.extractors), "rescored_at": _now()}


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """Columns (besides provenance and timings) whose value differs between the two rows."""
    skip = {*PROVENANCE}
    out = {}
    for name in dict.fromkeys([*before, *after]):
        if name in skip:
            continue
        old, new = before.get(name), after.get(name)
        if old != new and not (_nan(old) and _nan(new)):
            out[name] = (old, new)
    return out


def _nan(value: Any) -> bool:
    return value is None or isinstance(value, float) and value != value


def _trajectory(folder: Path) -> dict | None:
    path = folder / "trajectory.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _proxy_log(folder: Path) -> Path | None:
    from harness.proxy_records import proxy_log

    return proxy_log(folder)  # proxy.jsonl.zst, else an older run's proxy.jsonl


def _model_work(groups: dict, run_dir: Path, yes: bool, model: dict[str, Any], outcome: Outcome,
                on_event: Event) -> None:
    """List (and with ``yes`` do) what each template can recompute only with a model."""
    seen: set[str] = set()
    for _, template, params, _ in groups.values():
        try:
            work = template.model_rescoring(params, run_dir, model)
        except Exception as exc:  # noqa: BLE001 - a template's failure to list its work is a message
            on_event("message", {"text": f"template {template.name!r}: cannot list its model rescoring: "
                                         f"{type(exc).__name__}: {exc}"})
            continue
        for description, cost, run in work:
            if description in seen:
                continue
            seen.add(description)
            on_event("model", {"description": description, "cost_usd": cost, "run": yes})  # before any spending
            if not yes:
                result = "not run: pass --yes to run it"
            else:
                try:
                    result = run()
                except Exception as exc:  # noqa: BLE001 - the other work and the rows stand
                    result = f"failed: {type(exc).__name__}: {one_line(str(exc), 300)}"
            outcome.model_work.append((description, cost, result))
            on_event("model_done", {"description": description, "result": result})


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value else 0


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")

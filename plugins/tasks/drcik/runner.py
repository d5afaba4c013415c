"""One ``harness forecast`` run: an :class:`ExperimentSpec` -> a run directory.

Layout (like a TraceBench run)::

    runs/<run_id>/
      run.json                          spec, tasks, forecasters, profile, versions, validation, timings
      results.parquet                   one row per task × forecaster × context (template "drcik")
      samples/<forecaster>/<context>.npz   the (S, H) sample paths, one array per benchmark_id
      submissions/<forecaster>__<context>/forecasts.jsonl + metadata.json   the release's files
      proxy/<episode>/proxy.jsonl       model-backed forecasters: one proxy log per forecast

Rows carry, besides the columns of :func:`plugins.tasks.drcik.experiment.run_experiment`:
``run_id``, ``template`` (``drcik``), ``task`` (spec name), ``episode``
(``<forecaster>/<context>/<benchmark_id>``), ``profile`` and ``model`` for
model-backed forecasters.  Each cell's submission folder is validated against
the release's rules (:func:`plugins.tasks.drcik.experiment.validate_submission`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from harness import plugins as registry
from harness.config import AgentProfile, ConfigError
from harness.store import RunStore, versions
from plugins.tasks.drcik import contexts as ctx
from plugins.tasks.drcik.experiment import (ExperimentResult, Validation, run_experiment, validate_submission,
                                            write_submission)
from plugins.tasks.drcik.loader import DrcikTask, load_tasks
from plugins.tasks.drcik.spec import ExperimentSpec

TEMPLATE = "drcik"
#: The profile used for model-backed forecasters on the scripted backend when none is given.
SCRIPTED_PROFILE = AgentProfile(name="scripted-dp", agent="llm-dp", provider="custom", model="scripted-model")


@dataclass
class ForecastRun:
    """What a run produced: its folder, rows, and the validation of each cell's submission."""

    root: Path
    rows: pd.DataFrame
    validations: dict[str, Validation] = field(default_factory=dict)
    tasks: list[DrcikTask] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.root.name


def resolve_forecasters(spec: ExperimentSpec, file: str) -> dict[str, Any]:
    """Registered forecasters by name, configured with their options; ConfigError naming the field."""
    out = {}
    for i, entry in enumerate(spec.forecasters):
        try:
            forecaster = registry.get("forecaster", entry.name)
        except registry.UnknownPlugin as exc:
            raise ConfigError(file, [f"forecasters[{i}].name: {exc}"]) from None
        if entry.options:
            configure = getattr(forecaster, "configured", None)
            if configure is None:
                raise ConfigError(file, [f"forecasters[{i}].options: forecaster {entry.name!r} takes no options"])
            try:
                forecaster = configure(**entry.options)
            except (TypeError, ValueError) as exc:
                raise ConfigError(file, [f"forecasters[{i}].options: {exc}"]) from None
        out[entry.name] = forecaster
    return out


def load_dr_evidence_dir(folder: Path, tasks: list[DrcikTask]) -> dict[str, list[ctx.EvidenceClaim]]:
    """DR evidence per task from a research run directory (``drcik-research``: one DR agent's
    claims, reports, agent and run, see :mod:`.dr_contexts`), or from ``<folder>/<benchmark_id>.json``
    or ``<folder>/<benchmark_id>/evidence.json`` (tasks without a file are left out: their DR
    conditions fail with that reason)."""
    if not folder.is_dir():
        raise ConfigError(folder, ["dr_evidence: no such folder"])
    from plugins.tasks.drcik.dr_contexts import is_research_run, single_agent_outputs

    if is_research_run(folder):   # a research stage's run directory: claims, report, agent and run
        try:
            return single_agent_outputs(folder)
        except ValueError as exc:
            raise ConfigError(folder, [f"dr_evidence: {exc}"]) from None
    out = {}
    for task in tasks:
        for candidate in (folder / f"{task.benchmark_id}.json", folder / task.benchmark_id / "evidence.json"):
            if candidate.is_file():
                out[task.benchmark_id] = ctx.load_dr_evidence(candidate)
                break
    return out


def run_forecast_experiment(spec: ExperimentSpec, out: Path | None = None, *, file: str = "spec",
                            profile: AgentProfile | None = None,
                            progress: Callable[[int, int, str], None] | None = None) -> ForecastRun:
    """Run ``spec`` and write the run directory (see the module docstring)."""
    tasks = load_tasks(spec.tasks_path)
    forecasters = resolve_forecasters(spec, file)
    needs_dr = [c for c in spec.contexts if ctx.get(c).needs_dr]
    dr = None
    if spec.dr_evidence:
        dr = load_dr_evidence_dir(spec.resolve(spec.dr_evidence), tasks)
    elif needs_dr:
        raise ConfigError(file, [f"dr_evidence: the condition(s) {', '.join(needs_dr)} need a DR agent's evidence "
                                 "(--dr-evidence DIR)"])
    store = RunStore.create(out)
    started = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    model = None
    model_backed = [n for n, f in forecasters.items() if getattr(f, "needs_model", False)]
    if model_backed:
        profile = profile or _profile(spec, file)
        from plugins.forecasters.llm import ProxyModel

        options = {"script": str(spec.resolve(spec.script))} if spec.script else {}
        model = ProxyModel.start(profile, store.root / "proxy", spec.model_backend, options, spec.budget)
        forecasters = {n: (f.bind_model(model) if n in model_backed else f) for n, f in forecasters.items()}
    run_json = _run_json(spec, store, tasks, forecasters, profile if model_backed else None, started)
    store.write_run_json(run_json)
    try:
        result = run_experiment(tasks, forecasters, list(spec.contexts), n_samples=spec.samples, seed=spec.seed,
                                time_limit=spec.time_limit, dr_evidence=dr, progress=progress)
    finally:
        if model is not None:
            model.stop()
    rows = _finish_rows(result.rows, spec, store.run_id, profile if model_backed else None, model_backed)
    rows.to_parquet(store.root / "results.parquet", index=False)
    _write_samples(store.root / "samples", result)
    validations = _write_submissions(store.root / "submissions", result, spec, forecasters, tasks,
                                     profile if model_backed else None)
    run_json.update(finished_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    submissions={k: {"ok": v.ok, "errors": v.errors, "warnings": v.warnings}
                                 for k, v in validations.items()})
    store.write_run_json(run_json)
    return ForecastRun(store.root, rows, validations, tasks)


def _profile(spec: ExperimentSpec, file: str) -> AgentProfile:
    if spec.agent:
        from harness.run import resolve_profile

        path = spec.resolve(spec.agent)
        return resolve_profile(str(path) if path is not None and path.exists() else spec.agent)
    if spec.model_backend == "scripted":
        return SCRIPTED_PROFILE
    raise ConfigError(file, ["agent: a model-backed forecaster (llm-dp) needs an agent profile (--agent PROFILE), "
                             "or --model-backend scripted --script FILE"])


def _run_json(spec, store, tasks, forecasters, profile, started) -> dict[str, Any]:
    return {
        "run_id": store.run_id, "template": TEMPLATE, "kind": "forecast",
        "spec": spec.model_dump(mode="json"), "tasks_path": str(spec.tasks_path),
        "tasks": [{"benchmark_id": t.benchmark_id, "horizon": t.horizon, "scale_status": t.scale_status,
                   "source": t.source} for t in tasks],
        "forecasters": {n: {"class": f"{type(f).__module__}.{type(f).__qualname__}",
                            "uses_context": bool(f.uses_context),
                            "options": next((e.options for e in spec.forecasters if e.name == n), {})}
                        for n, f in forecasters.items()},
        "profile": profile.model_dump(mode="json") if profile else None,
        "versions": versions(), "started_at": started,
        "unavailable_conditions": dict(ctx.UNAVAILABLE),
    }


def _finish_rows(rows: pd.DataFrame, spec, run_id, profile, model_backed) -> pd.DataFrame:
    rows = rows.copy()
    rows.insert(0, "run_id", run_id)
    rows.insert(1, "template", TEMPLATE)
    rows.insert(2, "task", spec.name)
    rows.insert(3, "episode", rows["forecaster"] + "/" + rows["context"] + "/" + rows["benchmark_id"])
    if "dr_agent" in rows.columns:   # one forecast run per DR agent: episodes stay distinct across runs
        has = rows["dr_agent"].notna()
        rows.loc[has, "episode"] = rows.loc[has, "episode"] + "/" + rows.loc[has, "dr_agent"].astype(str)
    if "flag_untrained" in rows.columns:
        rows["flag_untrained"] = rows["flag_untrained"].fillna(False).astype(bool)
    if model_backed:
        backed = rows["forecaster"].isin(model_backed)
        rows["profile"] = np.where(backed, profile.name, None)
        rows["model"] = np.where(backed, profile.model, None)
    return rows


def _write_samples(folder: Path, result: ExperimentResult) -> None:
    cells: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for (fname, cond, task_id), paths in result.samples.items():
        cells.setdefault((fname, cond), {})[task_id] = paths
    for (fname, cond), arrays in cells.items():
        target = folder / fname
        target.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(target / f"{cond}.npz", **arrays)


def cell_key(forecaster: str, context: str) -> str:
    return f"{forecaster}__{context}"


def _write_submissions(folder: Path, result: ExperimentResult, spec, forecasters, tasks, profile) -> dict:
    out = {}
    for fname, forecaster in forecasters.items():
        for cond in spec.contexts:
            condition = ctx.get(cond)
            kind = "agentic" if condition.needs_dr else getattr(forecaster, "submission_type", "statistical")
            base = (profile.model if getattr(forecaster, "needs_model", False) and profile else
                    getattr(forecaster, "model", None) or "none")
            notes = spec.submission.notes or (
                f"S={spec.samples} sample paths per task, seed {spec.seed}, context condition {cond!r}"
                + ("" if condition.reproduces_paper else " (a stand-in for the paper's condition)"))
            meta = {"method": f"{fname} ({cond})", "organization": spec.submission.organization, "type": kind,
                    "base_model": str(base), "reproduction": spec.submission.reproduction,
                    "contact": spec.submission.contact, "notes": notes}
            target = write_submission(folder / cell_key(fname, cond), result, fname, cond, meta)
            out[cell_key(fname, cond)] = validate_submission(target, tasks)
    return out

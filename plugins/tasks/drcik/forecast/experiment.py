"""Run forecasters × context conditions over Dr-CiK tasks; write and validate submission files.

:func:`run_experiment` produces one results row per (forecaster, context,
task) with the metrics of :mod:`tsagent_plugins.tasks.drcik.forecast.metrics` and keeps the
sample paths for export.  A forecaster that ignores text
(``uses_context = False``) is run once per task and its forecast reused for
every condition (``context_used`` is False in those rows: the results say so).
From the forecast's ``info`` (or the ``info`` attribute of a raised
ForecastError) rows take ``flag_untrained`` (always present; True for
forecasts from untrained weights, which reports refuse), ``weights``, the
proxy's token usage and cost (``prompt_tokens`` ... ``cost_usd``,
``n_requests``: model-backed forecasters) and ``invalid_samples``.

Submission files follow the release's leaderboard rules (``SUBMISSION.md``):
``forecasts.jsonl`` with one ``{"benchmark_id", "samples"}`` line per task
(each sample a path of ``prediction_length`` values) and ``metadata.json``
(method, organization, type in agentic|direct_llm|ts_model|statistical|retrieval,
base_model, reproduction, contact, notes).  The leaderboard asks for at least
100 samples per task; the paper draws S = 25, so fewer is reported as a warning.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping

from harness import Forecaster, ForecastError, ForecastRequest, lazy_module
from tsagent_plugins.forecasters._common import check_samples
from tsagent_plugins.tasks.drcik.dataset import contexts as ctx
from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask
from tsagent_plugins.tasks.drcik.forecast.metrics import FAILED, score_task
from tsagent_plugins.tasks.drcik.research.outputs import METADATA_FIELDS  # the release's metadata.json, one list

if TYPE_CHECKING:  # numpy and pandas load when an experiment runs, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")

SUBMISSION_TYPES = ("agentic", "direct_llm", "ts_model", "statistical", "retrieval")
LEADERBOARD_MIN_SAMPLES = 100


@dataclass
class ExperimentResult:
    """``rows``: one per (forecaster, context, benchmark_id); ``samples``: (S, H) arrays by that key."""

    rows: pd.DataFrame
    samples: dict[tuple[str, str, str], np.ndarray] = field(default_factory=dict)


def run_experiment(
    tasks: list[DrcikTask],
    forecasters: Mapping[str, Forecaster],
    conditions: list[str],
    *,
    n_samples: int = 25,
    seed: int = 0,
    time_limit: float = 600.0,
    dr_evidence: Mapping[str, list[ctx.EvidenceClaim]] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> ExperimentResult:
    """Forecast every task under every condition with every forecaster and score it.

    ``dr_evidence``: a DR agent's evidence per benchmark_id (release document ids),
    needed by the ``dr-evidence``/``verified-dr`` conditions; a task without it
    gets status ``failed`` with that reason under those conditions.
    """
    chosen = [ctx.get(name) for name in conditions]
    total, done = len(tasks) * len(forecasters) * len(chosen), 0
    rows: list[dict] = []
    samples: dict[tuple[str, str, str], np.ndarray] = {}
    for fname, forecaster in forecasters.items():
        for task in tasks:
            reuse: tuple | None = None
            for cond in chosen:
                row = {"forecaster": fname, "context": cond.name, "benchmark_id": task.benchmark_id,
                       "reproduces_paper": cond.reproduces_paper,
                       "context_used": ctx.context_used(cond, forecaster.uses_context),
                       "scale_status": task.scale_status, "n_samples": n_samples, "seed": seed}
                evidence = (dr_evidence or {}).get(task.benchmark_id)
                if cond.needs_dr and evidence is None:
                    rows.append({**row, **score_task(None, _future(task), "no DR evidence for this task").row(),
                                 "context_status": "missing", "context_items": 0, "fallback": None,
                                 "seconds": 0.0, **info_columns({})})
                    continue
                text = cond.text_for(task, evidence)
                row.update(context_status=text.status, context_items=text.items)
                if forecaster.uses_context or reuse is None:
                    reuse = forecast_task(forecaster, task, text.text, n_samples, seed, time_limit)
                paths, failure, fallback, seconds, info = reuse
                row.update(fallback=fallback, seconds=seconds, **info_columns(info),
                           **score_task(paths, _future(task), failure).row())
                if paths is not None:
                    samples[(fname, cond.name, task.benchmark_id)] = paths
                rows.append(row)
                done += 1
                if progress:
                    progress(done, total, f"{fname} / {cond.name} / {task.benchmark_id}")
    import pandas as pd  # imported on use: pandas is slow to load

    return ExperimentResult(pd.DataFrame(rows), samples)


def _future(task: DrcikTask) -> np.ndarray | None:
    return None if task.future is None else task.future.to_numpy(dtype=float)


def forecast_task(forecaster: Forecaster, task: DrcikTask, text: str | None, n_samples: int, seed: int,
                  time_limit: float):
    """One forecast: (samples (S, H) or None, failure reason or None, fallback, seconds, info)."""
    request = _request(task, text, n_samples, seed, time_limit)
    start = time.monotonic()
    try:
        out: object = forecaster.forecast(request)
    except Exception as exc:  # noqa: BLE001 - a crashing forecaster fails this task only
        out = exc
    return _outcome(out, n_samples, len(task.future_index), round(time.monotonic() - start, 3))


def forecast_tasks(forecaster: Forecaster, items: list[tuple[DrcikTask, str | None]], n_samples: int, seed: int,
                   time_limit: float) -> list[tuple]:
    """The forecasts of ``items`` ((task, context text) pairs) in one ``forecaster.forecast_batch`` call: per
    item what :func:`forecast_task` gives for it alone (the contract makes the paths the same), except
    ``seconds``, the batch's wall time shared equally among its items.  A failed item fails alone; a
    ``forecast_batch`` that itself raises, or returns a list of another length, fails every item with why."""
    requests = [_request(task, text, n_samples, seed, time_limit) for task, text in items]
    start = time.monotonic()
    try:
        outs = list(forecaster.forecast_batch(requests))
        if len(outs) != len(requests):
            raise RuntimeError(f"forecast_batch returned {len(outs)} forecasts for {len(requests)} requests")
    except Exception as exc:  # noqa: BLE001 - the batch call itself crashed: each of its tasks says why
        outs = [exc] * len(requests)
    seconds = round((time.monotonic() - start) / max(1, len(requests)), 3)
    return [_outcome(out, n_samples, len(task.future_index), seconds) for out, (task, _) in zip(outs, items)]


def _request(task: DrcikTask, text: str | None, n_samples: int, seed: int, time_limit: float) -> ForecastRequest:
    return ForecastRequest(history=task.history.copy(), future_index=task.future_index, context=text,
                           n_samples=n_samples, seed=seed, time_limit=time_limit,
                           seasonal_period=task.seasonal_period)


def _outcome(out: object, n_samples: int, horizon: int, seconds: float) -> tuple:
    """(samples or None, failure or None, fallback, seconds, info) of a forecast or the exception that failed it."""
    if isinstance(out, ForecastError):
        info = getattr(out, "info", None)
        return None, f"ForecastError: {out}", None, seconds, info if isinstance(info, dict) else {}
    if isinstance(out, Exception):
        return None, f"{type(out).__name__}: {out}", None, seconds, {}
    info = out.info if isinstance(getattr(out, "info", None), dict) else {}
    paths, problem = check_samples(getattr(out, "samples", None), n_samples, horizon)
    if problem is not None:
        return None, f"InvalidSamples: {problem}", None, seconds, info
    return paths, None, getattr(out, "fallback", None), seconds, info


USAGE_COLUMNS = ("prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens", "total_tokens",
                 "cost_usd", "n_requests")


def info_columns(info: Mapping) -> dict:
    """Results columns read from a forecast's ``info`` (see the module docstring)."""
    out: dict = {"flag_untrained": bool(info.get("flag_untrained", False))}
    if info.get("weights") is not None:
        out["weights"] = str(info["weights"])
    usage = info.get("usage")
    if isinstance(usage, Mapping):
        out.update({k: usage[k] for k in USAGE_COLUMNS if k in usage})
    if "invalid" in info:
        out["invalid_samples"] = int(info["invalid"])
    return out


def write_submission(folder: Path | str, result: ExperimentResult, forecaster: str, context: str,
                     metadata: Mapping[str, str]) -> Path:
    """Write ``forecasts.jsonl`` (one cell's samples, every task that produced them) and ``metadata.json``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cell = result.rows[(result.rows["forecaster"] == forecaster) & (result.rows["context"] == context)]
    with open(folder / "forecasts.jsonl", "w", encoding="utf-8") as out:
        for task_id in cell["benchmark_id"]:
            paths = result.samples.get((forecaster, context, task_id))
            if paths is not None:
                out.write(json.dumps({"benchmark_id": task_id, "samples": paths.tolist()}) + "\n")
    (folder / "metadata.json").write_text(json.dumps(dict(metadata), indent=2) + "\n", encoding="utf-8")
    return folder


@dataclass
class Validation:
    """``errors`` make the submission invalid; ``warnings`` do not."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors


def validate_submission(folder: Path | str, tasks: list[DrcikTask], hidden_only: bool = False) -> Validation:
    """Check a submission folder against the release rules for ``tasks`` (every task, or
    only the hidden ones with ``hidden_only``: the leaderboard requires all of those)."""
    folder, report = Path(folder), Validation()
    meta_file = folder / "metadata.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        if not isinstance(meta, dict):
            raise ValueError("not an object")
    except (OSError, ValueError) as exc:
        report.errors.append(f"{meta_file}: unreadable metadata ({exc})")
        meta = {}
    for key in METADATA_FIELDS:
        if not isinstance(meta.get(key), str) or not meta.get(key, "").strip():
            (report.errors if key in ("method", "type") else report.warnings).append(
                f"{meta_file}: {key}: missing or empty")
    if meta.get("type") and meta.get("type") not in SUBMISSION_TYPES:
        report.errors.append(f"{meta_file}: type: {meta['type']!r} is not one of {', '.join(SUBMISSION_TYPES)}")
    expected = {t.benchmark_id: t for t in tasks if t.future is None or not hidden_only}
    seen: set[str] = set()
    path = folder / "forecasts.jsonl"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        report.errors.append(f"{path}: cannot read ({exc.strerror or exc})")
        lines = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            entry = json.loads(line)
        except (ValueError, RecursionError) as exc:
            report.errors.append(f"{where}: invalid JSON ({getattr(exc, 'msg', type(exc).__name__)})")
            continue
        task_id = claim_task_id(entry, where, expected, seen, report.errors)
        if task_id is None:
            continue
        problem = _samples_problem(entry.get("samples"), expected[task_id].horizon)
        if problem:
            report.errors.append(f"{where}: samples: {problem}")
        elif len(entry["samples"]) < LEADERBOARD_MIN_SAMPLES:
            report.warnings.append(f"{where}: samples: {len(entry['samples'])} paths; the leaderboard asks for "
                                   f"at least {LEADERBOARD_MIN_SAMPLES}")
    missing = sorted(set(expected) - seen)
    if missing:
        report.errors.append(f"{path}: no forecast for {len(missing)} task(s): {', '.join(missing[:10])}")
    return report


def claim_task_id(entry: object, where: str, expected, seen: set[str], errors: list[str]) -> str | None:
    """The ``benchmark_id`` of a submission line when it is one of ``expected`` (marked seen; a repeat is an
    error), else None with the error naming ``where`` (file:line) and the field."""
    task_id = entry.get("benchmark_id") if isinstance(entry, dict) else None
    if task_id not in expected:
        errors.append(f"{where}: benchmark_id: unknown or unexpected task {task_id!r}")
        return None
    if task_id in seen:
        errors.append(f"{where}: benchmark_id: {task_id} appears twice")
    seen.add(task_id)
    return task_id


def _samples_problem(samples: object, horizon: int) -> str | None:
    if not isinstance(samples, list) or not samples:
        return "expected a non-empty list of sample paths"
    for i, path in enumerate(samples):
        if not isinstance(path, list) or len(path) != horizon:
            return f"path {i} has {len(path) if isinstance(path, list) else 'no'} values, expected {horizon}"
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in path):
            return f"path {i} has a non-numeric or non-finite value"
    return None


__all__ = ["ExperimentResult", "Validation", "forecast_task", "forecast_tasks", "info_columns", "run_experiment",
           "validate_submission", "write_submission", "FAILED"]

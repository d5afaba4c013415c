"""Dr-CiK forecasting metrics (paper Appendix H.2 and the release's official scorer rules).

Per task, with future values y (length H) and S sample paths x (shape (S, H)):

- scale a = 1 / mean_t |y_t|  (undefined when mean |y| = 0: the task is
  reported ``undefined_scale``, never scored);
- point forecast = the sample mean ȳ_t;  sMAE = a · mean_t |ȳ_t − y_t|;
  sRMSE = a · sqrt(mean_t (ȳ_t − y_t)²);
- sCRPS = a · mean_t CRPS_t with the energy form
  CRPS_t = (1/S) Σ_i |x_it − y_t| − 1/(2S²) Σ_i Σ_j |x_it − x_jt|
  (not the "fair" form, which divides the pairwise term by 2S(S−1));
- each value above 5 is clipped to 5, independently per metric.

Across tasks (per cell, e.g. forecaster × context): mean ± standard error of
the mean over scored tasks; failed tasks are excluded and counted in ``fail``;
a second table restricts every cell to the tasks all compared cells completed;
average rank per task across cells, by sRMSE (point) and by sCRPS
(distributional), each ± standard error, on that common subset.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness import lazy_module

if TYPE_CHECKING:  # numpy and pandas load when a table is built, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")

CAP = 5.0
METRICS = ("smae", "srmse", "scrps")

OK = "ok"
FAILED = "failed"
UNDEFINED_SCALE = "undefined_scale"
LABELS_HIDDEN = "labels_hidden"


def crps_energy(samples: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Energy-form CRPS per step.  ``samples``: (S, H); ``y``: (H,).  Returns (H,).

    The pairwise term uses sorted samples: Σ_i Σ_j |x_i − x_j| = 2 Σ_k (2k − S − 1) x_(k)
    (k = 1..S), so the cost is O(S log S) per step.
    """
    x = np.asarray(samples, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 2 or y.ndim != 1 or x.shape[1] != y.shape[0]:
        raise ValueError(f"samples must be (S, H) and y (H,), got {x.shape} and {y.shape}")
    s = x.shape[0]
    if s < 1:
        raise ValueError("at least one sample path is needed")
    first = np.abs(x - y[None, :]).mean(axis=0)
    xs = np.sort(x, axis=0)
    weights = 2.0 * np.arange(1, s + 1) - s - 1
    pairwise = 2.0 * (weights[:, None] * xs).sum(axis=0)
    return first - pairwise / (2.0 * s * s)


def sample_problem(samples: object, horizon: int) -> str | None:
    """Why ``samples`` cannot be scored as (S, H) paths, or None when they can."""
    x = np.asarray(samples, dtype=float) if not isinstance(samples, np.ndarray) else samples
    if x.ndim != 2:
        return f"samples must be 2-D (S, H), got {x.ndim}-D"
    if x.shape[1] != horizon:
        return f"samples cover {x.shape[1]} steps, the horizon is {horizon}"
    if x.shape[0] < 1:
        return "no sample paths"
    if not np.isfinite(x).all():
        return "samples contain NaN or infinite values"
    return None


@dataclass(frozen=True)
class TaskScore:
    """Capped metrics (None unless ``status`` is ``ok``), the uncapped ones, and the scale a."""

    status: str
    smae: float | None = None
    srmse: float | None = None
    scrps: float | None = None
    smae_uncapped: float | None = None
    srmse_uncapped: float | None = None
    scrps_uncapped: float | None = None
    scale: float | None = None
    reason: str = ""

    def row(self) -> dict:
        return dict(self.__dict__)


def score_task(samples: np.ndarray | None, future: np.ndarray | None, failure: str | None = None) -> TaskScore:
    """Score one task.  ``future``: y or None (labels hidden).  ``samples`` None or
    ``failure`` set: the forecaster failed (status ``failed`` with the reason)."""
    if future is None:
        return TaskScore(LABELS_HIDDEN, reason="labels hidden")
    y = np.asarray(future, dtype=float)
    if failure is not None or samples is None:
        return TaskScore(FAILED, reason=failure or "no samples")
    problem = sample_problem(samples, len(y))
    if problem:
        return TaskScore(FAILED, reason=problem)
    mean_abs = float(np.mean(np.abs(y)))
    if mean_abs == 0.0:
        return TaskScore(UNDEFINED_SCALE, reason="mean |y| over the future window is 0")
    a = 1.0 / mean_abs
    x = np.asarray(samples, dtype=float)
    err = x.mean(axis=0) - y
    raw = {
        "smae": a * float(np.mean(np.abs(err))),
        "srmse": a * math.sqrt(float(np.mean(err**2))),
        "scrps": a * float(np.mean(crps_energy(x, y))),
    }
    return TaskScore(OK, scale=a, **{k: min(v, CAP) for k, v in raw.items()},
                     **{f"{k}_uncapped": v for k, v in raw.items()})


def _mean_se(values: pd.Series) -> tuple[float, float]:
    v = values.dropna().to_numpy(dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    se = float(np.std(v, ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
    return float(np.mean(v)), se


def _check(rows: pd.DataFrame, cells: list[str], task: str) -> None:
    missing = [c for c in (*cells, task, "status", *METRICS) if c not in rows.columns]
    if missing:
        raise ValueError(f"results rows lack columns {missing}")
    dup = rows.duplicated([*cells, task])
    if dup.any():
        raise ValueError(f"more than one row for {rows.loc[dup, [*cells, task]].iloc[0].to_dict()}")


def summary_table(rows: pd.DataFrame, cells: list[str], task: str = "benchmark_id") -> pd.DataFrame:
    """Per cell: ``n`` scored tasks, ``<metric>_mean``/``<metric>_se`` over them, and counts
    ``fail``, ``undefined`` (undefined_scale) and ``hidden`` (labels hidden)."""
    import pandas as pd  # imported on use: pandas is slow to load

    _check(rows, cells, task)
    out = []
    for key, group in rows.groupby(cells, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        scored = group[group["status"] == OK]
        entry = dict(zip(cells, key))
        entry["n"] = len(scored)
        for m in METRICS:
            entry[f"{m}_mean"], entry[f"{m}_se"] = _mean_se(scored[m])
        entry["fail"] = int((group["status"] == FAILED).sum())
        entry["undefined"] = int((group["status"] == UNDEFINED_SCALE).sum())
        entry["hidden"] = int((group["status"] == LABELS_HIDDEN).sum())
        out.append(entry)
    return pd.DataFrame(out)


def common_tasks(rows: pd.DataFrame, cells: list[str], task: str = "benchmark_id") -> list:
    """Tasks that every compared cell scored (status ``ok``)."""
    _check(rows, cells, task)
    n_cells = rows.groupby(cells, sort=False, dropna=False).ngroups
    ok = rows[rows["status"] == OK]
    counts = ok.groupby(task).size()
    return sorted(counts[counts == n_cells].index)


def common_subset_table(rows: pd.DataFrame, cells: list[str], task: str = "benchmark_id") -> pd.DataFrame:
    """:func:`summary_table` over the tasks every compared cell completed."""
    keep = set(common_tasks(rows, cells, task))
    return summary_table(rows[rows[task].isin(keep)], cells, task)


def average_ranks(rows: pd.DataFrame, cells: list[str], task: str = "benchmark_id") -> pd.DataFrame:
    """Average rank per cell over the common task subset: ``point_rank`` by sRMSE and
    ``dist_rank`` by sCRPS (rank 1 = best, ties share the mean rank), each with ``_se``."""
    import pandas as pd  # imported on use: pandas and scipy are slow to load
    from scipy.stats import rankdata

    keep = common_tasks(rows, cells, task)
    sub = rows[rows[task].isin(keep)].copy()
    sub["_cell"] = list(zip(*(sub[c] for c in cells))) if cells else []
    for metric, col in (("srmse", "point_rank"), ("scrps", "dist_rank")):
        sub[col] = sub.groupby(task)[metric].transform(lambda v: rankdata(v.to_numpy(float), method="average"))
    out = []
    for key, group in sub.groupby(cells, sort=False, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        entry = dict(zip(cells, key))
        entry["n"] = len(group)
        for col in ("point_rank", "dist_rank"):
            entry[col], entry[f"{col}_se"] = _mean_se(group[col])
        out.append(entry)
    return pd.DataFrame(out, columns=[*cells, "n", "point_rank", "point_rank_se", "dist_rank", "dist_rank_se"])

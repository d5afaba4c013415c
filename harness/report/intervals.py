"""Confidence intervals for a table cell's mean (``harness report --ci``).

A cell averages independent clusters (e.g. one value per simulator–seed pair,
repeated rows of a pair already averaged) that may fall in fixed strata (e.g.
simulators, each with its own difficulty).  The interval is the stratified
t-interval

    mean ± t_{1-alpha/2, N-H} * s_w / sqrt(N),

with N clusters, H strata and s_w the pooled within-stratum SD (the tables'
"within-simulator SD"; the plain sample SD when there is one stratum, e.g. a
per-simulator cell across seeds).  For balanced strata s_w^2 / N is unbiased
for the variance of the pooled mean whatever the strata's means and
variances; N - H degrees of freedom account for the estimated stratum means.
Why not a cluster bootstrap: with 5 seeds a percentile bootstrap of a mean
undercovers (its spread is too small by sqrt((n-1)/n) and it lacks the t
tails); why not a sign-flip interval: it is unbounded for n <= 5 clusters at
alpha = 0.05.  ``docs/results/statistics.md`` shows the coverage (tests check 92-98 %
over 1,000 simulated runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Interval:
    """A mean and its ``1 - alpha`` interval over ``n`` clusters in ``strata`` strata (``df`` = n - strata)."""

    mean: float
    low: float
    high: float
    n: int
    strata: int
    alpha: float

    @property
    def df(self) -> int:
        return self.n - self.strata

    def text(self, digits: int = 3, scale: float = 1.0) -> str:
        """``[low, high]`` with ``digits`` decimals after multiplying by ``scale``."""
        low, high = self.low * scale, self.high * scale
        return f"[{round(low, digits) + 0.0:.{digits}f}, {round(high, digits) + 0.0:.{digits}f}]"


def mean_interval(values: Sequence[float], strata: Sequence[object] | None = None,
                  alpha: float = 0.05) -> Interval | None:
    """Stratified t-interval of the mean of ``values`` (one per independent cluster), ``strata`` labelling
    each value's stratum (None: one stratum).  NaN values are dropped.  None when there are no degrees of
    freedom left (fewer clusters than strata + 1)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    s = np.asarray(["" for _ in range(v.size)] if strata is None else list(strata), dtype=object)
    if s.size != v.size:
        raise ValueError(f"{v.size} values but {s.size} stratum labels")
    keep = ~np.isnan(v)
    v, s = v[keep], s[keep]
    labels = sorted(set(s.tolist()), key=str)
    df = v.size - len(labels)
    if v.size == 0 or df < 1:
        return None
    residuals = np.concatenate([v[s == label] - v[s == label].mean() for label in labels])
    sd = math.sqrt(float(np.sum(residuals ** 2)) / df)
    half = float(stats.t.ppf(1 - alpha / 2, df)) * sd / math.sqrt(v.size)
    mean = float(v.mean())
    return Interval(mean, mean - half, mean + half, int(v.size), len(labels), alpha)


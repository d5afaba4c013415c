"""Power before spending: ``harness plan --power`` and ``--detect``.

For the episodes a plan expands to, the comparison of two agents (or two
conditions) that ``harness report --compare`` would make: per stratum of the
template's :class:`~harness.design.PairedDesign`, ``n`` independent clusters
(e.g. simulator–seed pairs), each contributing the mean of ``k`` paired
episode differences (e.g. over noise levels).  The test is the two-sided
sign-flip test of the cluster differences; its power is that of the paired
t-test it converges to (the permutation and t-tests have the same local power),
computed with :class:`statsmodels.stats.power.TTestPower`, except that the
exhaustive sign-flip test can never reject with n clusters when 2 / 2^n > alpha
(n <= 5 at alpha = 0.05): then nothing is detectable.

The SD of a cluster difference comes from

* a pilot run (``--pilot RUN``): the pooled SD ``s`` of the primary metric's
  episode values around the mean of their condition (all factors but the
  replicate, e.g. agent × simulator × noise × submission), i.e. seed-to-seed
  and sampling variation together; two independent agents' cluster difference
  has SD ``s * sqrt(2 / k)``;
* else the binomial model: an episode's metric is a proportion of ``m`` scored
  items (the design's ``trials`` parameter), each
  correct with probability 0.5 (the largest variance, so the figure is
  conservative), independently across items and agents:
  SD = ``sqrt(2 * 0.25 / m / k)``.  Correlated agents (the same hard samples)
  make real differences less variable.

:func:`detectable_difference` is the smallest true difference of means found
with the chosen power; :func:`seeds_needed` the fewest replicates (seeds)
for a given difference.  ``docs/results/statistics.md`` shows how to read them; a test
checks them against a simulation of the same design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from harness.design import DEFAULT_DESIGN, PairedDesign

#: success probability of the binomial model (the largest variance p (1 - p))
BINOMIAL_P = 0.5


@dataclass(frozen=True)
class Layout:
    """One stratum of a planned comparison: ``clusters`` independent units, ``pooled`` episodes per side per
    cluster, ``trials`` scored items per episode, ``replicates`` seeds (clusters = replicates x
    ``clusters / replicates``)."""

    stratum: str
    clusters: int
    pooled: int
    trials: int | None
    replicates: int


def min_clusters(alpha: float) -> int:
    """The fewest clusters with which the exhaustive two-sided sign-flip test can reject at ``alpha``
    (2 / 2^n <= alpha)."""
    return max(1, math.ceil(math.log2(2 / alpha)))


def binomial_sd(trials: int, pooled: int = 1, p: float = BINOMIAL_P) -> float:
    """SD of a cluster's mean paired difference under the binomial model (two independent episodes per
    pair, ``pooled`` pairs averaged)."""
    return math.sqrt(2 * p * (1 - p) / trials / pooled)


def detectable_difference(clusters: int, sd: float, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest true mean difference the two-sided paired test finds with probability ``power`` at
    ``alpha`` with ``clusters`` cluster differences of SD ``sd``; None when the sign-flip test cannot
    reject at all (too few clusters)."""
    from statsmodels.stats.power import TTestPower

    if clusters < max(2, min_clusters(alpha)):
        return None
    effect = TTestPower().solve_power(effect_size=None, nobs=clusters, alpha=alpha, power=power,
                                      alternative="two-sided")
    return float(effect) * sd


def seeds_needed(difference: float, sd: float, clusters_per_seed: int, alpha: float = 0.05,
                 power: float = 0.8, limit: int = 100_000) -> int | None:
    """Fewest replicates (seeds) whose ``clusters_per_seed`` x seeds clusters detect ``difference`` with
    ``power`` at ``alpha``; None beyond ``limit``."""
    if difference <= 0 or clusters_per_seed < 1:
        raise ValueError("the difference and the clusters per seed must be positive")
    low, high = 1, 1
    while True:  # doubling, then bisection on the monotone detectable difference
        found = detectable_difference(high * clusters_per_seed, sd, alpha, power)
        if found is not None and found <= difference:
            break
        if high >= limit:
            return None
        low, high = high, min(2 * high, limit)
    while low < high:
        mid = (low + high) // 2
        found = detectable_difference(mid * clusters_per_seed, sd, alpha, power)
        if found is not None and found <= difference:
            high = mid
        else:
            low = mid + 1
    return high


def layouts(rows: Sequence[dict[str, Any]], design: PairedDesign = DEFAULT_DESIGN) -> list[Layout]:
    """The strata of a planned comparison of two profiles from the planned episodes' ``rows`` (``profile``,
    ``task`` and the task parameters, passed through ``design.prepare``); factors absent from the rows are
    ignored."""
    import pandas as pd

    frame = pd.DataFrame(list(rows))
    if frame.empty:
        return []
    if design.prepare is not None:
        frame = design.prepare(frame.assign(**{c: np.nan for c in design.metrics.values() if c not in frame}))
    frame = frame.astype({c: str for c in design.factors if c in frame.columns})
    strata = [c for c in design.strata if c in frame.columns]
    clusters = [c for c in design.clusters if c in frame.columns]
    side = "profile" if "profile" in frame.columns else None
    out = []
    groups = frame.groupby(strata, sort=True) if strata else [((), frame)]
    for key, rows_ in groups:
        key = key if isinstance(key, tuple) else (key,)
        label = ", ".join(f"{c}={v}" for c, v in zip(strata, key)) or "all"
        per_side = rows_.groupby([side, *clusters]).size() if side else rows_.groupby(clusters).size()
        n = int(rows_[clusters].drop_duplicates().shape[0]) if clusters else 1
        trials = None
        if design.trials and design.trials in rows_.columns:
            values = pd.to_numeric(rows_[design.trials], errors="coerce").dropna()
            trials = int(values.median()) if len(values) else None
        replicate = design.replicate if design.replicate in rows_.columns else None
        replicates = int(rows_[replicate].nunique()) if replicate else n
        out.append(Layout(label, n, int(per_side.median()), trials, replicates))
    return out


def pilot_sd(frame: Any, design: PairedDesign = DEFAULT_DESIGN) -> tuple[float | None, int]:
    """Pooled SD of the primary metric around each condition's mean (conditions: all factors present but the
    replicate) in a pilot run's rows (after ``design.prepare``), and its degrees of freedom."""
    import pandas as pd

    if design.prepare is not None:
        frame = design.prepare(frame)
    column = design.primary
    if column not in frame.columns:
        return None, 0
    values = pd.to_numeric(frame[column], errors="coerce")
    frame = frame.assign(_v=values).dropna(subset=["_v"])
    groups = [c for c in design.factors if c in frame.columns and c != design.replicate]
    if frame.empty:
        return None, 0
    grouped = frame.groupby([frame[c].astype(str) for c in groups])["_v"] if groups else frame["_v"]
    residuals = frame["_v"] - (grouped.transform("mean") if groups else frame["_v"].mean())
    df = len(frame) - (grouped.ngroups if groups else 1)
    if df < 1:
        return None, 0
    return float(math.sqrt(float((residuals ** 2).sum()) / df)), int(df)


@dataclass(frozen=True)
class PowerRow:
    """One stratum's answer: the layout, the SD used, the detectable difference (None: not detectable with
    this many clusters) and, for ``--detect``, the seeds needed."""

    template: str
    layout: Layout
    sd: float | None
    detectable: float | None
    seeds: int | None = None


def plan_power(episodes: Sequence[Any], alpha: float = 0.05, power: float = 0.8, detect: float | None = None,
               pilot: Any = None) -> tuple[list[PowerRow], list[str]]:
    """Power rows for the planned ``episodes`` (:class:`harness.plan.PlannedEpisode`), per template and
    stratum, and notes on the variance used.  ``pilot``: a results frame of a pilot run (else the
    binomial model)."""
    from harness.report.paired import designs

    by_template: dict[str, list[dict]] = {}
    for e in episodes:
        if e.template:
            by_template.setdefault(e.template, []).append(
                {**e.params, "profile": e.profile, "task": e.task, "template": e.template})
    found = designs(by_template)
    rows, notes = [], []
    for template, planned in by_template.items():
        design = found[template]
        sd_pilot = None
        if pilot is not None and "template" in pilot.columns:
            sd_pilot, df = pilot_sd(pilot[pilot["template"] == template].reset_index(drop=True), design)
            if sd_pilot is not None:
                notes.append(f"{template}: SD of an episode's {design.primary} from the pilot run: {sd_pilot:.3f} "
                             f"({df} degrees of freedom); a cluster difference's SD = SD × √(2 / episodes per "
                             "cluster)")
            else:
                notes.append(f"{template}: the pilot run has too few {design.primary} values for an SD: binomial "
                             "model used")
        elif design.trials is not None:
            notes.append(f"{template}: binomial model: each of an episode's {design.trials} items right with "
                         f"probability {BINOMIAL_P}, independently across items and agents (conservative)")
        for layout in layouts(planned, design):
            if sd_pilot is not None:
                sd = sd_pilot * math.sqrt(2 / layout.pooled)
            elif layout.trials:
                sd = binomial_sd(layout.trials, layout.pooled)
            else:
                sd = None
            found_d = detectable_difference(layout.clusters, sd, alpha, power) if sd is not None else None
            seeds = None
            if detect is not None and sd is not None:
                per_seed = max(1, layout.clusters // max(1, layout.replicates))
                seeds = seeds_needed(detect, sd, per_seed, alpha, power)
            rows.append(PowerRow(template, layout, sd, found_d, seeds))
    return rows, notes

"""``harness report --ci`` for the TraceBench tables: the interval of a cell's mean.

A cell's episodes are nested in simulator–seed pairs (the independent units;
repeated episodes of a pair are averaged first) and simulators are fixed
strata of different difficulty, so the interval is the stratified t-interval
of :func:`harness.reporting.mean_interval` over the pairs with the simulator as stratum
(the pooled within-simulator SD of the aggregate tables, N − H degrees of
freedom); a per-simulator cell is the plain t-interval across seeds.  The
reasons are in ``docs/results/statistics.md``.
"""

from __future__ import annotations

import pandas as pd

from harness.reporting import mean_interval, report_options


def cell_interval(series: pd.Series, digits: int = 3, scale: float = 1.0) -> str | None:
    """``[low, high]`` of the mean of ``series`` (indexed by episode identity, with ``simulator`` and
    ``seed`` levels) when ``--ci`` is on; None when it is off or there are too few pairs."""
    options = report_options()
    if not options.ci or series.empty:
        return None
    pairs = series.groupby(level=["simulator", "seed"]).mean()
    interval = mean_interval(pairs.to_numpy(), list(pairs.index.get_level_values("simulator")), options.alpha)
    return None if interval is None else interval.text(digits, scale)

"""Cells of the Dr-CiK report tables: shares as percentages and means ± standard error, where a missing value is
:data:`harness.reporting.DASH` marked with the footnote saying why (:meth:`harness.reporting.Table.explain`).

Every Dr-CiK table builds its number cells here, so no cell shows an unexplained dash: a metric undefined for an
agent (it cited nothing, its tasks have no distractor, ...), a cell nobody ran, or a standard error over a single
task.  The reasons shared by several tables are the constants below; a table passes its own where it knows more.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from harness.reporting import DASH, Table, fmt_pm

#: a mean over one task (or one value): the standard error needs two
ONE_TASK = "a single task: no standard error"
#: evidence recall with E_t empty
NO_EVIDENCE = "no ground-truth evidence item (E1 excluded) in these tasks: evidence recall is undefined"
#: supporting-document recall with S_t empty
NO_SUPPORTING = "no supporting document in these tasks: supporting-document recall is undefined"
#: distractor avoidance (Table 3's reading) with Q_t empty
NO_CITATION = ("no citations: distractor avoidance (the share of cited documents that are not distractors) is "
               "undefined")
#: the share of D_t left uncited with D_t empty
NO_DISTRACTOR = "no distractor document in these tasks: the share of distractors left uncited is undefined"
#: an agent (or stratum) whose every research episode failed
ALL_FAILED = "every episode of this agent failed: no metric"


def missing(value: object) -> bool:
    """Whether ``value`` is a missing number (None or NaN)."""
    return value is None or (isinstance(value, float) and math.isnan(value))


def mean_se(values: Iterable[float | None]) -> tuple[float | None, float | None]:
    """Mean and standard error of the mean of ``values`` (None and NaN left out); (None, None) with none left,
    the standard error None with one."""
    vals = [float(v) for v in values if not missing(v)]
    if not vals:
        return None, None
    se = float(np.std(vals, ddof=1) / math.sqrt(len(vals))) if len(vals) > 1 else None
    return float(np.mean(vals)), se


def pct(table: Table, value: float | None, reason: str) -> str:
    """``value`` in [0, 1] as a percentage with one decimal (``0.25`` -> ``25.0%``); missing: a dash marked
    with ``reason`` in ``table``."""
    return table.explain(DASH, reason) if missing(value) else f"{100 * value:.1f}%"


def pct_pm(table: Table, mean: float | None, se: float | None, reason: str, se_reason: str = ONE_TASK) -> str:
    """``25.0% ± 1.5`` (percentage points); a missing mean: a dash marked with ``reason``, a missing standard error:
    ``25.0% ± –`` marked with ``se_reason``."""
    if missing(mean):
        return table.explain(DASH, reason)
    return f"{100 * mean:.1f}% ± " + (table.explain(DASH, se_reason) if missing(se) else f"{100 * se:.1f}")


def pm(table: Table, mean: float | None, se: float | None, reason: str, se_reason: str = ONE_TASK,
       digits: int = 3) -> str:
    """``mean ± se`` with ``digits`` decimals (:func:`harness.reporting.fmt_pm`, e.g. sCRPS); a missing mean: a
    dash marked with ``reason``, a missing standard error marked with ``se_reason``."""
    if missing(mean):
        return table.explain(DASH, reason)
    return table.explain(fmt_pm(mean, None if missing(se) else se, digits), se_reason)

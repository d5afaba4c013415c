"""``harness report --ci`` on Dr-CiK Table 2: the t-interval of each cell's mean sCRPS over its scored tasks."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from harness.report.sections import _OPTIONS, ReportOptions
from tsagent_plugins.tasks.drcik.report.table2 import table2

SCRPS = {("naive", "no-context"): [0.2, 0.4, 0.3, 0.5], ("naive", "background"): [0.1, 0.3, 0.2, None]}


def rows() -> pd.DataFrame:
    out = []
    for (forecaster, context), values in SCRPS.items():
        for i, v in enumerate(values):
            out.append({"forecaster": forecaster, "context": context, "benchmark_id": f"t{i}",
                        "status": "ok" if v is not None else "failed", "scrps": v, "srmse": v, "smae": v})
    return pd.DataFrame(out)


def test_scrps_cells_get_a_t_interval_over_tasks():
    token = _OPTIONS.set(ReportOptions(ci=True))
    try:
        table = table2(rows(), ["naive"], ["no-context", "background"]).with_interval_columns()
    finally:
        _OPTIONS.reset(token)
    row = table.rows[0]
    for context, values in SCRPS.items():
        scored = [v for v in values if v is not None]
        ci = stats.ttest_1samp(scored, 0).confidence_interval(0.95)
        column = next(i for i, h in enumerate(table.header) if h.endswith("95% CI")
                      and h.startswith({"no-context": "No Context", "background": "Background"}[context[1]]))
        assert row[column] == f"[{ci.low:.3f}, {ci.high:.3f}]"
    plain = table2(rows(), ["naive"], ["no-context", "background"]).with_interval_columns()
    assert not any("CI" in h for h in plain.header)

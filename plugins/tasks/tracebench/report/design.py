"""TraceBench's paired design (Appendix J, Table 23): how episodes pair for ``harness report --compare``,
``--ci`` and ``harness plan --power``.

Episodes pair within a simulator–seed pair (the independent unit); the conditions a comparison does not
name are averaged within the pair (agent contrasts over noise levels, condition effects over agents);
setting (main / no-examples / no-context) and submission mode are reported apart; an episode's accuracy is
a proportion of its ``n_test`` test samples.
"""

from __future__ import annotations

from typing import Any

from harness.reporting import PairedDesign


def _report_frame(rows: Any) -> Any:
    """The rows with the derived ``setting`` column (:func:`.tables.tracebench_frame`)."""
    from tsagent_plugins.tasks.tracebench.report.tables import tracebench_frame

    return tracebench_frame(rows)


PAIRED_DESIGN = PairedDesign(metrics={"episode": "accuracy", "held-out": "heldout_accuracy"},
                             factors=("profile", "setting", "noise", "submission", "simulator", "seed"),
                             clusters=("simulator", "seed"), strata=("setting", "submission"), trials="n_test",
                             prepare=_report_frame)

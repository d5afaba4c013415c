"""TraceBench's section of ``harness report``: Tables 1, 2, 23, Appendix I, resource use and the figures.

Registered for the ``tracebench`` template through ``register_report_sections``;
:func:`build_section` receives that template's rows (flagged rows already
refused) and reads ``--exclude-agent``, ``--no-figures`` and the test level
from :func:`harness.report_options`.
"""

from __future__ import annotations

import pandas as pd

from harness.reporting import Section, report_options
from tsagent_plugins.tasks.tracebench.report import figures as figs
from tsagent_plugins.tasks.tracebench.report import paper
from tsagent_plugins.tasks.tracebench.report import tables as tabs
from tsagent_plugins.tasks.tracebench.report.table23 import table23


def build_section(rows: pd.DataFrame) -> Section:
    """Every TraceBench table and figure ``rows`` support (none when they hold no episode)."""
    options = report_options()
    out = Section()
    frame = tabs.tracebench_frame(rows)
    if frame.empty:
        out.messages.append("no TraceBench rows: nothing to tabulate")
        return out
    others = sorted(set(frame["setting"]) - {"main", "no-examples", "no-context"})
    if others:
        out.messages.append(f"rows in other settings ({', '.join(others)}) appear only in per-simulator tables")
    agents = tabs.agent_order(frame)
    missing = tabs.unsupported(frame)  # what these rows cannot make, each with why
    for table in (tabs.table1(frame, agents), tabs.resources_table(frame, agents)):
        if table is not None:
            out.tables.append(table)
    out.tables += tabs.table2(frame, agents)
    out.tables += tabs.per_simulator_tables(frame, agents)
    t23 = table23(frame, agents, options.excluded_profiles, options.alpha)
    if t23 is not None:
        out.tables.append(t23)
    else:
        missing.append("Table 23 not made: no two agents, noise levels, submission modes or matched ablations "
                       "share a simulator-seed pair")
    if options.with_figures:
        main_result = figs.main_result_figure(frame, agents)
        if main_result is not None:
            out.figures["main-result"] = main_result
        out.figures.update(figs.confusion_figures(frame, agents))
        resource = figs.resource_figure(frame, agents)
        if resource is not None:
            out.figures["figure4-resources"] = resource
        out.figures.update(figs.cost_figures(frame, agents))
    if options.paper:
        out.tables, without = paper.with_paper(out.tables)
        if without:
            missing.append(f"--paper: the paper has no values for {', '.join(without)}")
    out.messages += missing
    return out

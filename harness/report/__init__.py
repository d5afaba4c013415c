"""``harness report``: the TraceBench tables, paired statistics and figures from run directories.

:func:`build_report` loads the rows of one or more run directories
(:mod:`harness.report.load`), builds the tables (:mod:`harness.report.tables`:
Table 1, resource use, Table 2, Appendix I per-simulator tables, Table 23) and
figures (:mod:`harness.report.figures`: Appendix F confusion matrices, Figure 4,
Appendix D.2 accuracy against cost), and the sections other task templates
contribute (:mod:`harness.report.sections`); :meth:`Report.write` saves them
(:mod:`harness.report.render`).  The results columns are documented in
:mod:`harness.report.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping

from matplotlib.figure import Figure

from harness.report import figures as figs
from harness.report import tables as tabs
from harness.report.load import ReportError, Results, load_results
from harness.report.render import FORMATS, render
from harness.report.sections import Builder, Section, contribute

__all__ = ["Report", "ReportError", "Section", "build_report", "FORMATS"]


@dataclass
class Report:
    """Tables, figures and messages (refused rows, missing data) of a report."""

    results: Results
    tables: list[tabs.Table] = field(default_factory=list)
    figures: dict[str, Figure] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    figure_paths: dict[str, Path] = field(default_factory=dict)

    def table(self, key: str) -> tabs.Table:
        for table in self.tables:
            if table.key == key:
                return table
        raise KeyError(f"no table {key!r} (have: {', '.join(t.key for t in self.tables)})")

    def save_figures(self, out: Path) -> dict[str, Path]:
        self.figure_paths = figs.save_figures(self.figures, Path(out) / "figures")
        return self.figure_paths

    def render(self, fmt: str, out: Path | None = None) -> str:
        return render(fmt, self.tables, self.messages, self.figure_paths, Path(out) if out else None)

    def write(self, out: Path, fmt: str) -> Path:
        """Save the figures (PNG) and the document in ``fmt`` under ``out``; returns the document path."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.save_figures(out)
        path = out / FORMATS[fmt][0]
        path.write_text(self.render(fmt, out), encoding="utf-8")
        return path


def build_report(run_dirs: Iterable[Path | str], exclude_from_conditions: Iterable[str] = (),
                 with_figures: bool = True, alpha: float = 0.05,
                 sections: Mapping[str, Builder] | None = None) -> Report:
    """Load ``run_dirs`` and build every table and figure their rows support.

    Rows of other task templates go to the section builders registered for them
    (:mod:`harness.report.sections`; ``sections`` replaces the registered ones).
    """
    results = load_results(list(run_dirs))
    report = Report(results, messages=list(results.messages))
    contributed = contribute(results.frame, sections)
    report.messages += contributed.messages
    if with_figures:
        report.figures.update(contributed.figures)
    frame = tabs.tracebench_frame(results.frame)
    if frame.empty:
        report.tables += contributed.tables
        if not contributed.tables:
            report.messages.append("no TraceBench rows: nothing to tabulate")
        return report
    others = sorted(set(frame["setting"]) - {"main", "no-examples", "no-context"})
    if others:
        report.messages.append(f"rows in other settings ({', '.join(others)}) appear only in per-simulator tables")
    agents = tabs.agent_order(frame)
    for table in (tabs.table1(frame, agents), tabs.resources_table(frame, agents)):
        if table is not None:
            report.tables.append(table)
    report.tables += tabs.table2(frame, agents)
    report.tables += tabs.per_simulator_tables(frame, agents)
    t23 = tabs.table23(frame, agents, exclude_from_conditions, alpha)
    if t23 is not None:
        report.tables.append(t23)
    report.tables += contributed.tables
    if with_figures:
        report.figures.update(figs.confusion_figures(frame, agents))
        resource = figs.resource_figure(frame, agents)
        if resource is not None:
            report.figures["figure4-resources"] = resource
        report.figures.update(figs.cost_figures(frame, agents))
    return report

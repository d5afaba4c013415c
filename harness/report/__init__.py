"""``harness report``: tables, paired statistics and figures from run directories.

:func:`build_report` loads the rows of one or more run directories
(:mod:`harness.report.load`, the one reader of result rows) and hands each task
template's rows to the section its plugin registered
(:mod:`harness.report.sections`); :meth:`Report.write` saves the tables and
figures (:mod:`harness.report.render`).  The results columns are documented in
:mod:`harness.report.schema`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import pandas as pd

from matplotlib.figure import Figure

from harness.billing import NOT_SPENT
from harness.report.figures import save_figures
from harness.report.load import ReportError, Results, load_results
from harness.report.render import FORMATS, render, write_tables
from harness.report.sections import _OPTIONS, Builder, ReportOptions, Section, contribute
from harness.report.tables import Table

__all__ = ["Report", "ReportError", "ReportOptions", "Section", "build_report", "FORMATS"]


@dataclass
class Report:
    """Tables, figures and messages (refused rows, missing data) of a report."""

    results: Results
    tables: list[Table] = field(default_factory=list)
    figures: dict[str, Figure] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    figure_paths: dict[str, Path] = field(default_factory=dict)
    written: list[Path] = field(default_factory=list)

    def table(self, key: str) -> Table:
        for table in self.tables:
            if table.key == key:
                return table
        raise KeyError(f"no table {key!r} (have: {', '.join(t.key for t in self.tables)})")

    def save_figures(self, out: Path) -> dict[str, Path]:
        self.figure_paths = save_figures(self.figures, Path(out) / "figures")
        return self.figure_paths

    def render(self, fmt: str, out: Path | None = None) -> str:
        return render(fmt, self.tables, self.messages, self.figure_paths, Path(out) if out else None)

    def write(self, out: Path, fmt: str = "markdown") -> Path:
        """Save the figures (PNG), the Markdown and HTML documents, the document in ``fmt`` and a CSV
        and a LaTeX file per table (``tables/<key>.csv|.tex``) under ``out``; returns the ``fmt``
        document's path (:attr:`written` lists every file)."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        self.save_figures(out)
        self.written = []
        for name in dict.fromkeys(("markdown", "html", fmt)):
            path = out / FORMATS[name][0]
            path.write_text(self.render(name, out), encoding="utf-8")
            self.written.append(path)
        self.written += write_tables(self.tables, out / "tables")
        self.written += list(self.figure_paths.values())
        return out / FORMATS[fmt][0]


def lower_bound_notes(frame) -> list[str]:
    """A note when some episodes' token and cost totals are lower bounds (``usage_missing`` above 0)."""
    if "usage_missing" not in frame.columns:
        return []
    counts = frame["usage_missing"].fillna(0)
    hit = counts[counts > 0]
    if hit.empty:
        return []
    return [f"tokens and cost are lower bounds for {len(hit)} episode(s): {int(hit.sum())} model response(s) "
            "carried no usage or were cut mid-stream (column usage_missing)"]


def offline_cost_notes(frame) -> list[str]:
    """A note when some episodes' costs are no money spent: an offline model backend (a script) answered their
    model calls (``model_billed`` false; :mod:`harness.billing`)."""
    if "model_billed" not in frame.columns:
        return []
    hit = frame[frame["model_billed"].map(lambda v: type(v).__name__ in ("bool", "bool_") and not v)]
    if hit.empty:
        return []
    names = sorted({str(n) for n in hit.get("model_backend", []) if isinstance(n, str)}) or ["offline"]
    return [f"costs of {len(hit)} episode(s) are {NOT_SPENT} ({', '.join(names)}; columns model_backend, "
            "model_billed)"]


def build_report(run_dirs: Iterable[Path | str], exclude_from_conditions: Iterable[str] = (),
                 with_figures: bool = True, alpha: float = 0.05,
                 sections: Mapping[str, Builder] | None = None, paper: bool = False, ci: bool = False,
                 compare: Sequence[tuple[str, str]] = ()) -> Report:
    """Load ``run_dirs`` and build every table and figure their rows support.

    Each template's rows go to the section builder registered for it
    (:mod:`harness.report.sections`; ``sections`` replaces the registered ones),
    which sees the options through :func:`harness.report.sections.report_options`, as does the builder of
    each folder a plugin's ``register_report_folders`` recognises among ``run_dirs``.  ``ci``: intervals on
    the cells (in columns of their own); ``compare``: pairs of selectors compared first
    (:func:`harness.report.paired.compare_frame`; the table ``compare``).
    """
    run_dirs, folders = _split_folders(list(run_dirs))
    if run_dirs or not folders:
        results = load_results(run_dirs)
    else:
        results = Results(pd.DataFrame(), pd.DataFrame())
    report = Report(results, messages=list(results.messages))
    options = ReportOptions(with_figures=with_figures, alpha=alpha,
                            excluded_profiles=tuple(exclude_from_conditions), paper=paper, ci=ci)
    token = _OPTIONS.set(options)  # folder builders read the options as section builders do
    try:
        for path, kind, build in folders:
            try:
                section = build(path)
            except Exception as exc:  # noqa: BLE001  a plugin's failure is a message, not fatal
                report.messages.append(f"{path}: the {kind} report failed: {type(exc).__name__}: {exc}")
                continue
            report.tables += section.tables
            report.messages += section.messages
            if with_figures:
                report.figures.update(section.figures)
        if compare:
            from harness.report.paired import compare_frame

            both = load_results(run_dirs, keep_repeats=True).frame  # two runs of the same episodes: both kept
            report.tables.append(compare_frame(both, compare, alpha, tuple(exclude_from_conditions)))
        contributed = contribute(results.frame, sections)
    finally:
        _OPTIONS.reset(token)
    report.messages += contributed.messages + lower_bound_notes(results.frame) + offline_cost_notes(results.frame)
    report.tables += contributed.tables
    if with_figures:
        report.figures.update(contributed.figures)
    if not report.tables:
        report.messages.append("no rows any report section tabulates: nothing to tabulate")
    report.tables = [t.with_interval_columns(f"{100 * (1 - alpha):.0f}% CI") for t in report.tables]
    return report


def _split_folders(paths: list[Path | str]) -> tuple[list[Path | str], list[tuple[Path, str, Callable]]]:
    """Run directories, and ``(path, kind, build)`` of the folders a plugin's ``register_report_folders``
    recognises (looked up only when some path holds no ``results.parquet``)."""
    if all((Path(p) / "results.parquet").is_file() for p in paths):
        return paths, []
    from harness.plugins import plugins

    kinds = plugins().report_folders()
    runs, folders = [], []
    for p in paths:
        for kind, (recognise, build) in kinds.items():
            if recognise(Path(p)):
                folders.append((Path(p), kind, build))
                break
        else:
            runs.append(p)
    return runs, folders

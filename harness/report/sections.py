"""Report sections contributed by task templates, keyed on the results' ``template`` column.

``harness report`` renders generic things; every table and figure about a
benchmark comes from the section builder its plugin registered through the
``register_report_sections`` hook (:mod:`harness.hookspecs`)::

    @hookimpl
    def register_report_sections(register):
        register("my-template", build)      # build(rows: DataFrame) -> Section

A builder gets only its template's rows (flagged rows were refused before) and
returns tables, figures and messages; it reads the user's report options
(:func:`report_options`) when it has any use for them.  A builder that raises
is reported as a message, not fatal; rows of a template nobody registered are
named in a message.

Rows of one template computed by different code versions (``scorer_version``, ``extractor_versions``:
:mod:`harness.provenance`) are never mixed in one table: the builder is called once per version
(:func:`harness.provenance.version_groups`), and each of its tables gets the version in its key
(``<key>@<version>``) and title (``<title> [scorer 2]``), with a message naming the versions (rows that
record no version join the one version there is).  The report cannot know which table reads which column,
so every table of that template is split.
"""

from __future__ import annotations

import contextvars
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import pandas as pd

from harness.provenance import version_groups
from harness.report.load import ReportError
from harness.report.tables import Table


@dataclass
class Section:
    """What a template contributes to a report: tables, figures (key -> matplotlib ``Figure``), messages."""

    tables: list[Table] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    figures: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ReportOptions:
    """The user's report options, for the builders that use them.

    ``with_figures``: build figures (``--no-figures`` turns it off).  ``alpha``:
    significance level of paired tests.  ``excluded_profiles``: agent profiles
    left out of agent-averaged effects (``--exclude-agent``).  ``paper``: put the paper's values beside
    each reproduced table that has them (``--paper``).  ``ci``: give every mean cell its
    ``1 - alpha`` interval (``--ci``: :func:`harness.report.intervals.mean_interval`, through
    :meth:`harness.report.tables.Table.interval`).
    """

    with_figures: bool = True
    alpha: float = 0.05
    excluded_profiles: tuple[str, ...] = ()
    paper: bool = False
    ci: bool = False


_OPTIONS: contextvars.ContextVar[ReportOptions] = contextvars.ContextVar("report_options", default=ReportOptions())


def report_options() -> ReportOptions:
    """The options of the report being built (defaults outside :func:`harness.report.build_report`)."""
    return _OPTIONS.get()


Builder = Callable[[pd.DataFrame], Section]


def registered_sections() -> dict[str, Builder]:
    """Builders registered by the loaded plugins, by template (first registration wins)."""
    from harness.plugins import plugins

    return {template: build for template, (_, build) in plugins().report_sections().items()}


def contribute(frame: pd.DataFrame, builders: Mapping[str, Builder] | None = None) -> Section:
    """Tables, figures and messages of every template present in ``frame``
    (``builders``: default the registered ones, looked up only when such rows exist)."""
    out = Section()
    if frame.empty or "template" not in frame.columns:
        return out
    templates = list(pd.unique(frame["template"].dropna()))
    if templates and builders is None:
        builders = registered_sections()
    for template in templates:
        rows = frame[frame["template"] == template].reset_index(drop=True)
        build = builders.get(template)
        if build is None:
            out.messages.append(f"{len(rows)} row(s) of template {template!r}: no report section is registered "
                                f"for it (left out)")
            continue
        groups = version_groups(rows)
        if len(groups) > 1:
            out.messages.append(f"template {template!r}: rows of {len(groups)} code versions ("
                                + "; ".join(f"{label}: {len(part)} row(s)" for label, part in groups)
                                + "): its tables and figures are built per version, the version in their "
                                  "titles (`harness rescore RUN` recomputes old rows with today's code)")
        for label, part in groups:
            try:
                section = build(part)
            except ReportError:  # the rows themselves are unusable: the user must hear it, naming the run
                raise
            except Exception as exc:  # noqa: BLE001
                out.messages.append(f"the report section of template {template!r}"
                                    + (f" ({label})" if label else "") + f" failed: {type(exc).__name__}: {exc}")
                continue
            out.tables += [_versioned(t, label) for t in section.tables] if label else section.tables
            out.messages += [f"[{label}] {m}" for m in section.messages] if label else section.messages
            out.figures.update({f"{k}@{_slug(label)}": f for k, f in section.figures.items()} if label
                               else section.figures)
    return out


def _slug(label: str) -> str:
    """A version label as a file-name part: ``scorer 2; extractors usage@1`` -> ``scorer-2-extractors-usage-1``."""
    return re.sub(r"[^A-Za-z0-9.]+", "-", label).strip("-")


def _versioned(table: Table, label: str) -> Table:
    """``table`` of the rows of one code version: its key and title name the version."""
    return replace(table, key=f"{table.key}@{_slug(label)}", title=f"{table.title} [{label}]")

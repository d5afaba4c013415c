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
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pandas as pd

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
        try:
            section = build(rows)
        except ReportError:  # the rows themselves are unusable: the user must hear it, naming the run
            raise
        except Exception as exc:  # noqa: BLE001
            out.messages.append(f"the report section of template {template!r} failed: {type(exc).__name__}: {exc}")
            continue
        out.tables += section.tables
        out.messages += section.messages
        out.figures.update(section.figures)
    return out

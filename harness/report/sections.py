"""Report sections contributed by task templates, keyed on the results' ``template`` column.

``harness report`` builds the TraceBench tables itself; rows of any other
template are handed to the section builder a plugin registered for it through
the ``register_report_sections`` hook (:mod:`harness.hookspecs`)::

    @hookimpl
    def register_report_sections(register):
        register("my-template", build)      # build(rows: DataFrame) -> Section

A builder gets only its template's rows (flagged rows were refused before) and
returns tables and messages.  A builder that raises is reported as a message,
not fatal; rows of a template nobody registered are named in a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

import pandas as pd

from harness.report.tables import Table

#: Templates whose tables ``harness report`` builds itself.
BUILTIN = ("tracebench",)


@dataclass
class Section:
    """What a template contributes to a report."""

    tables: list[Table] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


Builder = Callable[[pd.DataFrame], Section]


def registered_sections() -> dict[str, Builder]:
    """Builders registered by the loaded plugins, by template (first registration wins)."""
    from harness.plugins import plugins

    return {template: build for template, (_, build) in plugins().report_sections().items()}


def contribute(frame: pd.DataFrame, builders: Mapping[str, Builder] | None = None) -> Section:
    """Tables and messages of every non-built-in template present in ``frame``
    (``builders``: default the registered ones, looked up only when such rows exist)."""
    out = Section()
    if frame.empty or "template" not in frame.columns:
        return out
    templates = [t for t in pd.unique(frame["template"].dropna()) if t not in BUILTIN]
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
        except Exception as exc:  # noqa: BLE001
            out.messages.append(f"the report section of template {template!r} failed: {type(exc).__name__}: {exc}")
            continue
        out.tables += section.tables
        out.messages += section.messages
    return out

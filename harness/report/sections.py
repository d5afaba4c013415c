"""Report sections contributed by task templates, keyed on the results' ``template`` column.

``harness report`` builds the TraceBench tables itself; rows of any other
template are handed to the section builder a plugin registered for it through
the ``register_report_sections`` hook (:mod:`harness.hookspecs`)::

    @hookimpl
    def register_report_sections(register):
        register("my-template", build)      # build(rows: DataFrame) -> Section

A builder gets only its template's rows (flagged rows were refused before) and
returns tables, messages and figures.  A builder registered for a built-in template adds
its tables after the built-in ones (e.g. TraceBench's Table 22).  A builder that raises is reported as a message,
not fatal; rows of a template nobody registered are named in a message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import pandas as pd

from harness.report.tables import Table

#: Templates whose tables ``harness report`` builds itself.
BUILTIN = ("tracebench",)


@dataclass
class Section:
    """What a template contributes to a report."""

    tables: list[Table] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    #: matplotlib figures by key; ``harness report`` saves each as ``<out>/figures/<key>.png``.
    figures: dict[str, Any] = field(default_factory=dict)


Builder = Callable[[pd.DataFrame], Section]


def registered_sections() -> dict[str, Builder]:
    """Builders registered by the loaded plugins, by template (first registration wins)."""
    from harness import plugins as registry

    found: dict[str, Builder] = {}
    plugin_set = registry.plugins()
    for impl in plugin_set.pm.hook.register_report_sections.get_hookimpls():
        def register(template: str, build: Builder) -> None:
            if isinstance(template, str) and template and callable(build):
                found.setdefault(template, build)

        try:
            impl.function(register)
        except Exception as exc:  # noqa: BLE001 - a failing plugin costs its own section only
            dist = plugin_set._origin.get(impl.plugin_name, ("(local)", ""))[0]
            plugin_set.problems.append(registry.PluginProblem(dist, impl.plugin_name, "register_report_sections",
                                                              f"raised {type(exc).__name__}: {exc}"))
    return found


def contribute(frame: pd.DataFrame, builders: Mapping[str, Builder] | None = None) -> Section:
    """Tables and messages of every non-built-in template present in ``frame``
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
        if build is None and template in BUILTIN:
            continue
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
        out.figures.update(section.figures)
    return out

"""``harness plugins list``: every registered plugin object, command and report section, with its kind,
plugin, distribution and version."""

from __future__ import annotations

import json

import click
from harness.cli._console import console
from rich.table import Table
from rich.text import Text

from harness.plugins import KINDS, Plugins, distribution_of, plugins


@click.group("plugins")
def plugins_group() -> None:
    """Inspect installed plugins."""


@plugins_group.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_plugins(as_json: bool) -> None:
    """List plugins by kind, with the distribution and version that provides each, and load problems."""
    loaded = plugins()
    rows = [
        {"kind": kind, "name": reg.name, "plugin": reg.plugin, "distribution": reg.distribution,
         "version": reg.version}
        for kind in KINDS for reg in loaded.registry(kind).values()
    ]
    rows += _commands() + _report_sections(loaded) + _export_formats(loaded)
    problems = [{"distribution": p.distribution, "plugin": p.plugin, "hook": p.hook, "reason": p.reason}
                for p in loaded.problems]
    skipped = [{"distribution": d, "version": v} for d, v in sorted(loaded.skipped.items())]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "problems": problems, "not_loaded": skipped}, indent=2))
        return
    table = Table(title="Plugins")
    for col in ("kind", "name", "plugin", "distribution", "version"):
        table.add_column(col)
    for row in rows:
        table.add_row(*(Text(str(row[c])) for c in ("kind", "name", "plugin", "distribution", "version")))
    out = console()
    out.print(table)
    for p in loaded.problems:  # a plugin's error text prints literally: "[x]" in it is no markup
        out.print(Text.assemble(("problem:", "yellow"), f" {p}"), highlight=False)
    for s in skipped:
        out.print(f"not loaded (HARNESS_LOAD_PLUGINS): {s['distribution']} {s['version']}", highlight=False,
                  markup=False)


def _row(kind: str, name: str, plugin: str, distribution: str, version: str) -> dict[str, str]:
    return {"kind": kind, "name": name, "plugin": plugin, "distribution": distribution, "version": version}


def _commands() -> list[dict[str, str]]:
    """Commands plugins add: the entry points of the group ``harness.commands`` (not imported here)."""
    from harness.cli import command_entry_points

    return [_row("command", name, ep.value, *distribution_of(ep)) for name, ep in command_entry_points().items()]


def _report_sections(loaded: Plugins) -> list[dict[str, str]]:
    return [_row("report_section", template, plugin, *loaded.origin(plugin))
            for template, (plugin, _) in loaded.report_sections().items()]


def _export_formats(loaded: Plugins) -> list[dict[str, str]]:
    from harness.cli.export import BUILTIN_FORMATS

    return [_row("export_format", name, plugin, *loaded.origin(plugin))
            for name, (plugin, _) in loaded.exporters({n: "the harness" for n in BUILTIN_FORMATS}).items()]

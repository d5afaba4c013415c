"""``harness plugins list``: every registered plugin object, its kind, distribution and version."""

from __future__ import annotations

import json

import click
from harness.cli._console import console
from rich.table import Table

from harness.plugins import KINDS, plugins


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
    problems = [{"distribution": p.distribution, "plugin": p.plugin, "hook": p.hook, "reason": p.reason}
                for p in loaded.problems]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "problems": problems}, indent=2))
        return
    table = Table(title="Plugins")
    for col in ("kind", "name", "plugin", "distribution", "version"):
        table.add_column(col)
    for row in rows:
        table.add_row(*(str(row[c]) for c in ("kind", "name", "plugin", "distribution", "version")))
    out = console()
    out.print(table)
    for p in loaded.problems:
        out.print(f"[yellow]problem:[/] {p}", highlight=False)

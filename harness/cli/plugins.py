"""``harness plugins list``: every registered plugin object, command, report section, export format and agent
profile a plugin ships, with its kind, plugin, distribution and version.

The table is drawn as rich draws it (:func:`table_lines`: same box, same padding) without importing rich, which
would cost this command about as much as loading every plugin; rich draws it only when it must fold the table
to fit the terminal or a cell is not plain ASCII.
"""

from __future__ import annotations

import json
import os
import sys

import click

from harness.plugins import KINDS, Plugins, distribution_of, plugins

COLUMNS = ("kind", "name", "plugin", "distribution", "version")


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
    rows += _commands(loaded) + _report_sections(loaded) + _export_formats(loaded) + _agent_profiles(loaded)
    problems = [{"distribution": p.distribution, "plugin": p.plugin, "hook": p.hook, "reason": p.reason}
                for p in loaded.problems]
    skipped = [{"distribution": d, "version": v} for d, v in sorted(loaded.skipped.items())]
    if as_json:
        click.echo(json.dumps({"plugins": rows, "problems": problems, "not_loaded": skipped}, indent=2))
        return
    cells = [[str(row[c]) for c in COLUMNS] for row in rows]
    styled = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    lines = table_lines("Plugins", COLUMNS, cells, styled)
    if lines is None or len(lines[1]) > _width():  # lines[1], the top rule, is never styled
        _rich_table("Plugins", COLUMNS, cells)
    else:
        click.echo("\n".join(lines))
    for p in loaded.problems:  # a plugin's error text prints literally: "[x]" in it is no markup
        click.echo(click.style("problem:", fg="yellow") + f" {p}", color=styled)
    for s in skipped:
        click.echo(f"not loaded (HARNESS_LOAD_PLUGINS): {s['distribution']} {s['version']}")


def table_lines(title: str, header: tuple[str, ...], cells: list[list[str]], styled: bool = False) -> list[str] | None:
    """The lines rich prints for ``Table(title=title)`` with these columns and rows when it need not fold it:
    the title centred over the table, a heavy head (``┏━┳━┓``, ``┃``, ``┡━╇━┩``), light rows (``│``) and foot
    (``└─┴─┘``), one space either side of each cell.  ``styled``: the title italic and the header bold (ANSI), as
    on a terminal.  None when a cell or the title is not printable ASCII (its width on screen is rich's to
    measure) or the title is wider than the table (rich folds it)."""
    if not all(text.isascii() and text.isprintable() for row in [[title, *header], *cells] for text in row):
        return None
    widths = [max(len(text) for text in column) for column in zip(header, *cells)]
    table_width = sum(widths) + 3 * len(widths) + 1
    if len(title) > table_width:
        return None

    def line(left: str, sep: str, right: str, fill: str) -> str:
        return left + sep.join(fill * (w + 2) for w in widths) + right

    def row(bar: str, texts: list[str], bold: bool = False) -> str:
        padded = [f" {text.ljust(w)} " for text, w in zip(texts, widths)]
        return bar + bar.join(click.style(p, bold=True) if bold else p for p in padded) + bar

    left = (table_width - len(title)) // 2
    centred = " " * left + title + " " * (table_width - len(title) - left)
    return [click.style(centred, italic=True) if styled else centred, line("┏", "┳", "┓", "━"),
            row("┃", list(header), bold=styled), line("┡", "╇", "┩", "━"),
            *(row("│", texts) for texts in cells), line("└", "┴", "┘", "─")]


def _width() -> int:
    """The console's width as rich takes it: ``$COLUMNS``, else the terminal's, else 160 (output piped)."""
    if os.environ.get("COLUMNS", "").isdigit():
        return int(os.environ["COLUMNS"])
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns if sys.stdout.isatty() else 160
    except (OSError, ValueError):
        return 160


def _rich_table(title: str, header: tuple[str, ...], cells: list[list[str]]) -> None:
    """The table drawn by rich, which folds it to the console's width (imported only then)."""
    from rich.table import Table
    from rich.text import Text

    from harness.cli._console import console

    table = Table(title=title)
    for col in header:
        table.add_column(col)
    for texts in cells:
        table.add_row(*(Text(text) for text in texts))
    console().print(table)


def _row(kind: str, name: str, plugin: str, distribution: str, version: str) -> dict[str, str]:
    return {"kind": kind, "name": name, "plugin": plugin, "distribution": distribution, "version": version}


def _commands(loaded: Plugins) -> list[dict[str, str]]:
    """Commands plugins add: the entry points of the group ``harness.commands`` (not imported here), as read
    with the plugins' own."""
    from harness.cli import command_entry_points

    return [_row("command", name, ep.value, *distribution_of(ep))
            for name, ep in command_entry_points(loaded.entry_points).items()]


def _report_sections(loaded: Plugins) -> list[dict[str, str]]:
    return [_row("report_section", template, plugin, *loaded.origin(plugin))
            for template, (plugin, _) in loaded.report_sections().items()]


def _export_formats(loaded: Plugins) -> list[dict[str, str]]:
    from harness.cli.export import BUILTIN_FORMATS

    return [_row("export_format", name, plugin, *loaded.origin(plugin))
            for name, (plugin, _) in loaded.exporters({n: "the harness" for n in BUILTIN_FORMATS}).items()]


def _agent_profiles(loaded: Plugins) -> list[dict[str, str]]:
    """Profiles plugins ship (``register_agent_profiles``); a profile folder's file of the same name overrides one
    (``harness profiles list`` shows which file ``--agent`` uses)."""
    return [_row("agent_profile", name, plugin, *loaded.origin(plugin))
            for name, (plugin, _) in loaded.agent_profiles().items()]

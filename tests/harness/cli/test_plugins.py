"""``harness plugins list`` draws its table as rich does, without rich, and leaves folding to rich."""

from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from rich.console import Console
from rich.table import Table
from rich.text import Text

from harness.cli import cli
from harness.cli.plugins import COLUMNS, table_lines

ROWS = [["simulator", "balldrop", "balldrop", "tsagent-harness", "0.1.0"],
        ["command", "generate", "tsagent_plugins.tasks.tracebench.cli_generate:generate", "tsagent-harness", "0.1.0"],
        ["judge", "x", "y", "a [bold] dist", ""]]


def rich_lines(title: str, header, cells, width: int = 300, terminal: bool = False) -> list[str]:
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in cells:
        table.add_row(*(Text(text) for text in row))
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=terminal, color_system="standard" if terminal else None).print(table)
    return out.getvalue().splitlines()


WIDE_TITLE = "A title wider than the whole table it stands over: rich folds it"


@pytest.mark.parametrize("title, cells", [("Plugins", ROWS), ("Plugins", ROWS[:1]), ("T", [["", "", "", "", ""]]),
                                          (WIDE_TITLE, [["a", "b", "c", "d", "e"]])])
def test_the_table_is_what_rich_prints(title, cells):
    lines = table_lines(title, COLUMNS, cells)
    if len(title) > len(rich_lines("", COLUMNS, cells)[0]):
        assert lines is None  # rich folds such a title: it is rich's to draw
    else:
        assert lines == rich_lines(title, COLUMNS, cells)


def test_styled_it_is_rich_s_text_with_an_italic_title_and_a_bold_header():
    import click

    styled = table_lines("Plugins", COLUMNS, ROWS, styled=True)
    assert [click.unstyle(line) for line in styled] == rich_lines("Plugins", COLUMNS, ROWS)
    assert styled[0].startswith("\x1b[3m") and "\x1b[1m kind" in styled[2] and "\x1b[" not in styled[4]


def test_a_cell_rich_must_measure_is_left_to_rich():
    assert table_lines("Plugins", COLUMNS, [["agent", "naïve", "p", "d", "1"]]) is None
    assert table_lines("Plugins", COLUMNS, [["agent", "a\tb", "p", "d", "1"]]) is None


def test_the_command_folds_the_table_to_a_narrow_console_with_rich():
    wide = CliRunner().invoke(cli, ["plugins", "list"], env={"COLUMNS": "300"})
    narrow = CliRunner().invoke(cli, ["plugins", "list"], env={"COLUMNS": "70"})
    assert wide.exit_code == narrow.exit_code == 0
    wide_lines, narrow_lines = wide.output.splitlines(), narrow.output.splitlines()
    assert max(map(len, narrow_lines)) <= 70 < max(map(len, wide_lines))
    assert wide_lines[1].startswith("┏") and narrow_lines[1].startswith("┏")
    assert "│ simulator" in wide.output and "│ simulator" in narrow.output

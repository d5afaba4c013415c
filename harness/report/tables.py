"""Report tables: the :class:`Table` every report section returns, and number formatting.

One format per kind of quantity, used by every section:

* accuracies (and other scores in [0, 1]) -- three decimals (:func:`fmt`, :func:`fmt_pm`);
* counts (tool calls, Python statements, plots; a mean of counts too) -- whole numbers (:func:`fmt_count`);
* shares -- percentages with one decimal (:func:`fmt_share`);
* a missing value -- :data:`DASH`, marked by :meth:`Table.explain` with a footnote saying why it is empty.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DASH = "–"
#: Cell styles a :class:`Table` may carry.
STYLES = ("bold", "underline")
#: footnote marks of the dashes, in order of first use
MARKS = "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"
_PLAIN_MARKS = "abcdefghijklmnoprstuvwxyz"


@dataclass
class Table:
    """A rendered table: ``header``, ``rows`` (strings; ``sections`` index section-title rows),
    ``notes`` under it, and ``data`` -- machine-readable records of the numbers shown.

    Every :data:`DASH` in a cell carries a footnote mark (:meth:`explain`) whose note says why the
    cell is empty."""

    key: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    sections: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)  # reason -> mark
    #: (row index, column index) -> styles of that cell, among :data:`STYLES` (each renderer draws them)
    styles: dict[tuple[int, int], set[str]] = field(default_factory=dict)
    #: (row index, column index) -> that cell's confidence interval as text (``harness report --ci``);
    #: :meth:`with_interval_columns` shows them in a column of their own after each such column
    intervals: dict[tuple[int, int], str] = field(default_factory=dict)

    def style(self, row: int, column: int, name: str) -> None:
        """Mark cell (``row``, ``column``) of :attr:`rows` (column 0: the label) ``bold`` or ``underline``:
        Markdown ``**x**`` / ``<ins>x</ins>``, HTML ``<b>`` / ``<u>``, LaTeX ``\\textbf`` / ``\\underline``,
        plain text ``*x*`` / ``_x_``."""
        if name not in STYLES:
            raise ValueError(f"table {self.key}: unknown style {name!r} (known: {', '.join(STYLES)})")
        self.styles.setdefault((row, column), set()).add(name)

    def interval(self, column: int, text: str | None, row: int | None = None) -> None:
        """Give cell (``row``, ``column``) the interval ``text`` (``row`` None: the row :meth:`add` adds
        next; ``text`` None: none)."""
        if text is not None:
            self.intervals[(len(self.rows) if row is None else row, column)] = text

    def with_interval_columns(self, label: str = "95% CI") -> Table:
        """A copy with, after every column some cell of which has an interval, a column ``<header> <label>``
        holding the intervals (:data:`DASH` in the others' cells of data rows; the notes say why);
        ``self`` when no cell has one."""
        if not self.intervals:
            return self
        columns = sorted({c for _, c in self.intervals})
        shift = {c: sum(1 for k in columns if k < c) for c in range(len(self.header))}
        header = []
        for c, name in enumerate(self.header):
            header.append(name)
            if c in columns:
                header.append(f"{name} {label}")
        out = Table(self.key, self.title, header, sections=set(self.sections), notes=list(self.notes),
                    data=self.data, reasons=dict(self.reasons))
        missing = "no interval: fewer than two independent values (simulator–seed pairs, tasks)"
        for r, row in enumerate(self.rows):
            if r in self.sections:
                out.rows.append([row[0]] + [""] * (len(header) - 1))
                continue
            cells = []
            for c, cell in enumerate(row):
                cells.append(cell)
                if c in columns:
                    text = self.intervals.get((r, c))
                    cells.append(text if text is not None else
                                 "" if cell == "" or cell.startswith(DASH) else out.explain(DASH, missing))
            out.rows.append(cells)
        out.styles = {(r, c + shift[c]): set(v) for (r, c), v in self.styles.items()}
        return out

    def section(self, title: str) -> None:
        self.sections.add(len(self.rows))
        self.rows.append([title] + [""] * (len(self.header) - 1))

    def add(self, label: str, cells: list[str]) -> None:
        self.rows.append([label] + cells)

    def explain(self, cell: str, reason: str) -> str:
        """``cell`` with each unmarked :data:`DASH` followed by the footnote mark of ``reason``
        (the note ``–ᵃ <reason>`` is added once per reason)."""
        if DASH not in cell:
            return cell
        mark = self.reasons.get(reason)
        if mark is None:
            if len(self.reasons) >= len(MARKS):
                raise ValueError(f"table {self.key}: more than {len(MARKS)} reasons for empty cells")
            mark = self.reasons[reason] = MARKS[len(self.reasons)]
            self.notes.append(f"{DASH}{mark} {reason}")
        out, i = [], 0
        while i < len(cell):
            out.append(cell[i])
            if cell[i] == DASH and (i + 1 >= len(cell) or cell[i + 1] not in MARKS):
                out.append(mark)
            i += 1
        return "".join(out)

    def unexplained(self) -> list[tuple[int, int]]:
        """(row, column) of cells with a :data:`DASH` that carries no footnote mark."""
        return [(r, c) for r, row in enumerate(self.rows) for c, cell in enumerate(row)
                if any(ch == DASH and (i + 1 >= len(cell) or cell[i + 1] not in MARKS)
                       for i, ch in enumerate(cell))]

    def drop_empty_sections(self) -> None:
        """Remove section titles without rows under them."""
        keep, sections, moved = [], set(), {}
        for index, row in enumerate(self.rows):
            if index in self.sections:
                if index + 1 >= len(self.rows) or index + 1 in self.sections:
                    continue
                sections.add(len(keep))
            moved[index] = len(keep)
            keep.append(row)
        self.rows, self.sections = keep, sections
        self.styles = {(moved[r], c): v for (r, c), v in self.styles.items() if r in moved}
        self.intervals = {(moved[r], c): v for (r, c), v in self.intervals.items() if r in moved}


def plain_mark(mark: str) -> str:
    """The letter of a footnote mark (``ᵃ`` -> ``a``)."""
    return _PLAIN_MARKS[MARKS.index(mark)]


def fmt(value: float | None, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals (accuracies: 3), :data:`DASH` when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{round(value, digits) + 0.0:.{digits}f}"


def fmt_pm(mean: float | None, sd: float | None, digits: int = 3) -> str:
    """``mean ± sd``; :data:`DASH` for a missing mean, ``mean ± –`` for a missing SD."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return DASH
    return f"{fmt(mean, digits)} ± {fmt(sd, digits)}"


def fmt_change(value: float | None, digits: int) -> str:
    """A signed change in parentheses, ``(+1.5)``; ``(–)`` when missing."""
    if value is None or math.isnan(value):
        return f"({DASH})"
    return f"({round(value, digits) + 0.0:+.{digits}f})"


def fmt_count(value: float | None) -> str:
    """A count (or a mean of counts) as a whole number, :data:`DASH` when missing."""
    return fmt(value, 0)


def fmt_share(value: float | None) -> str:
    """A share in [0, 1] as a percentage with one decimal (``0.5`` -> ``50.0%``), :data:`DASH` when missing."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{fmt(100.0 * value, 1)}%"

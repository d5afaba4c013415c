"""Rendering report tables: terminal (rich), Markdown, a static HTML page, JSON; and one CSV and one
LaTeX file per table (:func:`write_tables`)."""

from __future__ import annotations

import csv
import html
import io
import re
import json
import math
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from harness.report.tables import MARKS, Table, plain_mark


def _styled(table: Table, row: int, column: int, text: str, marks: dict[str, tuple[str, str]]) -> str:
    """``text`` wrapped in the ``marks`` (style -> (open, close)) of the cell's styles, bold outermost."""
    for name in reversed([n for n in ("bold", "underline") if n in table.styles.get((row, column), ())]):
        text = marks[name][0] + text + marks[name][1]
    return text


_TEXT_MARKS = {"bold": ("*", "*"), "underline": ("_", "_")}
_MD_MARKS = {"bold": ("**", "**"), "underline": ("<ins>", "</ins>")}
_HTML_MARKS = {"bold": ("<b>", "</b>"), "underline": ("<u>", "</u>")}
_TEX_MARKS = {"bold": (r"\textbf{", "}"), "underline": (r"\underline{", "}")}


def to_text(tables: list[Table], messages: list[str] = (), width: int = 200) -> str:
    """Plain-text tables drawn by rich (what ``--format table`` prints)."""
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=False, color_system=None)
    for message in messages:
        console.print(f"note: {message}", highlight=False, markup=False)
    for table in tables:
        rich_table = RichTable(title=table.title, title_justify="left", show_lines=False)
        for name in table.header:
            rich_table.add_column(escape(name), overflow="fold")
        for index, row in enumerate(table.rows):
            if index in table.sections:
                rich_table.add_section()
                rich_table.add_row(f"[bold]{escape(row[0])}[/bold]", *[""] * (len(row) - 1))
            else:
                rich_table.add_row(*[escape(_styled(table, index, k, c, _TEXT_MARKS)) for k, c in enumerate(row)])
        console.print(rich_table)
        for note in table.notes:
            console.print(note, highlight=False, markup=False)
        console.print()
    return buffer.getvalue()


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|")


def to_markdown(tables: list[Table], messages: list[str] = (), figures: dict[str, str] | None = None) -> str:
    lines: list[str] = ["# Report", ""]
    lines += [f"> {m}" for m in messages]
    if messages:
        lines.append("")
    for table in tables:
        lines += [f"## {table.title}", "", "| " + " | ".join(map(_md_cell, table.header)) + " |",
                  "|" + "|".join(["---"] * len(table.header)) + "|"]
        for index, row in enumerate(table.rows):
            cells = [f"**{_md_cell(row[0])}**"] + [""] * (len(row) - 1) if index in table.sections else \
                [_styled(table, index, k, _md_cell(c), _MD_MARKS) for k, c in enumerate(row)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines += [f"{note}" for note in table.notes]
        lines.append("")
    for key, path in (figures or {}).items():
        lines += [f"![{key}]({path})", ""]
    return "\n".join(lines)


_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:3px 8px;text-align:right;white-space:nowrap}
td:first-child,th:first-child{text-align:left}
tr.section td{background:#eef;font-weight:bold;text-align:left}
caption{caption-side:top;text-align:left;font-weight:bold;margin-bottom:.4em}
p.note{font-size:12px;color:#555;margin:.2em 0}
.message{background:#fff4e0;padding:.5em;border-left:4px solid #e90}
img{max-width:100%;border:1px solid #ddd;margin:.5em 0}"""


def to_html(tables: list[Table], messages: list[str] = (), figures: dict[str, str] | None = None,
            title: str = "Evaluation report") -> str:
    """A self-contained static page (figures linked by relative path)."""
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1>"]
    parts += [f"<p class='message'>{html.escape(m)}</p>" for m in messages]
    for table in tables:
        parts.append(f"<table id='{html.escape(table.key)}'><caption>{html.escape(table.title)}</caption><thead><tr>")
        parts += [f"<th>{html.escape(h)}</th>" for h in table.header]
        parts.append("</tr></thead><tbody>")
        for index, row in enumerate(table.rows):
            if index in table.sections:
                parts.append(f"<tr class='section'><td colspan='{len(row)}'>{html.escape(row[0])}</td></tr>")
            else:
                parts.append("<tr>" + "".join(f"<td>{_styled(table, index, k, html.escape(c), _HTML_MARKS)}</td>"
                                              for k, c in enumerate(row)) + "</tr>")
        parts.append("</tbody></table>")
        parts += [f"<p class='note'>{html.escape(n)}</p>" for n in table.notes]
    for key, path in (figures or {}).items():
        parts.append(f"<h2>{html.escape(key)}</h2><img src='{html.escape(path)}' alt='{html.escape(key)}'>")
    parts.append("</body></html>")
    return "".join(parts)


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _clean(value.item())
    return value


def to_json(tables: list[Table], messages: list[str] = (), figures: dict[str, str] | None = None) -> str:
    document = {
        "messages": list(messages),
        "tables": [{"key": t.key, "title": t.title, "header": t.header, "rows": t.rows,
                    "sections": sorted(t.sections), "notes": t.notes, "data": _clean(t.data),
                    "styles": [[r, c, sorted(v)] for (r, c), v in sorted(t.styles.items())]} for t in tables],
        "figures": dict(figures or {}),
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


FORMATS = {"table": ("report.txt", to_text), "markdown": ("report.md", to_markdown),
           "html": ("index.html", to_html), "json": ("report.json", to_json)}


def render(fmt: str, tables: list[Table], messages: list[str], figures: dict[str, Path], base: Path | None) -> str:
    """Render in ``fmt``; figure paths are made relative to ``base`` (the output folder)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")
    shown = {k: (str(p.relative_to(base)) if base and p.is_relative_to(base) else str(p)) for k, p in figures.items()}
    if fmt == "table":
        return to_text(tables, messages)
    return FORMATS[fmt][1](tables, messages, shown)


def to_csv(table: Table) -> str:
    """The table as CSV: a ``section`` column (the section title of each row), then the header;
    section-title rows themselves are folded into that column.  Notes are not part of the CSV."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["section", *table.header])
    section = ""
    for index, row in enumerate(table.rows):
        if index in table.sections:
            section = row[0]
            continue
        writer.writerow([section, *row])
    return buffer.getvalue()


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
_LATEX_TEXT = {"±": r"$\pm$", "–": "--", "−": "$-$", "×": r"$\times$", "≤": r"$\leq$", "≥": r"$\geq$"}


def latex_escape(text: str) -> str:
    """``text`` safe in a LaTeX tabular cell (special characters escaped, footnote marks superscript)."""
    out = re.sub(r"[\\&%$#_{}~^]", lambda m: _LATEX_SPECIAL[m.group()], text)
    for char, repl in _LATEX_TEXT.items():
        out = out.replace(char, repl)
    return "".join(rf"\textsuperscript{{{plain_mark(c)}}}" if c in MARKS else c for c in out)


def to_latex(table: Table) -> str:
    """The table as a LaTeX ``table`` float holding a booktabs ``tabular`` with one column per header
    entry (section titles span the row in bold); notes follow the tabular in small print."""
    n = len(table.header)
    spec = "l" + "r" * (n - 1)
    lines = [r"\begin{table}[htbp]", r"\centering", rf"\caption{{{latex_escape(table.title)}}}",
             rf"\label{{tab:{re.sub(r'[^A-Za-z0-9:-]', '-', table.key)}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(latex_escape(h) for h in table.header) + r" \\", r"\midrule"]
    for index, row in enumerate(table.rows):
        if index in table.sections:
            if index:
                lines.append(r"\midrule")
            lines.append(rf"\multicolumn{{{n}}}{{l}}{{\textbf{{{latex_escape(row[0])}}}}} \\")
        else:
            lines.append(" & ".join(_styled(table, index, k, latex_escape(c), _TEX_MARKS)
                                    for k, c in enumerate(row)) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if table.notes:
        lines.append(r"\par\smallskip\footnotesize")
        lines += [latex_escape(note) + r"\par" for note in table.notes]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def write_tables(tables: list[Table], folder: Path) -> list[Path]:
    """``<folder>/<key>.csv`` and ``<folder>/<key>.tex`` for every table; returns the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for table in tables:
        for suffix, text in ((".csv", to_csv(table)), (".tex", to_latex(table))):
            path = folder / f"{table.key}{suffix}"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    return paths

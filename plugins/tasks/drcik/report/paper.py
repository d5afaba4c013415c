"""The Dr-CiK paper's stated values and findings beside the reproduced tables (``harness report --paper``).

The team's text copy of the paper (``shared/seeds/002_e814895bd5b3896f.txt``) carries each table's caption but
not its body; its prose states some of the tables' values (Codex's 27.9% evidence recall in Table 3, the cloze
audit's counts in Table 8, ...) and findings (orderings, significance, which agent leads).  ``paper_values.json``
(written by ``scripts/make_drcik_paper_values.py``, which checks every quote against the text copy) holds them
per paper table or figure: ``keys``, the report table (or figure) keys it goes with (:mod:`fnmatch` patterns,
e.g. ``drcik-table3-*`` for every judge's Table 3); its ``caption`` (None for figures: the copy has no figure
captions) and ``section``; and its ``rows``, each of ``kind`` ``value`` (as printed, e.g. ``27.9%``) or
``finding`` (the paper's own words: a claim, not a number), with ``row`` (e.g. the DR agent), ``metric``,
``value``, the verbatim sentence it comes from (``quote``), that sentence's ``line`` in the text copy and its
``section``.  The copy has no page numbers, so rows are cited by section and line.

Each reproduced table an entry goes with gets a companion table ``<key>-paper`` (``Row | Metric | Paper |
Source``) placed right after it; a figure-only entry (Figures 5, 6, 8) gets one after the section's tables when
the section made that figure and the report draws figures.  The tables with no entry are named in one message.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from harness.reporting import DASH, Section, Table

VALUES = Path(__file__).with_name("paper_values.json")
HEADER = ["Row", "Metric", "Paper", "Source"]
KINDS = {"value": "Values stated in the text",
         "finding": "Findings stated in the text (the paper's claims, not values)"}
#: LaTeX left in the text copy's prose and captions -> what it prints
_LATEX = (("↓\\downarrow", "↓"), ("±\\pm", "±"), ("\\times", "×"), ("\\%", "%"), ("$", ""))


def plain(text: str) -> str:
    """``text`` as the paper prints it: the copy's LaTeX leftovers (``$5\\%$``, ``{\\color[rgb]{0,0,0}78\\%}``,
    ``↓\\downarrow``) replaced by what they render, runs of spaces made one."""
    for latex, printed in _LATEX:
        text = text.replace(latex, printed)
    text = re.sub(r"\{\\color\[rgb\]\{[^}]*\}([^}]*)\}", r"\1", text)
    return re.sub(r"\s+", " ", text).strip()


@lru_cache(maxsize=1)
def paper_values() -> dict:
    """The data file: ``source``, ``pages`` (why rows are cited by line), ``entries`` (module docstring)."""
    return json.loads(VALUES.read_text(encoding="utf-8"))


def entry_for(key: str) -> dict | None:
    """The paper entry whose ``keys`` match the report table or figure ``key`` (None: the text states nothing)."""
    return next((e for e in paper_values()["entries"] if any(fnmatchcase(key, k) for k in e["keys"])), None)


def _section_number(heading: str) -> str:
    return "§" + heading.split(" ", 1)[0].rstrip(".")


def paper_table(entry: dict, key: str) -> Table:
    """The companion of the report table (or figure) ``key``: ``entry``'s stated values, then its findings."""
    caption = (". " + plain(entry["caption"]).split(": ", 1)[1] if entry["caption"]
               else " (no caption in the text copy)")
    table = Table(f"{key}-paper", f"Paper values: Dr-CiK {entry['paper']}{caption}", HEADER)
    for kind, title in KINDS.items():
        rows = [r for r in entry["rows"] if r["kind"] == kind]
        if rows:
            table.section(title)
        for r in rows:
            cells = [r["row"], r["metric"], plain(r["value"]), f"{_section_number(r['section'])}, line {r['line']}"]
            # a range's en dash (88–92%) shown as a hyphen: in a report table the en dash marks a missing value
            cells = [c.replace(DASH, "-") for c in cells]
            table.add(cells[0], cells[1:])
            table.data.append({k: r[k] for k in ("kind", "row", "metric", "value", "quote", "line", "section")})
    data = paper_values()
    given = "its caption but not its body" if entry["caption"] else "neither its caption nor its body"
    table.notes.append(f"Dr-CiK {entry['paper']}, section {entry['section']}. The text copy gives {given}, and no page "
                       f"numbers: each row is what its prose states, cited by the section and line of its sentence. "
                       f"Source: {data['source']}.")
    if any(r["kind"] == "finding" for r in entry["rows"]):
        table.notes.append("Findings are the paper's own words (its claims about its full runs), not values to "
                           "match cell by cell.")
    table.notes += entry.get("notes", [])
    return table


def with_paper(section: Section, figures: bool = True) -> Section:
    """``section`` with each table's paper companion right after it, a companion (after the tables) for each
    figure-only entry whose figure the section made (``figures``: the report draws figures; not with
    ``--no-figures``), and a message naming the tables the text states nothing for."""
    tables, without, shown = [], [], set()
    for table in section.tables:
        tables.append(table)
        entry = entry_for(table.key)
        if entry is None:
            without.append(table.key)
            continue
        shown.add(entry["paper"])
        tables.append(paper_table(entry, table.key))
    for key in section.figures if figures else ():
        entry = entry_for(key)
        if entry is not None and entry["paper"] not in shown:
            shown.add(entry["paper"])
            tables.append(paper_table(entry, key))
    messages = list(section.messages)
    if without:
        messages.append(f"--paper: no values stated in the Dr-CiK paper's text for {', '.join(without)}: its "
                        f"text copy ({paper_values()['copy']}) carries captions but not table bodies")
    return Section(tables, messages, section.figures)

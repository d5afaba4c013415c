"""The paper's values beside the reproduced TraceBench tables (``harness report --paper``).

``paper_values.json`` (written by ``scripts/make_paper_values.py`` from the team's text copy of the paper)
holds, per report table key, the paper's table number, caption, the section it appears under, its header
and its rows by section (cells as printed: mean ± within-simulator SD, changes, CIs).  The text copy carries
no page numbers, so tables are cited by number, caption and section.  Each reproduced table with paper
values gets a companion table ``<key>-paper`` placed right after it, with the paper's header and rows.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from harness.reporting import DASH, Table

VALUES = Path(__file__).with_name("paper_values.json")


@lru_cache(maxsize=1)
def paper_values() -> dict:
    return json.loads(VALUES.read_text(encoding="utf-8"))


def paper_table(key: str) -> Table | None:
    """The paper's table for the report table ``key`` (None when the paper has none)."""
    data = paper_values()
    entry = next((t for t in data["tables"] if t["key"] == key), None)
    if entry is None:
        return None
    table = Table(f"{key}-paper", f"Paper values: TraceBench {entry['table']}. {entry['caption']}", entry["header"])
    for part in entry["sections"]:
        if part["title"]:
            table.section(part["title"])
        for row in part["rows"]:
            # the paper prints a value it does not give as an en dash or, in some tables, a hyphen: both a dash here
            table.add(row[0], [table.explain(DASH if cell.strip() == "-" else cell, "not given in the paper")
                               for cell in row[1:]])
    table.notes.append(f"TraceBench {entry['table']}, section {entry['section'] or '?'} ({data['pages']}); "
                       f"source: {data['source']}.")
    return table


def with_paper(tables: list[Table]) -> tuple[list[Table], list[str]]:
    """``tables`` with each one's paper companion right after it, and the keys that have none."""
    out, missing = [], []
    for table in tables:
        out.append(table)
        companion = paper_table(table.key)
        if companion is not None:
            out.append(companion)
        else:
            missing.append(table.key)
    return out, missing

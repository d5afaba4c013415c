"""Cell and text formats the viewer's pages share (numbers, ± spreads, clipped text, a cut list of names) and
the scrubbing of local paths out of a bundle."""

from __future__ import annotations

import re
from typing import Any

#: Characters of one tool output or argument shown; the rest is cut with a note.
CLIP = 20_000
#: Characters of the run index's Tasks cell before the list is cut (the full list is its title).
NAMES_CELL = 200


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _num(value: Any, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pm(mean: float | None, sd: float | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f} ± {sd:.3f}" if sd is not None else f"{mean:.3f}"


def _sortval(value: Any) -> str:
    return "" if value is None else str(value)


#: An absolute local path inside a value (``/home/me/runs/x``, ``C:\runs\x``); a bundle never carries one.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(?:/(?:[\w.+@-]+/)+[\w.+@-]*|[A-Za-z]:\\[^\s\"']+)")


def _last_part(match: re.Match) -> str:
    parts = [p for p in re.split(r"[/\\]", match.group()) if p]
    return f"<{parts[-1] if parts else 'path'}>"


def scrub_paths(value: Any) -> Any:
    """``value`` with every absolute local path replaced by its last part in angle brackets (strings only)."""
    return ABSOLUTE_PATH.sub(_last_part, value) if isinstance(value, str) else value


def _heading(column: str) -> str:
    return column.replace("_", " ")


def _clip(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= CLIP else text[:CLIP] + f"\n… ({len(text) - CLIP:,} more characters not shown)"


def _names_cell(names: list[str], limit: int = NAMES_CELL) -> tuple[str, str | None]:
    """(text, title) of a cell listing ``names``: whole names, comma-separated, as many as fit in
    ``limit`` characters, then "… and N more"; the title is the full list when some were cut, else None."""
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join(shown + [name])) > limit:
            break
        shown.append(name)
    if len(shown) == len(names):
        return ", ".join(names), None
    return f"{', '.join(shown)}, … and {len(names) - len(shown)} more", ", ".join(names)


"""Report tables: the :class:`Table` every report section returns, and number formatting."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

DASH = "–"


@dataclass
class Table:
    """A rendered table: ``header``, ``rows`` (strings; ``sections`` index section-title rows),
    ``notes`` under it, and ``data`` -- machine-readable records of the numbers shown."""

    key: str
    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    sections: set[int] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    data: list[dict[str, Any]] = field(default_factory=list)

    def section(self, title: str) -> None:
        self.sections.add(len(self.rows))
        self.rows.append([title] + [""] * (len(self.header) - 1))

    def add(self, label: str, cells: list[str]) -> None:
        self.rows.append([label] + cells)


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return DASH
    return f"{round(value, digits) + 0.0:.{digits}f}"


def fmt_pm(mean: float | None, sd: float | None, digits: int = 3) -> str:
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return DASH
    return f"{fmt(mean, digits)} ± {fmt(sd, digits)}"


def fmt_change(value: float | None, digits: int) -> str:
    if value is None or math.isnan(value):
        return f"({DASH})"
    return f"({round(value, digits) + 0.0:+.{digits}f})"

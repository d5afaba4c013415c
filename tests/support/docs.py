"""The user documentation as tests read it: the README and every page under docs/."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import REPO

DOCS = REPO / "docs"


def pages() -> list[Path]:
    """README.md and every Markdown page of the documentation site."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def text() -> str:
    """All of the documentation, README first, as one string (for "the docs say …" checks)."""
    return "\n\n".join(p.read_text(encoding="utf-8") for p in pages())


def section(page: str, heading: str) -> str:
    """The text of ``docs/<page>`` under ``heading`` (a line such as ``## Conformance kits``), up to the next
    heading of the same or a higher level; an AssertionError names what is missing."""
    body = (DOCS / page).read_text(encoding="utf-8")
    assert f"\n{heading}\n" in f"\n{body}", f"docs/{page} has no heading {heading!r}"
    level = heading.split(" ", 1)[0]
    after = f"\n{body}".split(f"\n{heading}\n", 1)[1]
    for marker in ["\n" + "#" * n + " " for n in range(1, len(level) + 1)]:
        after = after.split(marker, 1)[0]
    return after

"""Where the tests find the repository and their shared data (``tests/fixtures``, ``tests/golden``)."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent

"""TraceBench's experimental conditions (Section 4.5): the slugs the paper names its settings by.

Read by the params (a task's ``slug``, :mod:`.params`), the template and the release reader (a released pool's
sample assignment per condition), so it lives in none of them.
"""

from __future__ import annotations

#: The paper's condition slugs (Section 4.5): slug -> (noise, submission, context, labeled examples).
PAPER_CONDITIONS = {
    "gentle-cloud": ("low", "direct", True, True),
    "gentle-pine": ("high", "direct", True, True),
    "gentle-flame": ("low", "programmatic", True, True),
    "gentle-orbit": ("high", "programmatic", True, True),
    "frost-pine": ("high", "direct", True, False),
    "frost-orbit": ("high", "programmatic", True, False),
    "gentle-harbor": ("high", "direct", False, True),
    "gentle-tide": ("high", "programmatic", False, True),
}


def paper_slug(noise: str, submission: str, context: bool, examples_per_class: int) -> str | None:
    """The paper's condition slug of these settings (:data:`PAPER_CONDITIONS`); None when the paper
    has no such condition (e.g. low noise without labeled examples)."""
    setting = (noise, submission, context, examples_per_class > 0)
    return next((slug for slug, cond in PAPER_CONDITIONS.items() if cond == setting), None)

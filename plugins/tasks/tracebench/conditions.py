"""TraceBench's experimental conditions (Section 4.5): the slugs the paper names its settings by.

Read by the template (a task's ``slug``) and by the release reader (a released pool's sample assignment per
condition), so it lives in neither.
"""

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

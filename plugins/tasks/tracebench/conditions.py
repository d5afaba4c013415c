"""TraceBench's experimental conditions (Section 4.5): the slugs the paper names its settings by, and a task's
reference to a released pool (whose sample assignment is per condition).

Read by the template (a task's ``slug`` and ``pool``) and by the release reader (a released pool's sample
assignment per condition), so it lives in neither.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

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


class ReleasedPoolRef(BaseModel):
    """``params.pool``: run on a downloaded TraceBench release instead of a generated pool.

    ``path``: the simulator's released directory (``questions.json``, ``sample_manifest.json``,
    ``dataframes/``; :mod:`tsagent_plugins.tasks.tracebench.released`).  ``condition``: the paper's
    condition slug whose sample assignment to use (default: the slug of this task's settings,
    e.g. ``gentle-cloud`` for direct / low noise).  ``noise`` is fixed text recorded in the
    run's parameters: the noise on these clean samples is this harness's model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use

    path: str
    condition: str | None = None
    noise: Literal[
        "clean samples and assignments from the released dataset; observation noise from this "
        "harness's model (the released noise code is not public)"
    ] = ("clean samples and assignments from the released dataset; observation noise from this "
         "harness's model (the released noise code is not public)")

"""The viewer's paired comparison of agents (on the compare index page): the numbers of
``harness report RUNS --compare A B`` for every pair of profiles of a template, from the same code
(:mod:`harness.report.paired`), so the page and the report agree."""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from harness.report.load import ReportError
from harness.report.paired import Contrast, Selector, compare, comparison_table, designs, holm
from harness.report.tables import Table

#: pairs of profiles compared per template at most (the page stays readable)
MAX_PAIRS = 45


def agent_contrasts(frames: Iterable[pd.DataFrame], alpha: float = 0.05) -> list[tuple[str, Table]]:
    """(template, comparison table) for every template with at least two profiles in ``frames`` (rows of the
    loaded runs): each pair of profiles, the better-named first, Holm-corrected within the template."""
    frames = [f for f in frames if not f.empty]
    if not frames:
        return []
    frame = pd.concat(frames, ignore_index=True, sort=False)
    if "template" not in frame.columns or "profile" not in frame.columns:
        return []
    found = designs(pd.unique(frame["template"].dropna()))
    out = []
    for template, design in found.items():
        rows = frame[frame["template"] == template].reset_index(drop=True)
        try:
            rows = design.prepare(rows) if design.prepare else rows
        except ReportError:
            continue
        profiles = sorted(rows["profile"].dropna().astype(str).unique())
        pairs = [(a, b) for i, a in enumerate(profiles) for b in profiles[i + 1:]][:MAX_PAIRS]
        contrasts: list[Contrast] = []
        for a, b in pairs:
            try:
                contrasts += compare(rows, design, Selector(a, (("profile", a),)), Selector(b, (("profile", b),)),
                                     alpha)
            except ReportError:
                continue
        if contrasts:
            holm(contrasts, alpha)
            out.append((str(template), comparison_table(contrasts, alpha, key=f"compare-{template}")))
    return out

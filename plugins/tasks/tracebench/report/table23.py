"""TraceBench Table 23: paired contrasts between agents, conditions and ablations.

Every row is a :func:`harness.reporting.compare_paired` contrast (the statistics layer of
``harness report --compare``) under the template's paired design
(:data:`tsagent_plugins.tasks.tracebench.report.design.PAIRED_DESIGN`): episode
accuracies paired within simulator–seed pairs, averaged within the pair over
what the contrast does not name (agent contrasts over the noise levels both
agents ran, condition effects over agents), with the exhaustive sign-flip
interval and win/tie/loss counts.  Rows come from :func:`.tables.tracebench_frame`.
"""

from __future__ import annotations

from typing import Any, Iterable

import pandas as pd

from harness.reporting import (Contrast, Selector, Table, compare_paired, contrast_record, effect_text,
                               unbounded_note)
from tsagent_plugins.tasks.tracebench.report.tables import MAIN_EXAMPLES, NOISES, SPLITS
from tsagent_plugins.tasks.tracebench.report.design import PAIRED_DESIGN



def _side(column: str, value: str) -> Selector:
    return Selector(f"{column}={value}", ((column, value),))


def contrasts(frame: pd.DataFrame, column: str, first: str, second: str, alpha: float = 0.05,
              metrics: dict[str, str] | None = None) -> list[Contrast]:
    """``first − second`` of ``column`` in ``frame`` (one contrast per submission and split with pairs)."""
    a, b = _side(column, first), _side(column, second)
    if not (a.mask(frame).any() and b.mask(frame).any()):
        return []
    return compare_paired(frame, PAIRED_DESIGN, a, b, alpha, metrics)


def _row(table: Table, label: str, contrast: Contrast, **record: Any) -> None:
    table.add(label, [effect_text(contrast.ci), f"{contrast.wins}/{contrast.ties}/{contrast.losses}",
                      str(contrast.ci.n)])
    table.data.append({"contrast": label, **record, **contrast_record(contrast)})


def table23(frame: pd.DataFrame, agents: list[str], exclude_from_conditions: Iterable[str] = (),
            alpha: float = 0.05) -> Table | None:
    """Paired episode-level differences with sign-flip CIs and W/T/L (TraceBench Table 23)."""
    level = f"{100 * (1 - alpha):.0f}%"
    table = Table("table23", "Table 23. Paired episode-level differences in percentage points "
                  f"[{level} CI by exhaustive sign-flip inversion]", ["Contrast", f"Effect [{level} CI]", "W/T/L", "n"])
    shown: list[Contrast] = []
    main = frame[frame["setting"] == "main"]
    table.section("Agent comparisons (low/high noise averaged)")
    for i, a in enumerate(agents):
        for b in agents[i + 1:]:
            for c in contrasts(main, "profile", a, b, alpha):
                submission, split = c.stratum["submission"], c.metric
                _row(table, f"{a} − {b}, {submission}, {split}", c, kind="agent", first=a, second=b,
                     submission=submission, split=split)
                shown.append(c)
    excluded = set(exclude_from_conditions)
    included = main[~main["profile"].isin(excluded)]
    note = f" ({', '.join(sorted(excluded))} excluded)" if excluded else ""
    table.section(f"Condition effects (agent-averaged{note})")
    for c in contrasts(included, "noise", "low", "high", alpha):
        submission, split = c.stratum["submission"], c.metric
        _row(table, f"Agent average: low − high noise, {submission}, {split}", c, kind="condition",
             contrast_of="noise", submission=submission, split=split)
        shown.append(c)
    for noise in NOISES:
        for c in contrasts(included[included["noise"] == noise], "submission", "direct", "programmatic", alpha,
                           {"episode": SPLITS["episode"]}):
            _row(table, f"Agent average: direct − programmatic, {noise} noise, episode", c, kind="condition",
                 contrast_of="submission", noise=noise, split="episode")
            shown.append(c)
    table.section("Matched ablations")
    for agent in agents:
        for label, setting in (("with − without text", "no-context"), (f"{MAIN_EXAMPLES}-shot − 0-shot", "no-examples")):
            rows = frame[(frame["profile"] == agent) & frame["setting"].isin(("main", setting))]
            for c in contrasts(rows, "setting", "main", setting, alpha):
                submission, split = c.stratum["submission"], c.metric
                _row(table, f"{agent}: {label}, {submission}, {split}", c, kind="ablation", agent=agent,
                     ablation=setting, submission=submission, split=split)
                shown.append(c)
    table.drop_empty_sections()
    if not table.data:
        return None
    table.notes.append("Differences are paired within simulator–seed pairs; agent contrasts are averaged over the "
                       "noise levels both agents ran, condition effects over agents. W/T/L counts positive/zero/"
                       "negative paired differences.")
    table.notes += unbounded_note(shown, alpha)
    return table

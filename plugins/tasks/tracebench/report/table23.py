"""TraceBench Table 23: paired contrasts between agents, conditions and ablations.

Each contrast is a difference of episode accuracies paired within simulator–seed
pairs (agent contrasts averaged over the pairs both agents ran), with a
sign-flip confidence interval and win/tie/loss counts
(:func:`harness.report.stats.sign_flip_ci`, :func:`harness.report.stats.win_tie_loss`).
Rows come from :func:`.tables.tracebench_frame`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np
import pandas as pd

from harness.reporting import Table, sign_flip_ci, win_tie_loss
from tsagent_plugins.tasks.tracebench.report.tables import MAIN_EXAMPLES, NOISES, SPLITS, _episode_means

Values = dict[tuple, float]


def _values(frame: pd.DataFrame, column: str) -> Values:
    series = _episode_means(frame, column)
    return {key: float(v) for key, v in series.items()}


def _pairs(values: Values) -> list[tuple[str, str]]:
    return sorted({(k[4], k[5]) for k in values})


def _paired(values: Values, pair_fn: Callable[[str, str], list[float]]) -> np.ndarray:
    out = []
    for sim, seed in _pairs(values):
        diffs = pair_fn(sim, seed)
        if diffs:
            out.append(float(np.mean(diffs)))
    return np.asarray(out)


def agent_contrast(values: Values, a: str, b: str, submission: str) -> np.ndarray:
    """Per simulator–seed pair: (a − b) on the main setting, averaged over the noise levels both ran."""
    def diffs(sim, seed):
        out = []
        for noise in NOISES:
            ka, kb = (a, "main", noise, submission, sim, seed), (b, "main", noise, submission, sim, seed)
            if ka in values and kb in values:
                out.append(values[ka] - values[kb])
        return out
    return _paired(values, diffs)


def condition_contrast(values: Values, agents: Iterable[str], first: tuple[str, str, str],
                       second: tuple[str, str, str]) -> np.ndarray:
    """Per simulator–seed pair: mean over agents of value(first) − value(second).

    ``first``/``second`` are (setting, noise, submission) triples.
    """
    agents = list(agents)

    def diffs(sim, seed):
        out = []
        for agent in agents:
            k1, k2 = (agent, *first, sim, seed), (agent, *second, sim, seed)
            if k1 in values and k2 in values:
                out.append(values[k1] - values[k2])
        return [float(np.mean(out))] if out else []
    return _paired(values, diffs)


def ablation_contrast(values: Values, agent: str, with_setting: str, without_setting: str,
                      submission: str) -> np.ndarray:
    """Per simulator–seed pair: value(with) − value(without) for one agent, averaged over noise levels."""
    def diffs(sim, seed):
        out = []
        for noise in NOISES:
            k1 = (agent, with_setting, noise, submission, sim, seed)
            k2 = (agent, without_setting, noise, submission, sim, seed)
            if k1 in values and k2 in values:
                out.append(values[k1] - values[k2])
        return out
    return _paired(values, diffs)


def _pp(value: float) -> str:
    """One decimal, without a negative zero."""
    return f"{round(value, 1) + 0.0:.1f}"


def _contrast_row(table: Table, label: str, d: np.ndarray, alpha: float, **record: Any) -> None:
    if d.size == 0:
        return
    ci = sign_flip_ci(d, alpha)
    wins, ties, losses = win_tie_loss(d)
    effect = 100.0 * ci.mean
    if ci.bounded:
        text = f"{_pp(effect)} [{_pp(100 * ci.low)}, {_pp(100 * ci.high)}]"
    else:
        text = f"{_pp(effect)} [unbounded]"
    table.add(label, [text, f"{wins}/{ties}/{losses}", str(ci.n)])
    table.data.append({"contrast": label, **record, "effect_pp": effect, "n": ci.n,
                       "ci_low_pp": 100 * ci.low if ci.bounded else None,
                       "ci_high_pp": 100 * ci.high if ci.bounded else None,
                       "ci_unbounded": not ci.bounded, "min_p": ci.min_p, "method": ci.method,
                       "wins": wins, "ties": ties, "losses": losses})


def table23(frame: pd.DataFrame, agents: list[str], exclude_from_conditions: Iterable[str] = (),
            alpha: float = 0.05) -> Table | None:
    """Paired episode-level differences with sign-flip CIs and W/T/L (TraceBench Table 23)."""
    table = Table("table23", "Table 23. Paired episode-level differences in percentage points "
                  f"[{100 * (1 - alpha):.0f}% CI by exhaustive sign-flip inversion]",
                  ["Contrast", f"Effect [{100 * (1 - alpha):.0f}% CI]", "W/T/L", "n"])
    splits = [("direct", "episode"), ("programmatic", "episode"), ("programmatic", "held-out")]
    values = {split: _values(frame, column) for split, column in SPLITS.items()}
    before = len(table.rows)
    table.section("Agent comparisons (low/high noise averaged)")
    for i, a in enumerate(agents):
        for b in agents[i + 1:]:
            for submission, split in splits:
                d = agent_contrast(values[split], a, b, submission)
                _contrast_row(table, f"{a} − {b}, {submission}, {split}", d, alpha, kind="agent", first=a,
                              second=b, submission=submission, split=split)
    excluded = set(exclude_from_conditions)
    included = [a for a in agents if a not in excluded]
    note = f" ({', '.join(sorted(excluded))} excluded)" if excluded else ""
    table.section(f"Condition effects (agent-averaged{note})")
    for submission, split in splits:
        d = condition_contrast(values[split], included, ("main", "low", submission), ("main", "high", submission))
        _contrast_row(table, f"Agent average: low − high noise, {submission}, {split}", d, alpha,
                      kind="condition", contrast_of="noise", submission=submission, split=split)
    for noise in NOISES:
        d = condition_contrast(values["episode"], included, ("main", noise, "direct"), ("main", noise, "programmatic"))
        _contrast_row(table, f"Agent average: direct − programmatic, {noise} noise, episode", d, alpha,
                      kind="condition", contrast_of="submission", noise=noise, split="episode")
    table.section("Matched ablations")
    for agent in agents:
        for label, setting in (("with − without text", "no-context"), (f"{MAIN_EXAMPLES}-shot − 0-shot", "no-examples")):
            for submission, split in splits:
                d = ablation_contrast(values[split], agent, "main", setting, submission)
                _contrast_row(table, f"{agent}: {label}, {submission}, {split}", d, alpha, kind="ablation",
                              agent=agent, ablation=setting, submission=submission, split=split)
    table.drop_empty_sections()
    if len(table.rows) == before or not table.data:
        return None
    unbounded = [r for r in table.data if r["ci_unbounded"]]
    table.notes.append("Differences are paired within simulator–seed pairs; agent contrasts are averaged over the "
                       "noise levels both agents ran, condition effects over agents. W/T/L counts positive/zero/"
                       "negative paired differences.")
    if unbounded:
        ns = sorted({r["n"] for r in unbounded})
        table.notes.append(
            f"{len(unbounded)} contrast(s) have an unbounded {100 * (1 - alpha):.0f}% interval: with n = "
            f"{', '.join(map(str, ns))} pairs the smallest attainable two-sided p-value (2/2^n = "
            f"{', '.join(f'{2 / 2 ** n:.4g}' for n in ns)}) exceeds {alpha}, so no shift can be rejected.")
    return table

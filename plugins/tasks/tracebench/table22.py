"""TraceBench Table 22 (Appendix E): classical baselines beside the agents, direct answer.

Rows are episodes of the matched visible-test direct-answer condition: domain
context, :data:`EXAMPLES` labeled examples per class, ``submission: direct``;
accuracy is top-1 on the episode batch.  Columns: each simulator under low and
high noise, then the aggregate under low and high noise.

* Per-simulator cell: mean ± sample SD (ddof = 1) over the repetition seeds
  (several rows of one seed are averaged first).
* Aggregate cell: the pooled mean over simulators and seeds ± the
  within-simulator SD (Section 4.2, as in Table 1:
  :func:`harness.report.stats.within_simulator_sd`).
* Chance row: analytic uniform guessing, 1 / number of classes per simulator,
  and their mean over simulators in the aggregate (paper: 0.200 / 0.167 / 0.200,
  aggregate 0.189).

Method rows come first in :data:`BASELINES` order (those present), then the
chance row, then every other profile (LLM agents), best aggregate first.  The
table is built only when some row is a classical baseline.
"""

from __future__ import annotations

import math

import pandas as pd

from harness.reporting import Table, within_simulator_sd
from tsagent_plugins.tasks.tracebench.report.answers import class_count

EXAMPLES = 3
NOISES = ("low", "high")
#: agent plugin -> row label, in the paper's order (ordinary and privileged pairs, then random guessing)
BASELINES = {
    "euclidean-1nn": "Euclidean 1-NN",
    "euclidean-1nn-privileged": "Euclidean 1-NN (privileged)",
    "dtw-1nn": "DTW 1-NN",
    "dtw-1nn-privileged": "DTW 1-NN (privileged)",
    "minirocket-ridge": "MiniRocket + ridge",
    "minirocket-ridge-privileged": "MiniRocket + ridge (privileged)",
    "random": "Random guessing (empirical)",
}
CHANCE = "Uniform random guessing (analytic)"
DASH = "–"


def _truthy(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value) and not pd.isna(value)


def matched_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The matched direct-answer rows (context, 3 examples per class), one per episode identity."""
    need = {"profile", "simulator", "noise", "submission", "seed", "accuracy"}
    if frame.empty or not need <= set(frame.columns):
        return frame.iloc[0:0]
    rows = frame[(frame["submission"] == "direct")]
    if "context" in rows.columns:
        rows = rows[rows["context"].map(_truthy)]
    if "examples_per_class" in rows.columns:
        rows = rows[pd.to_numeric(rows["examples_per_class"], errors="coerce") == EXAMPLES]
    return rows


def fmt(mean: float | None, sd: float | None) -> str:
    """``0.420 ± 0.084``; ``0.420`` without a spread; a dash without a value."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return DASH
    return f"{mean:.3f}" if sd is None or math.isnan(sd) else f"{mean:.3f} ± {sd:.3f}"


def cells(rows: pd.DataFrame, simulators: list[str]) -> tuple[list[str], list[dict]]:
    """One profile's cells: per simulator × noise (mean ± SD over seeds), then aggregate × noise."""
    per_seed = rows.groupby(["simulator", "noise", "seed"], as_index=False)["accuracy"].mean()
    out, data = [], []
    for sim in simulators:
        for noise in NOISES:
            acc = per_seed[(per_seed["simulator"] == sim) & (per_seed["noise"] == noise)]["accuracy"].dropna()
            mean = float(acc.mean()) if len(acc) else None
            sd = float(acc.std(ddof=1)) if len(acc) > 1 else None
            out.append(fmt(mean, sd))
            data.append({"simulator": sim, "noise": noise, "mean": mean, "sd": sd, "n": int(len(acc))})
    for noise in NOISES:
        sub = per_seed[(per_seed["noise"] == noise) & per_seed["simulator"].isin(simulators)].dropna(subset=["accuracy"])
        mean = float(sub["accuracy"].mean()) if len(sub) else None
        sd = within_simulator_sd(sub["accuracy"].tolist(), sub["simulator"].tolist()) if len(sub) else None
        out.append(fmt(mean, sd))
        data.append({"simulator": "aggregate", "noise": noise, "mean": mean, "sd": sd, "n": int(len(sub))})
    return out, data


def chance_by_simulator(rows: pd.DataFrame) -> dict[str, float]:
    """1 / number of classes for each simulator (mean over its episodes' class counts)."""
    out = {}
    for sim, group in rows.groupby("simulator"):
        counts = [c for c in (class_count(r) for _, r in group.iterrows()) if c]
        if counts:
            out[str(sim)] = sum(1.0 / c for c in counts) / len(counts)
    return out


def table22(frame: pd.DataFrame) -> Table | None:
    """The Table 22 layout for the rows of ``frame``, or None when no classical baseline ran."""
    rows = matched_rows(frame)
    if rows.empty or "agent" not in rows.columns or not rows["agent"].isin(list(BASELINES)).any():
        return None
    simulators = sorted(map(str, rows["simulator"].dropna().unique()))
    header = ["Method"] + [f"{sim} {noise}" for sim in simulators for noise in NOISES] + \
             [f"Aggregate {noise}" for noise in NOISES]
    table = Table("table22", "Table 22. Visible-test accuracy of the classical baselines and agents "
                  "(direct answer, context, 3 labeled examples per class)", header)
    baseline_rows = rows[rows["agent"].isin(list(BASELINES))]
    present = [a for a in BASELINES if a in set(baseline_rows["agent"])]
    for agent in present:
        for profile, group in baseline_rows[baseline_rows["agent"] == agent].groupby("profile", sort=True):
            label = BASELINES[agent] if profile == agent else f"{BASELINES[agent]} [{profile}]"
            shown, data = cells(group, simulators)
            table.add(label, shown)
            table.data += [{"row": label, "profile": profile, **d} for d in data]
    chance = chance_by_simulator(rows)
    chance_cells = [fmt(chance.get(sim), None) for sim in simulators for _ in NOISES]
    known = [chance[s] for s in simulators if s in chance]
    agg = sum(known) / len(known) if known else None
    table.add(CHANCE, chance_cells + [fmt(agg, None)] * len(NOISES))
    table.data += [{"row": CHANCE, "simulator": s, "mean": chance.get(s)} for s in simulators]
    table.data.append({"row": CHANCE, "simulator": "aggregate", "mean": agg})
    others = rows[~rows["agent"].isin(list(BASELINES))]
    if not others.empty:
        table.section("Agents")
        ranked = sorted(others.groupby("profile"), key=lambda kv: -kv[1]["accuracy"].mean())
        for profile, group in ranked:
            shown, data = cells(group, simulators)
            table.add(str(profile), shown)
            table.data += [{"row": str(profile), "profile": profile, **d} for d in data]
    table.notes.append("Per simulator: mean ± sample SD (ddof = 1) over repetition seeds. Aggregate: pooled mean "
                       "over simulators and seeds ± within-simulator SD (Section 4.2). Chance: 1 / classes.")
    return table



# -- our cells against the paper's (issue criteria for reproducing Table 22) ------------------------------
#: At most this many of the 36 per-simulator cells may lie outside the paper's spread (about 4 are by chance).
MAX_OUTSIDE = 7
#: A method may not lie outside in the same direction on this many of its 6 per-simulator cells.
MAX_SAME_SIDE = 3


def read_paper(path) -> pd.DataFrame:
    """The paper's Table 22 as rows ``agent, simulator, noise, mean, sd`` (a CSV with ``#`` comment lines).

    Raises ValueError naming the file and the missing column."""
    paper = pd.read_csv(path, comment="#")
    missing = {"agent", "simulator", "noise", "mean", "sd"} - set(paper.columns)
    if missing:
        raise ValueError(f"{path}: missing column(s) {sorted(missing)}")
    return paper


def compare(frame: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Every cell of ``paper`` beside ours from the run rows ``frame``.

    Returns rows ``agent, simulator, noise, mean, sd, ours, ours_sd, diff`` (ours - paper), ``outside``
    (|ours - paper| > paper SD; None without our cell) and ``side`` (+1 above, -1 below, 0 inside).
    Ours are :func:`cells` of the matched direct-answer rows of each baseline profile (the profile named
    like the agent plugin, as ``tasks/experiments/baselines.yaml`` runs them)."""
    rows = matched_rows(frame)
    simulators = [s for s in dict.fromkeys(paper["simulator"]) if s != "aggregate"]
    ours: dict[tuple, tuple] = {}
    baseline_rows = rows[rows["profile"].isin(list(BASELINES))] if not rows.empty else rows
    for agent, group in baseline_rows.groupby("profile"):
        present = [s for s in simulators if s in set(group["simulator"])]
        for d in cells(group, present)[1]:
            ours[(agent, d["simulator"], d["noise"])] = (d["mean"], d["sd"])
    out = []
    for r in paper.itertuples(index=False):
        mean, sd = ours.get((r.agent, r.simulator, r.noise), (None, None))
        row = {"agent": r.agent, "simulator": r.simulator, "noise": r.noise, "mean": float(r.mean), "sd": float(r.sd),
               "ours": mean, "ours_sd": sd, "diff": None, "outside": None, "side": None}
        if mean is not None:
            diff = mean - float(r.mean)
            outside = abs(diff) > float(r.sd) + 1e-12
            row.update(diff=diff, outside=outside, side=(1 if diff > 0 else -1) if outside else 0)
        out.append(row)
    return pd.DataFrame(out)


def criteria(cmp: pd.DataFrame) -> dict:
    """The reproduction criteria on :func:`compare`'s rows.

    ``outside`` (per-simulator cells outside the paper's spread), ``cells`` (per-simulator cells compared),
    ``same_side`` {agent: most cells outside on one side}, ``aggregate_outside`` (aggregate cells outside), and
    ``met``: ``outside <= MAX_OUTSIDE``, no agent with ``MAX_SAME_SIDE`` or more on one side, no aggregate outside,
    every cell compared."""
    per_sim = cmp[cmp["simulator"] != "aggregate"]
    agg = cmp[cmp["simulator"] == "aggregate"]
    n_outside = int((per_sim["outside"] == True).sum())  # noqa: E712 - None means "not run"
    same_side = {}
    for agent, group in per_sim.groupby("agent", sort=False):
        sides = group["side"].dropna()
        same_side[agent] = int(max((sides == 1).sum(), (sides == -1).sum())) if len(sides) else 0
    agg_outside = int((agg["outside"] == True).sum())  # noqa: E712
    complete = bool(cmp["ours"].notna().all())
    met = complete and n_outside <= MAX_OUTSIDE and all(v < MAX_SAME_SIDE for v in same_side.values()) \
        and agg_outside == 0
    return {"outside": n_outside, "cells": int(per_sim["ours"].notna().sum()), "same_side": same_side,
            "aggregate_outside": agg_outside, "complete": complete, "met": met}


def explain(kept: pd.DataFrame, others: dict[str, pd.DataFrame]) -> tuple[pd.DataFrame, dict[tuple, list[str]]]:
    """Misses of ``kept`` that another reading of a documented ambiguity puts inside the paper's spread.

    ``kept``: :func:`compare` rows of the kept readings; ``others``: reading name -> :func:`compare` rows of a
    run under that other reading (only the cells it affects need be present; a cell without our value is not
    run).  A per-simulator cell outside the spread is explained when some other reading was run for it and
    lies inside.  Returns ``kept`` with explained cells marked inside (``outside`` False, ``side`` 0), for
    :func:`criteria`, and ``{(agent, simulator, noise): [reading names]}`` of the explained cells."""
    explained: dict[tuple, list[str]] = {}
    misses = kept[(kept["outside"] == True) & (kept["simulator"] != "aggregate")]  # noqa: E712
    for r in misses.itertuples():
        for name, cmp in others.items():
            hit = cmp[(cmp["agent"] == r.agent) & (cmp["simulator"] == r.simulator) & (cmp["noise"] == r.noise)
                      & cmp["ours"].notna()]
            if len(hit) and hit.iloc[0]["outside"] == False:  # noqa: E712
                explained.setdefault((r.agent, r.simulator, r.noise), []).append(name)
    excused = kept.copy()
    for agent, simulator, noise in explained:
        at = (excused["agent"] == agent) & (excused["simulator"] == simulator) & (excused["noise"] == noise)
        excused.loc[at, "outside"] = False
        excused.loc[at, "side"] = 0
    return excused, explained

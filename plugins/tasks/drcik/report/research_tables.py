"""Dr-CiK deep-research reports (paper Section 5.3–5.4): Table 3, Figure 16, Figure 7, Table 2 with
one column per DR agent, the Figure 4 statistics, and breakdowns by task origin.

Inputs: DR metric rows (:mod:`~tsagent_plugins.tasks.drcik.research.scoring`, one per agent × task, each naming its judge) and
forecasting rows (``forecaster``, ``context``, ``benchmark_id``, ``status``, ``scrps``,
``smae``; DR conditions also ``evidence_agent``).  Rules kept everywhere:

- a table never mixes judges: DR tables are built per judge label, the label in the title;
- supporting-document recall uses the task's supporting set S_t, because the release gives no
  per-item required-document set R_e (said in the notes);
- percentages are of evidence items (pooled) or means over tasks ± standard error.

Statistics (scipy.stats): Figure 4's one-sided Wilcoxon signed-rank test of paired sMAE,
raw DR (``dr-evidence``) against verified DR (``verified-dr``), pairs = (forecaster, DR agent,
task) pooled across forecasters, alternative "raw > verified"; and per forecaster the Spearman
correlation over (agent, task) pairs between the task's evidence recall and its sCRPS gain
(no-context sCRPS − dr-evidence sCRPS).  Fewer than :data:`MIN_N` pairs prints "n < 10"
instead of a p-value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from harness.reporting import DASH, Table
from tsagent_plugins.tasks.drcik.dataset.contexts import CONDITIONS, DR_CONDITIONS
from tsagent_plugins.tasks.drcik.report import strata
from tsagent_plugins.tasks.drcik.report.cells import (ALL_FAILED, NO_CITATION, NO_DISTRACTOR, NO_EVIDENCE,
                                                      NO_SUPPORTING, mean_se, pct, pct_pm, pm)
from tsagent_plugins.tasks.drcik.report.figures import (_agents, agent_colours, figure6, figure16, figure16_table,
                                                        table11)
from tsagent_plugins.tasks.drcik.research import metrics as m
from tsagent_plugins.tasks.drcik.research.scoring import failed, scored, task_scores

if TYPE_CHECKING:
    from matplotlib.figure import Figure

MIN_N = 10
#: Figure 7: points closer than this share of each axis span count as coinciding and are shifted by
#: it; larger than the TraceBench figures' default because a hops axis has few, widely spaced values.
FIGURE7_STEP = 0.03
S_T_NOTE = ("Supporting-document recall uses the task's supporting documents S_t: the public release gives "
            "no per-item required-document set R_e (Appendix H.1).")


def by_judge(rows: list[dict]) -> dict[str, list[dict]]:
    """DR rows grouped by judge label (``name@version (kind)``), in first-seen order."""
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["judge_label"], []).append(r)
    return out


def _judge_notes(label: str, rows: list[dict]) -> list[str]:
    kind = rows[0].get("judge_kind")
    notes = [f"Judge: {label}. One judgement per ground-truth item of E_t (E1 excluded) against the agent's "
             "top K_t = |E_t| + 5 claims in its own order (Appendix H.1)."]
    if kind != "llm":
        notes.append(f"The {kind} judge is an offline stand-in for the paper's LLM judge: its recall is not the "
                     "paper's number.")
    bad = sum(r.get("judge_malformed", 0) + r.get("judge_errors", 0) for r in rows)
    if bad:
        notes.append(f"{bad} judgement(s) malformed or failed: counted as not matched.")
    return notes


def _failed_note(rows: list[dict]) -> list[str]:
    bad = failed(rows)
    if not bad:
        return []
    reasons = pd.Series([r.get("reason") or "?" for r in bad]).value_counts()
    return [f"Failed: {len(bad)} research episode(s) that did not finish (the agent crashed, timed out or was "
            "refused) are counted in this column and left out of every mean, never scored as zeros. Reasons: "
            + "; ".join(f"{str(r)[:120]} ({n}x)" for r, n in reasons.head(3).items())
            + ("; ..." if len(reasons) > 3 else "") + "."]


def table3(rows: list[dict]) -> Table:
    """Table 3 for one judge's rows: evidence recall (pooled and mean ± SE over tasks),
    supporting-document recall, distractor avoidance (share of cited documents that are not distractors,
    the release scorer's reading, :mod:`~tsagent_plugins.tasks.drcik.research.metrics`), the share of the task's distractors D_t left uncited,
    hallucinated ids (distinct per task, and occurrences); failed episodes counted apart."""
    label = rows[0]["judge_label"]
    fails = failed(rows)
    ok = scored(rows)
    agg = m.aggregate(task_scores(ok))
    header = ["DR agent", "Tasks", "Failed", "Evidence recall (pooled)", "Evidence recall (mean over tasks)",
              "Supp. doc recall", "Distractor avoidance (cited not distractors)", "Tasks with citations",
              "Task distractors uncited (D_t)", "Hallucinated ids", "Hallucinated id occurrences"]
    table = Table(f"drcik-table3-{rows[0]['judge']}", f"Dr-CiK Table 3. Deep-research metrics per DR agent "
                  f"(judge {label})", header)
    for agent in _agents(rows):
        mine = [r for r in ok if r["agent"] == agent]
        n_failed = sum(r["agent"] == agent for r in fails)
        a = agg.get(agent)
        if a is None:
            none = table.explain(DASH, ALL_FAILED)
            table.add(agent, ["0", str(n_failed), *[none] * 4, "0", none, none, none])
            table.data.append({"agent": agent, "judge": label, "tasks": 0, "failed": n_failed})
            continue
        table.add(agent, [str(a.tasks), str(n_failed), pct(table, a.evidence_recall_pooled, NO_EVIDENCE),
                          pct_pm(table, *mean_se(r["evidence_recall"] for r in mine), NO_EVIDENCE),
                          pct_pm(table, *mean_se(r["supporting_recall"] for r in mine), NO_SUPPORTING),
                          pct_pm(table, *mean_se(r["distractor_avoidance"] for r in mine), NO_CITATION),
                          str(a.avoidance_tasks),
                          pct_pm(table, *mean_se(r.get("distractors_uncited") for r in mine), NO_DISTRACTOR),
                          str(a.hallucinated), str(a.hallucinated_occurrences)])
        table.data.append({"agent": agent, "judge": label, "failed": n_failed,
                           **{k: v for k, v in vars(a).items() if k != "agent"}})
    table.notes += _judge_notes(label, ok or rows)
    table.notes.append(S_T_NOTE)
    table.notes.append("Distractor avoidance (the column Table 3 reports) = 1 − |Q_t \\ S_t| / |Q_t|, the share of "
                       "cited documents that are not distractors (every cited document outside S_t, other tasks' "
                       "included), mean over the tasks with at least one citation, as the release's scorer defines "
                       "it. The paper gives Q_t, D_t and P_t but no formula, and reads the number as what the "
                       "citations let in: \"Codex also leads in distractor avoidance, yet at 42.3% still admits "
                       "most distractors\" (Section 5.3). Task distractors uncited = 1 − |Q_t ∩ D_t| / |D_t|, the "
                       "other reading (share of the task's own distractors left uncited, Appendix I.2's per-subtype "
                       "view), mean over every task with distractors, tasks citing nothing included. Q_t: every "
                       "resolved document cited by the evidence items or the report (Appendix H.1).")
    table.notes.append("Hallucinated ids: unresolved citations (dropped before every metric), counted once per "
                       "distinct id per task (the paper does not say; Appendix I.1 counts \"two unresolved "
                       "document IDs\"); occurrences: every unresolved citation.")
    table.notes += _failed_note(rows)
    return table


def table3_by_origin(rows: list[dict]) -> Table:
    """Table 14: deep-research metrics by input source (the task's ``origin``), one judge; tasks without an
    origin form a row of their own (its origin a dash saying so)."""
    label, judge = rows[0]["judge_label"], rows[0]["judge"]
    rows = scored(rows)
    header = ["DR agent", "Origin", "Tasks", "Evidence recall (pooled)", "Supp. doc recall", "Distractor avoidance"]
    table = Table(f"drcik-table14-{judge}", f"Dr-CiK Table 14. Deep-research evidence recall by input source "
                  f"(task origin; judge {label})", header)
    for agent in _agents(rows):
        for origin in dict.fromkeys(r.get("origin") or None for r in rows if r["agent"] == agent):
            mine = [r for r in rows if r["agent"] == agent and (r.get("origin") or None) == origin]
            a = m.aggregate(task_scores(mine))[agent]
            shown = str(origin) if origin is not None else table.explain(DASH, "the tasks give no origin")
            table.add(agent, [shown, str(a.tasks), pct(table, a.evidence_recall_pooled, NO_EVIDENCE),
                              pct(table, a.supporting_recall, NO_SUPPORTING),
                              pct(table, a.distractor_avoidance, NO_CITATION)])
            table.data.append({"agent": agent, "origin": origin, "tasks": a.tasks,
                               "evidence_recall_pooled": a.evidence_recall_pooled,
                               "supporting_recall": a.supporting_recall, "distractor_avoidance": a.distractor_avoidance})
    table.notes.append(S_T_NOTE)
    return table


def figure7_table(rows: list[dict]) -> Table:
    """Figure 7 as numbers: pooled evidence recall per agent × ``reasoning_hops``."""
    label = rows[0]["judge_label"]
    rows = scored(rows)
    recall = m.recall_by(task_scores(rows), "reasoning_hops")
    hops = sorted({h for _, h in recall}, key=lambda h: (h is None, h))
    names = {h: f"{h} hops" if h is not None else "hops not given" for h in hops}
    table = Table(f"drcik-figure7-{rows[0]['judge']}", f"Dr-CiK Figure 7. Evidence recall (pooled) by reasoning "
                  f"hops (judge {label})", ["DR agent", *names.values()])
    for agent in _agents(rows):
        table.add(agent, [pct(table, recall.get((agent, h)), NO_EVIDENCE if (agent, h) in recall else
                              "this agent ran no task with this hop count") for h in hops])
        table.data += [{"agent": agent, "reasoning_hops": h, "evidence_recall": recall.get((agent, h))} for h in hops]
    counts = {h: len({r["benchmark_id"] for r in rows if r.get("reasoning_hops") == h}) for h in hops}
    table.notes.append("Tasks per hop count: " + ", ".join(f"{names[h]}: {n}" for h, n in counts.items()) + ".")
    return table


def figure7(rows: list[dict]):
    """Figure 7 (matplotlib Figure): pooled evidence recall (%) by reasoning hops, one line per agent.

    Each agent has its own colour and open marker (:func:`harness.series_style`); points of several
    agents that coincide (same hops, recall within :data:`FIGURE7_STEP` of the axis) are shifted right
    by :func:`harness.spread_coinciding`, one step per agent already there, so none hides another (the
    Figure 7 table holds the exact values); the legend is outside the axes.  An (agent, hops) group
    with no evidence items has no recall and draws no point."""
    from harness.reporting import new_figure, no_data, outside_legend, series_style, spread_coinciding

    recall = m.recall_by(task_scores(rows), "reasoning_hops")
    agents = _agents(scored(rows))
    hops = sorted({h for _, h in recall if h is not None})
    points = [(agent, h, 100 * recall[(agent, h)]) for agent in agents for h in hops
              if recall.get((agent, h)) is not None]
    fig = new_figure(figsize=(7.5, 4))
    ax = fig.subplots()
    ax.set_title(f"Evidence recall by reasoning hops (coinciding points shifted right)\n"
                 f"judge {rows[0]['judge_label']}", fontsize=9)
    if not points:
        no_data(ax, "no evidence items with a reasoning-hops label")
        return fig
    low, high = hops[0] - 0.5, hops[-1] + 0.5
    offsets = spread_coinciding([(h, r) for _, h, r in points], high - low, 106.0, FIGURE7_STEP)
    colours = agent_colours(r["agent"] for r in rows)   # an agent's colour in every Dr-CiK figure
    for i, agent in enumerate(agents):
        mine = [(h + shift, r) for (a, h, r), shift in zip(points, offsets, strict=True) if a == agent]
        style = {**series_style(i), "color": colours[agent], "markeredgecolor": colours[agent]}
        ax.plot([x for x, _ in mine], [y for _, y in mine], label=agent, **style)
    ax.set_xlim(low, high + max(offsets))
    ax.set_xticks(hops)
    ax.set_xlabel("reasoning hops")
    ax.set_ylabel("evidence recall (%)")
    ax.set_ylim(-3, 103)
    outside_legend(fig, [ax])
    return fig


def dr_figures(rows: list[dict]) -> dict[str, "Figure"]:
    """Figure 16 (citations do not depend on the judge: the first judge's rows) and one Figure 7 per
    judge, keyed ``drcik-figure16`` and ``drcik-figure7-<judge>`` (``harness report`` saves them as PNG)."""

    figures = {}
    groups = by_judge(rows)
    if groups:
        first = next(iter(groups.values()))
        figures["drcik-figure16"] = figure16(first)
        if scored(first):
            figures["drcik-figure6"] = figure6(first)
    for group in groups.values():
        figures[f"drcik-figure7-{group[0]['judge']}"] = figure7(group)
    return figures


def dr_tables(rows: list[dict]) -> list[Table]:
    """Table 3, Table 14 (by origin), Figure 7 numbers per judge, and where their data exists Tables 10
    (two corpora), 15 (difficulty labels) and 16 (evidence roles) per judge (:mod:`.strata`); Figure 16
    numbers; Table 11 when several judges scored the runs."""
    tables = []
    groups = by_judge(rows)
    for group in groups.values():
        tables += [table3(group), table3_by_origin(group), figure7_table(group)]
        tables += [t for t in (strata.table10(group), strata.table15_recall(group), strata.table16(group))
                   if t is not None]
    if groups:
        tables.append(figure16_table(next(iter(groups.values()))))
    multi = table11(rows)
    if multi is not None:
        tables.append(multi)
    return tables


# -- forecasting with DR evidence -------------------------------------------------------------------

def cell_column(row) -> str:
    """A one-string label of a forecasting row's cell: the condition, with the DR agent for DR conditions."""
    agent = row.get("evidence_agent")
    if row["context"] in DR_CONDITIONS and isinstance(agent, str) and agent:
        return f"{row['context']} ({agent})"
    return row["context"]


def table2_dr(rows: pd.DataFrame) -> Table:
    """Table 2 with DR agents (Section 5.4): sCRPS mean ± SE over the scored tasks.

    Rows: forecaster × DR condition (``dr-evidence``, ``dr-report``, ``verified-dr``); columns: the
    non-DR conditions present (No Context, Supporting Evidence, ...; the same value on each of a
    forecaster's rows) then one column per DR agent (``evidence_agent``).  Marks as in the paper's
    Table 2 (H.2: mean ± standard error over tasks): per forecaster, the best (lowest mean) cell over
    the DR contexts is **bold**; the best cell over all forecasters and contexts is underlined; when the
    candidate cells all tie, none is marked.  ``table.data`` holds one record per distinct cell
    (``forecaster``, ``context``, ``agent`` or None, ``n``, ``scrps_mean``, ``scrps_se``, ``best_dr``
    (bold), ``best_overall`` (underlined)).
    """

    rows = rows.copy()
    rows["scrps"] = pd.to_numeric(rows["scrps"], errors="coerce")
    agent_col = rows["evidence_agent"] if "evidence_agent" in rows.columns else pd.Series(None, index=rows.index)
    rows["agent"] = [a if c in DR_CONDITIONS and isinstance(a, str) and a else None
                     for c, a in zip(rows["context"], agent_col)]
    ok = rows[rows["status"] == "ok"]
    present = set(rows["context"])
    plain = [c for c in CONDITIONS if c in present and c not in DR_CONDITIONS] + sorted(
        present - set(CONDITIONS) - set(DR_CONDITIONS))
    dr_conditions = [c for c in DR_CONDITIONS if c in present]
    agents = sorted(set(rows["agent"].dropna()))
    table = Table("drcik-table2-dr", "Dr-CiK Table 2 with DR agents. sCRPS (mean ± SE over scored tasks; lower is "
                  "better; bold: best per forecaster over the DR contexts; underlined: best overall); DR columns: "
                  "the agent whose research gave the context",
                  ["Forecaster", "DR condition", *plain, *agents, "Fail (per column)"])
    every: dict[tuple[str, str, str | None], float] = {}
    for f in dict.fromkeys(rows["forecaster"]):
        for c in plain:
            vals = ok[(ok["forecaster"] == f) & (ok["context"] == c)]["scrps"].dropna()
            if len(vals):
                every[(f, c, None)] = float(vals.mean())
        for c in dr_conditions:
            for a in agents:
                vals = ok[(ok["forecaster"] == f) & (ok["context"] == c) & (ok["agent"] == a)]["scrps"].dropna()
                if len(vals):
                    every[(f, c, a)] = float(vals.mean())
    overall = _unique_best(every)
    for f in dict.fromkeys(rows["forecaster"]):
        cells = {}
        for c in plain:
            vals = ok[(ok["forecaster"] == f) & (ok["context"] == c)]["scrps"].dropna().tolist()
            cells[(c, None)] = mean_se(vals) + (len(vals),)
        for c in dr_conditions:
            for a in agents:
                vals = ok[(ok["forecaster"] == f) & (ok["context"] == c) & (ok["agent"] == a)]["scrps"].dropna().tolist()
                cells[(c, a)] = mean_se(vals) + (len(vals),)
        best_dr = _unique_best({k: v[0] for k, v in cells.items() if k[1] is not None and v[0] is not None})

        def shown(key):
            mean, se, _ = cells[key]
            return pm(table, mean, se, "no scored task in this cell")
        for (c, a), (mean, se, n) in cells.items():
            table.data.append({"forecaster": f, "context": c, "agent": a, "column": a or c, "n": n,
                               "scrps_mean": mean, "scrps_se": se, "best_dr": (c, a) in best_dr,
                               "best_overall": (f, c, a) in overall})
        def fails(key):
            c, a = key
            mine = rows[(rows["forecaster"] == f) & (rows["context"] == c)]
            return int((mine["status"] == "failed").sum() if a is None else
                       (mine.loc[mine["agent"] == a, "status"] == "failed").sum())

        for c in dr_conditions or [table.explain(DASH, "no DR condition in these rows: the columns without DR "
                                                         "evidence only")]:
            keys = [(p, None) for p in plain] + [(c, a) for a in agents if (c, a) in cells]
            table.add(f, [c, *[shown(k) for k in keys], " | ".join(str(fails(k)) for k in keys)])
            for column, key in enumerate(keys, 2):
                if key in best_dr:
                    table.style(len(table.rows) - 1, column, "bold")
                if (f, *key) in overall:
                    table.style(len(table.rows) - 1, column, "underline")
    if "context_status" in rows.columns:
        empty = rows[(rows["context_status"] == "verified_empty")]
        if len(empty):
            pairs = sorted({f"{r['benchmark_id']} ({r.get('agent')})" for r in empty.to_dict("records")})
            table.notes.append(f"verified_empty: {len(pairs)} (task, DR agent) pair(s) left with no verified item, "
                               f"forecast with no context under verified-dr: {', '.join(pairs)}.")
    table.notes.append("sCRPS capped at 5 per task (Appendix H.2); a statistical forecaster ignores the text, so "
                       "its columns repeat one forecast.")
    table.notes.append("Fail: tasks without a valid forecast in each column, in column order (the forecaster failed, "
                       "or the DR agent's research episode failed: no DR evidence), left out of the means.")
    return table


def _unique_best(means: dict) -> set:
    """Keys of the lowest mean; empty when every value ties (nothing stands out) or there is none."""
    if not means or len(set(means.values())) == 1:
        return set()
    low = min(means.values())
    return {k for k, v in means.items() if v == low}


def figure4_stats(forecast_rows: pd.DataFrame, dr_rows: list[dict]) -> Table:
    """Figure 4 statistics (module docstring): the Wilcoxon line, then one Spearman line per forecaster."""
    from scipy import stats

    rows = forecast_rows[forecast_rows["status"] == "ok"].copy()
    for col in ("smae", "scrps"):
        rows[col] = pd.to_numeric(rows[col], errors="coerce")
    table = Table("drcik-figure4", "Dr-CiK Figure 4 statistics", ["Test", "Forecaster", "n", "Statistic", "p"])
    key = ["forecaster", "evidence_agent", "benchmark_id"]
    raw = rows[rows["context"] == "dr-evidence"].set_index(key)["smae"]
    ver = rows[rows["context"] == "verified-dr"].set_index(key)["smae"]
    pairs = pd.concat([raw.rename("raw"), ver.rename("verified")], axis=1, join="inner").dropna()
    n = len(pairs)
    if n >= MIN_N and (pairs["raw"] != pairs["verified"]).any():
        res = stats.wilcoxon(pairs["raw"], pairs["verified"], alternative="greater")
        table.add("Wilcoxon raw > verified sMAE (one-sided)", ["pooled", str(n), f"W = {res.statistic:g}",
                                                              f"{res.pvalue:.3g}"])
        table.data.append({"test": "wilcoxon", "n": n, "statistic": float(res.statistic), "p": float(res.pvalue)})
    else:
        why = "n < 10" if n < MIN_N else "all differences zero"
        reason = (f"fewer than {MIN_N} (forecaster, DR agent, task) pairs with raw and verified DR sMAE: no test"
                  if n < MIN_N else "raw and verified DR sMAE equal on every pair: no test")
        table.add("Wilcoxon raw > verified sMAE (one-sided)", ["pooled", str(n), table.explain(DASH, reason), why])
        table.data.append({"test": "wilcoxon", "n": n, "statistic": None, "p": None, "why": why})
    recall = {(r["agent"], r["benchmark_id"]): r["evidence_recall"] for r in dr_rows
              if r.get("evidence_recall") is not None}
    base = rows[rows["context"] == "no-context"].set_index(["forecaster", "benchmark_id"])["scrps"]
    dr = rows[rows["context"] == "dr-evidence"]
    for forecaster in dict.fromkeys(rows["forecaster"]):
        xs, ys = [], []
        for r in dr[dr["forecaster"] == forecaster].to_dict("records"):
            rec = recall.get((r.get("evidence_agent"), r["benchmark_id"]))
            b = base.get((forecaster, r["benchmark_id"]))
            if rec is not None and b is not None and not pd.isna(b) and not pd.isna(r["scrps"]):
                xs.append(rec)
                ys.append(float(b) - float(r["scrps"]))
        n = len(xs)
        if n >= MIN_N and len(set(xs)) > 1 and len(set(ys)) > 1:
            res = stats.spearmanr(xs, ys)
            table.add("Spearman recall vs sCRPS gain", [forecaster, str(n), f"ρ = {res.statistic:.3f}",
                                                        f"{res.pvalue:.3g}"])
            table.data.append({"test": "spearman", "forecaster": forecaster, "n": n, "rho": float(res.statistic),
                               "p": float(res.pvalue)})
        else:
            rho = stats.spearmanr(xs, ys).statistic if n >= 2 and len(set(xs)) > 1 and len(set(ys)) > 1 else None
            undefined = table.explain(DASH, "fewer than two (DR agent, task) pairs: ρ undefined" if n < 2 else
                                      "evidence recall or sCRPS gain constant over the pairs: ρ undefined")
            table.add("Spearman recall vs sCRPS gain", [forecaster, str(n),
                                                        undefined if rho is None else f"ρ = {rho:.3f}",
                                                        "n < 10" if n < MIN_N else "constant input"])
            table.data.append({"test": "spearman", "forecaster": forecaster, "n": n,
                               "rho": None if rho is None else float(rho), "p": None})
    labels = sorted({r["judge_label"] for r in dr_rows})
    table.notes.append("Pairs: Wilcoxon over (forecaster, DR agent, task), pooled across forecasters; Spearman over "
                       "(DR agent, task) per forecaster, gain = sCRPS(no context) − sCRPS(dr-evidence). "
                       f"Evidence recall judge: {', '.join(labels) or DASH}.")
    return table


def table2_by_origin(rows: pd.DataFrame, origins: dict[str, str]) -> Table:
    """Table 13: end-to-end forecasting by input source (``origins``: benchmark id -> the task's origin)."""
    rows = rows.assign(origin=rows["benchmark_id"].map(origins).fillna("unknown"))
    table = Table("drcik-table13", "Dr-CiK Table 13. End-to-end forecasting by input source (task origin; sCRPS "
                  "mean ± SE over tasks, lower is better)", ["Forecaster", "Origin", "Column", "sCRPS", "n"])
    rows["column"] = [cell_column(r) for r in rows.to_dict("records")]

    rank = {c: i for i, c in enumerate(CONDITIONS)}
    ok = rows[rows["status"] == "ok"]
    ok = ok.assign(_f=ok["forecaster"].map({f: i for i, f in enumerate(dict.fromkeys(rows["forecaster"]))}),
                   _c=ok["context"].map(rank).fillna(len(rank))).sort_values(["_f", "origin", "_c", "column"])
    for (f, origin, column), group in ok.groupby(["forecaster", "origin", "column"], sort=False):
        mean, se = mean_se(pd.to_numeric(group["scrps"], errors="coerce").tolist())
        table.add(f, [origin, column, pm(table, mean, se, "no sCRPS among this cell's forecasts"), str(len(group))])
    return table


__all__ = ["table3", "table3_by_origin", "figure7_table", "figure16_table", "figure16", "figure7", "dr_figures",
           "dr_tables", "table2_dr", "figure4_stats", "table2_by_origin", "research_section"]


def research_section(rows: pd.DataFrame, with_figures: bool = True):
    """DR tables and figures for the research runs of ``rows`` (``rows["run_dir"]``): every judge that
    scored them (``dr_scores.jsonl``; the lexical judge scores every research run when it finishes)."""
    from harness.reporting import Section
    from tsagent_plugins.tasks.drcik.research.scoring import research_scores

    scores, messages = research_scores(rows)
    if not scores:
        return Section([], messages)
    return Section(dr_tables(scores), messages, dr_figures(scores) if with_figures else {})

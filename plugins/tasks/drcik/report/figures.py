"""Dr-CiK figures and tables beyond Tables 2 and 3, each named by its number in the paper and built only
from data that exists (:func:`not_shown` lists the others with what they need).

- **Figure 4** (Section 5.2): per forecaster, one point per (DR agent, task): the task's evidence recall
  (x, the judge's) against the sCRPS improvement over no context (y = sCRPS(no context) − sCRPS(dr-evidence));
  the title carries the one-sided Wilcoxon (raw > verified sMAE) and the Spearman statistics of
  :func:`.research_tables.figure4_stats`.
- **Figure 5** (Section 5.4): one text-consuming forecaster (the first whose rows use the context)
  across the context conditions its rows hold, in the paper's order (no context, supporting
  evidence, original context, rewritten context, supporting documents, DR evidence, verified DR, DR
  report); a DR condition gets one bar per DR agent; the evidence-role conditions are Table 17's, not drawn.
- **Figure 6** (Section 5.3): cited distractors by subtype, as shares of each subtype's documents in
  the evaluated tasks, one bar per DR agent.
- **Figure 16** (Appendix I.1-I.2): in-task vs cross-task distractor citations, and in-task citations
  by subtype, one bar per DR agent in both panels.
- **Figure 8** (Section 5.4): forecasters given the same DR evidence: sCRPS of ``dr-evidence`` per
  forecaster, one bar per DR agent.
- **Table 11** (Appendix): multi-judge sensitivity: each judge's agreement with the default judge on
  the evidence matches (same agent, task and item), and whether the DR-agent ranking by pooled
  evidence recall is identical.  The default judge is the paper's LLM judge when it scored the run,
  else the first judge.

Colours: one colour per DR agent (``harness.series_style`` by the agent's position in sorted order) in
every Dr-CiK figure, so an agent looks the same everywhere.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from harness.reporting import DASH, Table
from tsagent_plugins.tasks.drcik.dataset.contexts import DR_CONDITIONS, ROLE_CONDITIONS
from tsagent_plugins.tasks.drcik.report import strata
from tsagent_plugins.tasks.drcik.report.cells import pct
from tsagent_plugins.tasks.drcik.research import metrics as m
from tsagent_plugins.tasks.drcik.research.scoring import scored, task_scores

if TYPE_CHECKING:
    from matplotlib.figure import Figure

#: Context conditions of Figure 5, in the paper's order (Section 5.4, Appendix F).
FIGURE5_ORDER = ("no-context", "supporting-evidence", "original-context", "rewritten-context",
                 "supporting-documents", "background", "dr-evidence", "verified-dr", "dr-report")
#: The judge Table 11 compares the others with, when it scored the run (the paper's judge).
DEFAULT_JUDGE = "llm-judge"
#: Figure 16's distractor subtypes, in the release's order.
SUBTYPE_ORDER = list(m.SUBTYPES)
#: Figure 16's share of a subtype none of the evaluated tasks has
NO_SUBTYPE = "no distractor of this subtype in the evaluated tasks: the share is undefined"


def _agents(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(r["agent"] for r in rows))


def agent_colours(agents) -> dict[str, str]:
    """One colour per DR agent, by its position among ``agents`` sorted: pass every DR agent of the report
    (failed ones too) and an agent has the same colour in every Dr-CiK figure."""
    from harness.reporting import series_style

    return {a: series_style(i)["color"] for i, a in enumerate(sorted({str(a) for a in agents if a}))}


def title(fig, text: str) -> None:
    """A short figure title at the left, clear of the legend right of the panels."""
    fig.suptitle(text, fontsize=10, x=0.01, ha="left")


def _all_agents(rows: pd.DataFrame, dr_rows=()) -> set[str]:
    agents = {str(r["agent"]) for r in dr_rows if r.get("agent")}
    if "evidence_agent" in rows.columns:
        agents |= {str(a) for a in rows["evidence_agent"].dropna()}
    return agents


def _ok(rows: pd.DataFrame) -> pd.DataFrame:
    ok = rows[rows["status"] == "ok"].copy()
    for col in ("scrps", "smae"):
        if col in ok.columns:
            ok[col] = pd.to_numeric(ok[col], errors="coerce")
    return ok


def figure4_points(forecast_rows: pd.DataFrame, dr_rows: list[dict]) -> list[dict]:
    """(forecaster, agent, task, evidence recall, sCRPS gain over no context) per scored pair."""
    rows = _ok(forecast_rows)
    recall = {(r["agent"], r["benchmark_id"]): r["evidence_recall"] for r in dr_rows
              if r.get("evidence_recall") is not None}
    base = rows[rows["context"] == "no-context"].set_index(["forecaster", "benchmark_id"])["scrps"]
    out = []
    for r in rows[rows["context"] == "dr-evidence"].to_dict("records"):
        rec = recall.get((r.get("evidence_agent"), r["benchmark_id"]))
        b = base.get((r["forecaster"], r["benchmark_id"]))
        if rec is not None and b is not None and not pd.isna(b) and not pd.isna(r["scrps"]):
            out.append({"forecaster": r["forecaster"], "agent": r["evidence_agent"], "task": r["benchmark_id"],
                        "recall": float(rec), "gain": round(float(b) - float(r["scrps"]), 12)})
    return out


def figure4(forecast_rows: pd.DataFrame, dr_rows: list[dict], stats: Table) -> "Figure":
    """Figure 4: evidence recall vs sCRPS improvement over no context, one panel per forecaster."""
    from harness.reporting import new_figure, no_data, outside_legend, pad_limits

    points = figure4_points(forecast_rows, dr_rows)
    forecasters = list(dict.fromkeys(p["forecaster"] for p in points)) or ["(none)"]
    colours = agent_colours(_all_agents(forecast_rows, dr_rows))
    fig = new_figure(figsize=(4.2 * len(forecasters) + 2.2, 4.2))
    axes = np.atleast_1d(fig.subplots(1, len(forecasters), sharey=True))
    wil = next((d for d in stats.data if d["test"] == "wilcoxon"), {})
    spear = {d.get("forecaster"): d for d in stats.data if d["test"] == "spearman"}
    w = f"one-sided Wilcoxon, raw > verified DR sMAE (pooled): n = {wil.get('n', 0)}, " + (
        f"p = {wil['p']:.3g}" if wil.get("p") is not None else str(wil.get("why") or DASH))
    title(fig, "Dr-CiK Figure 4. Evidence recall vs sCRPS improvement over no context")
    fig.supxlabel(f"{w}; evidence recall judge {dr_rows[0]['judge_label'] if dr_rows else DASH}", fontsize=8)
    for ax, forecaster in zip(axes, forecasters):
        mine = [p for p in points if p["forecaster"] == forecaster]
        s = spear.get(forecaster, {})
        rho = DASH if s.get("rho") is None else f"{s['rho']:.2f}"
        p_text = "n < 10" if s.get("p") is None and s.get("n", 0) < 10 else (
            DASH if s.get("p") is None else f"{s['p']:.3g}")
        ax.set_title(f"{forecaster}: Spearman ρ = {rho}, p {p_text}", fontsize=9)
        if not mine:
            no_data(ax, "no (agent, task) pair with both an evidence recall and sCRPS")
            continue
        for agent in dict.fromkeys(p["agent"] for p in mine):
            xs = [100 * p["recall"] for p in mine if p["agent"] == agent]
            ys = [p["gain"] for p in mine if p["agent"] == agent]
            ax.scatter(xs, ys, s=36, facecolors="none", edgecolors=colours[agent], linewidths=1.4, label=agent)
        ax.axhline(0, color="#888888", linewidth=0.8, label="no change")
        pad_limits(ax, [0.0] + [p["gain"] for p in mine], "y")
        ax.set_xlim(-5, 105)
        ax.set_xlabel("evidence recall (%)")
    axes[0].set_ylabel("sCRPS(no context) − sCRPS(DR evidence)")
    outside_legend(fig, list(axes))
    return fig


def tick_text(label: str, width: int = 12) -> str:
    """A group label broken into lines of about ``width`` characters (at blanks and hyphens)."""
    import textwrap

    return "\n".join(textwrap.wrap(label, width, break_on_hyphens=True, break_long_words=False)) or label


def _bars(ax, groups: list[str], series: dict[str, list[float | None]], colours: dict[str, str],
          errors: dict[str, list[float | None]] | None = None) -> None:
    """Grouped bars: one group per ``groups`` entry, one bar per series (label = series name); standard
    errors as black whiskers, one legend entry for all of them."""
    width = 0.8 / max(1, len(series))
    x = np.arange(len(groups))
    for i, (name, values) in enumerate(series.items()):
        heights = np.array([np.nan if v is None else v for v in values], dtype=float)
        where = x - 0.4 + width * (i + 0.5)
        ax.bar(where, heights, width, color=colours[name], label=name)
        if errors is not None:
            err = np.array([np.nan if e is None else e for e in errors[name]], dtype=float)
            keep = ~np.isnan(err) & ~np.isnan(heights)
            if keep.any():
                ax.errorbar(where[keep], heights[keep], yerr=err[keep], fmt="none", ecolor="black", capsize=2,
                            linewidth=0.9, label="± standard error")
    ax.set_xticks(x, [tick_text(g) for g in groups])


def figure5_forecaster(rows: pd.DataFrame) -> str | None:
    """The forecaster of Figure 5: the first whose rows use the text context (``context_used``), else the
    first with rows in two or more conditions."""
    ok = _ok(rows)
    if "context_used" in ok.columns:
        users = ok[ok["context_used"].fillna(False).astype(bool)]["forecaster"]
        if len(users):
            return str(users.iloc[0])
    counts = ok.groupby("forecaster")["context"].nunique()
    several = [f for f in dict.fromkeys(ok["forecaster"]) if counts.get(f, 0) >= 2]
    return several[0] if several else None


def figure5(rows: pd.DataFrame, dr_rows: list[dict] = ()) -> "Figure":
    """Figure 5: one forecaster's sCRPS (mean ± SE over tasks) across the context conditions it ran; the DR
    conditions once per DR agent (one colour per agent, the non-DR conditions grey)."""
    from harness.reporting import new_figure, no_data, outside_legend

    forecaster = figure5_forecaster(rows)
    ok = _ok(rows)
    fig = new_figure(figsize=(9.5, 4.2))
    ax = fig.subplots()
    title(fig, f"Dr-CiK Figure 5. {forecaster or DASH} across context conditions")
    mine = ok[ok["forecaster"] == forecaster] if forecaster else ok.iloc[:0]
    mine = mine[~mine["context"].isin(ROLE_CONDITIONS)]   # not among the paper's eight: Table 17 reports them
    if mine.empty:
        no_data(ax, "no forecaster ran two or more context conditions")
        return fig
    present = [c for c in FIGURE5_ORDER if c in set(mine["context"])] + sorted(
        set(mine["context"]) - set(FIGURE5_ORDER))
    agents = sorted(set(mine.loc[mine["context"].isin(DR_CONDITIONS), "evidence_agent"].dropna())) \
        if "evidence_agent" in mine.columns else []
    colours = {"no DR agent": "#7f7f7f", **agent_colours(_all_agents(rows, dr_rows))}
    x, ticks = 0.0, []
    for c in present:
        names = agents if c in DR_CONDITIONS else ["no DR agent"]
        width = 0.8 / max(1, len(names))
        for i, name in enumerate(names):
            cell = mine[mine["context"] == c]
            if c in DR_CONDITIONS:
                cell = cell[cell["evidence_agent"] == name]
            values = cell["scrps"].dropna()
            if not len(values):
                continue
            where, mean = x - 0.4 + width * (i + 0.5), float(values.mean())
            ax.bar(where, mean, width, color=colours[name], label=name)   # one legend entry per name
            if len(values) > 1:
                ax.errorbar([where], [mean], yerr=[float(values.std(ddof=1) / math.sqrt(len(values)))],
                            fmt="none", ecolor="black", capsize=2, linewidth=0.9, label="± standard error")
        ticks.append(x)
        x += 1.0
    ax.set_xticks(ticks, [tick_text(c) for c in present])
    ax.set_ylabel("sCRPS (mean ± SE over tasks;\nlower is better)", fontsize=8)
    outside_legend(fig, [ax])
    return fig


def figure6(dr_rows: list[dict]) -> "Figure":
    """Figure 6: per data subtype, the share of that subtype's documents (in the evaluated tasks) cited in
    their own task, one bar per DR agent (:func:`subtype_shares`)."""
    from harness.reporting import new_figure, no_data, outside_legend

    shares = subtype_shares(dr_rows)
    fig = new_figure(figsize=(9, 4.2))
    ax = fig.subplots()
    title(fig, "Dr-CiK Figure 6. Cited distractors by subtype")
    if not shares:
        no_data(ax, "no scored research episode")
        return fig
    agents = sorted(shares)
    _bars(ax, [m.SUBTYPES[s] for s in SUBTYPE_ORDER],
          {a: [None if shares[a][s] is None else 100 * shares[a][s] for s in SUBTYPE_ORDER] for a in agents},
          agent_colours(r["agent"] for r in dr_rows))
    ax.set_ylim(0, 105)
    ax.set_ylabel("cited in own task\n(% of the subtype's documents)", fontsize=8)
    outside_legend(fig, [ax])
    return fig


def figure8(rows: pd.DataFrame, dr_rows: list[dict] = ()) -> "Figure":
    """Figure 8: forecasters given the same DR evidence: sCRPS (mean ± SE) under ``dr-evidence``, one group per
    forecaster, one bar per DR agent."""
    from harness.reporting import new_figure, no_data, outside_legend

    ok = _ok(rows)
    dr = ok[(ok["context"] == "dr-evidence") & ok.get("evidence_agent", pd.Series(None, index=ok.index)).notna()]
    fig = new_figure(figsize=(8, 4.2))
    ax = fig.subplots()
    title(fig, "Dr-CiK Figure 8. Forecasters given the same DR evidence")
    if dr.empty:
        no_data(ax, "no forecast with DR evidence")
        return fig
    forecasters = list(dict.fromkeys(dr["forecaster"]))
    agents = sorted(set(dr["evidence_agent"]))
    series, errors = {}, {}
    for a in agents:
        cells = [dr[(dr["forecaster"] == f) & (dr["evidence_agent"] == a)]["scrps"].dropna() for f in forecasters]
        series[a] = [float(c.mean()) if len(c) else None for c in cells]
        errors[a] = [float(c.std(ddof=1) / math.sqrt(len(c))) if len(c) > 1 else None for c in cells]
    _bars(ax, forecasters, series, agent_colours(_all_agents(rows, dr_rows)), errors)
    ax.set_ylabel("sCRPS under DR evidence\n(mean ± SE over tasks; lower is better)", fontsize=8)
    outside_legend(fig, [ax])
    return fig


def table11(scores: list[dict]) -> Table | None:
    """Table 11 (multi-judge sensitivity) when two or more judges scored the same research runs; else None."""

    groups: dict[str, list[dict]] = {}
    for r in scored(scores):
        groups.setdefault(r["judge_label"], []).append(r)
    if len(groups) < 2:
        return None
    default = next((label for label, rows in groups.items() if rows[0].get("judge") == DEFAULT_JUDGE),
                   next(iter(groups)))

    def verdicts(rows):
        return {(r["agent"], r["benchmark_id"], v["item"]): v.get("matched") is True
                for r in rows for v in r.get("verdicts") or []}

    def ranking(rows):
        agg = m.aggregate(task_scores(rows))
        return [a for a, _ in sorted(agg.items(), key=lambda kv: (-(kv[1].evidence_recall_pooled or 0), kv[0]))]

    base, base_rank = verdicts(groups[default]), ranking(groups[default])
    table = Table("drcik-table11", f"Dr-CiK Table 11. Multi-judge sensitivity (default judge {default})",
                  ["Judge", "Items compared", "Agreement with the default judge", "DR-agent ranking identical",
                   "Ranking (pooled evidence recall)"])
    for label, rows in groups.items():
        mine = verdicts(rows)
        common = sorted(set(mine) & set(base))
        agree = sum(mine[k] == base[k] for k in common) / len(common) if common else None
        rank = ranking(rows)
        table.add(label, [str(len(common)), DASH if agree is None else f"{100 * agree:.1f}%",
                          "yes" if rank == base_rank else "no", " > ".join(rank)])
        table.data.append({"judge": label, "items": len(common), "agreement": agree,
                           "ranking_identical": rank == base_rank, "ranking": rank})
    table.rows = [[c if c != DASH else table.explain(DASH, "no evidence item judged by both judges") for c in row]
                  for row in table.rows]
    table.notes.append("Agreement: share of (DR agent, task, evidence item) judgements with the same match verdict "
                       "as the default judge's.")
    return table


def not_shown(scores: list[dict], forecasts: pd.DataFrame | None) -> Table | None:
    """The Dr-CiK tables and figures the data cannot give, each with what it needs (None: every one shown).
    ``scores``: the DR metric rows of every judged research run the report reads (research runs and the
    evidence runs of forecasting rows); ``forecasts``: the forecasting rows (None: none)."""

    judges = {r.get("judge_label") for r in scores}
    contexts = set(forecasts["context"]) if forecasts is not None and "context" in forecasts.columns else set()
    has = {
        "Table 10 (research on a raw-context corpus vs the generated corpus)":
            (len(strata.corpora(scores)) >= 2,
             "judged research runs of the DR agents on two corpora, labelled by the rows' corpus (A: raw CAF "
             "contexts, B: the generated corpus; `harness run --experiment tasks/drcik/table10.yaml`)"),
        "Table 11 (multi-judge sensitivity)":
            (len(judges) >= 2, "research runs scored by two or more judges (`harness dr-score RUN --judge NAME`)"),
        "Table 13 (sCRPS by input source)":
            (bool(scores) and forecasts is not None and "evidence_agent" in forecasts.columns
             and forecasts["evidence_agent"].notna().any(),
             "forecasting rows with DR evidence from judged research runs (the task origin is read from them)"),
        "Table 15 (results by difficulty dimension)":
            (bool(strata.difficulty_of(scored(scores))),
             "judged research runs on tasks carrying difficulty labels (annotations.difficulty, written by "
             "`harness dr-audit GEN_DIR --difficulty`; the release's sample has none)"),
        "Table 16 (DR evidence recall by evidence role)":
            (any(r.get("evidence_roles") for r in scored(scores)),
             "judged research runs on tasks marking each evidence item retrospective or prospective "
             "(annotations.gt_evidence[i].role: generated tasks do, the release's sample does not)"),
        "Table 17 (forecasting by evidence role)":
            (bool(contexts & set(ROLE_CONDITIONS)),
             "forecasting rows under the conditions retrospective-only and prospective-only (tasks marking "
             "each evidence item's role)"),
        "Figure 5 original- and rewritten-context bars":
            (bool(contexts & {"original-context", "rewritten-context"}),
             "tasks carrying their original and rewritten context (generated tasks do; the release does not)"),
    }
    missing = [(name, why) for name, (ok, why) in has.items() if not ok]
    if not missing:
        return None
    table = Table("drcik-not-shown", "Dr-CiK tables and figures not shown: what their data needs",
                  ["Table or figure", "Needs"])
    for name, why in missing:
        table.add(name, [why])
    return table


def subtype_shares(rows: list[dict]) -> dict[str, dict[str, float | None]]:
    """Per agent and data subtype: unique own-task distractors of that subtype cited / all of that
    subtype in the evaluated tasks (Appendix I.2), from the rows' ``in_task_*`` and ``universe_*``."""
    out = {}
    rows = scored(rows)
    for agent in _agents(rows):
        mine = {r["benchmark_id"]: r for r in rows if r["agent"] == agent}
        out[agent] = {}
        for sub in SUBTYPE_ORDER:
            universe = sum(r.get(f"universe_{sub}", 0) for r in mine.values())
            cited = sum(r.get(f"in_task_{sub}", 0) for r in mine.values())
            out[agent][sub] = cited / universe if universe else None
    return out


def figure16_table(rows: list[dict]) -> Table:
    """Figure 16 as numbers: in-task vs cross-task distractor citations, citations and share by subtype."""
    label = rows[0]["judge_label"]
    rows = scored(rows)
    shares = subtype_shares(rows)
    header = ["DR agent", "In-task distractors", "Cross-task documents",
              *[f"{m.SUBTYPES[s]} (share)" for s in SUBTYPE_ORDER]]
    table = Table("drcik-figure16", "Dr-CiK Figure 16. Distractor citations per DR agent: in-task vs cross-task, "
                  "and in-task citations by subtype (unique documents; share of that subtype's documents in the "
                  "evaluated tasks)", header)
    for agent in _agents(rows):
        mine = [r for r in rows if r["agent"] == agent]
        subs = {s: sum(r.get(f"in_task_{s}", 0) for r in mine) for s in SUBTYPE_ORDER}
        table.add(agent, [str(sum(subs.values())), str(sum(r["cross_task"] for r in mine)),
                          *[f"{subs[s]} ({pct(table, shares[agent][s], NO_SUBTYPE)})" for s in SUBTYPE_ORDER]])
        table.data.append({"agent": agent, "in_task": sum(subs.values()), "cross_task": sum(r["cross_task"] for r in mine),
                           **{f"in_task_{s}": subs[s] for s in SUBTYPE_ORDER},
                           **{f"share_{s}": shares[agent][s] for s in SUBTYPE_ORDER}})
    table.notes.append(f"Citation counts do not depend on the judge ({label} rows used). Cross-task documents are "
                       "any other task's documents, supporting or distractor.")
    return table


def figure16(rows: list[dict]):
    """Figure 16 (matplotlib Figure): left, in-task vs cross-task distractor citations per agent;
    right, in-task distractor citations by subtype per agent."""
    from matplotlib.ticker import MaxNLocator

    from harness.reporting import new_figure, outside_legend

    data = {d["agent"]: d for d in figure16_table(rows).data}
    agents = sorted(data)
    colours = agent_colours(r["agent"] for r in rows)   # one colour per DR agent, the same meaning in both panels
    fig = new_figure(figsize=(12, 4.4))
    left, right = fig.subplots(1, 2, width_ratios=[2, 5])
    title(fig, "Dr-CiK Figure 16. Distractor citations per DR agent (unique documents)")
    width = 0.8 / max(1, len(agents))
    for panel, groups in ((left, [("in_task", "in-task distractors"), ("cross_task", "cross-task documents")]),
                          (right, [(f"in_task_{s}", m.SUBTYPES[s]) for s in SUBTYPE_ORDER])):
        x = np.arange(len(groups))
        for i, agent in enumerate(agents):
            panel.bar(x - 0.4 + width * (i + 0.5), [data[agent][k] for k, _ in groups], width,
                      color=colours[agent], label=agent)
        panel.set_xticks(x, [tick_text(name) for _, name in groups])
        panel.yaxis.set_major_locator(MaxNLocator(integer=True))
        panel.set_ylim(0, 1.15 * max([1] + [data[a][k] for a in agents for k, _ in groups]))
    left.set_ylabel("unique cited documents")
    left.set_title("In-task vs cross-task", fontsize=9)
    right.set_ylabel("unique cited in-task distractors")
    right.set_title("In-task distractors by subtype", fontsize=9)
    outside_legend(fig, [left, right])
    return fig

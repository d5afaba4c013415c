"""Dr-CiK Table 2 in ``harness report`` (paper Section 5.2 Table 2, Section 5.4, Appendix H.2).

:func:`build_section` turns the rows of Dr-CiK forecasting runs (template
``drcik``) into two tables:

- **Table 2**: sCRPS per forecaster (rows) × context condition (columns), mean ±
  standard error over the scored tasks, with a Fail column (tasks without a
  valid forecast, per condition in column order);
- **Table 2, common subset**: per cell, over the tasks every compared cell
  completed, sCRPS, sRMSE and sMAE mean ± SE and the average ranks ± SE —
  point (by sRMSE) and distributional (by sCRPS), rank 1 = best, computed per
  task across all cells.

Marks: the ``background`` condition is a stand-in (†): the release omits the
original context, so the paper's Background, Original Context and Rewritten
Context conditions cannot be reproduced; forecasters that ignore text (‡) get
one forecast scored under every condition; tasks with hidden labels or an
undefined scale are listed, never scored.  Rows flagged ``flag_*`` (e.g.
``flag_untrained``: Chronos with random weights) are refused before this
section sees them (:mod:`harness.report.load`).
"""

from __future__ import annotations

import pandas as pd

from harness.reporting import ReportError
from harness.reporting import Section
from harness.reporting import DASH, Table, fmt_pm, mean_interval, report_options
from tsagent_plugins.tasks.drcik.dataset import contexts as ctx
from tsagent_plugins.tasks.drcik.report.cells import pm
from tsagent_plugins.tasks.drcik.forecast.metrics import (FAILED, LABELS_HIDDEN, METRICS, OK, UNDEFINED_SCALE,
                                                          average_ranks, common_tasks, summary_table)

CELLS = ["forecaster", "context"]
#: Columns besides the cell and task that make a Dr-CiK row a different result (see harness.report.load).
IDENTITY = ("forecaster_options", "evidence_run", "evidence_agent", "n_samples", "fitted_model")
TASK = "benchmark_id"
REQUIRED = (*CELLS, TASK, "status", *METRICS)
LABELS = {"no-context": "No Context", "background": "Background", "supporting-evidence": "Supporting Evidence",
          "retrospective-only": "Retrospective only", "prospective-only": "Prospective only",
          "original-context": "Original Context", "rewritten-context": "Rewritten Context",
          "supporting-documents": "Supp. docs", "dr-evidence": "DR Evidence", "verified-dr": "Verified DR"}
STAND_IN = "†"
IGNORES_TEXT = "‡"


def _prepare(rows: pd.DataFrame, label_sources: bool = True) -> tuple[pd.DataFrame, list[str]]:
    missing = [c for c in REQUIRED if c not in rows.columns]
    if missing:
        runs = ", ".join(sorted(set(map(str, rows.get("run_dir", pd.Series(["?"]))))))
        raise ReportError(f"{runs}: Dr-CiK results lack column(s) {', '.join(missing)} needed for Table 2")
    messages = []
    rows = rows.copy()
    for metric in METRICS:
        rows[metric] = pd.to_numeric(rows[metric], errors="coerce")
    identity = [*CELLS, TASK, *[c for c in IDENTITY if c in rows.columns]]
    dup = rows.duplicated(identity, keep="last")
    if dup.any():
        messages.append(f"{int(dup.sum())} Dr-CiK row(s) repeat a forecaster × context × task of a later run "
                        "directory: the later run's row is used")
        rows = rows[~dup]
    rows = _cell_labels(rows.reset_index(drop=True), label_sources)
    cell = [*CELLS, TASK] + ([] if label_sources or "evidence_agent" not in rows.columns else ["evidence_agent"])
    dup = rows.duplicated(cell, keep=False)
    if dup.any():  # same cell and task, different fitted model: one cell per run directory
        run = rows["run_dir"].astype(str).map(lambda d: d.rstrip("/").rsplit("/", 1)[-1]) if "run_dir" in rows \
            else pd.Series("?", index=rows.index)
        rows.loc[dup, "forecaster"] = rows.loc[dup, "forecaster"] + " (" + run[dup] + ")"
        messages.append(f"{int(dup.sum())} Dr-CiK row(s) of the same forecaster × context × task differ in the "
                        "fitted model across run directories: shown as one cell per run directory")
    return rows, messages


def _cell_labels(rows: pd.DataFrame, label_sources: bool = True) -> pd.DataFrame:
    """Forecaster and context labels that keep rows of different identity in different cells: forecaster
    options (when a forecaster has several), the sample count S (when several are mixed) and the
    evidence source of the DR conditions (agent @ run; not with ``label_sources=False``, when the
    table has its own column per DR agent)."""
    rows = rows.copy()
    if "forecaster_options" in rows.columns:
        opts = rows["forecaster_options"].fillna("").astype(str)
        several = opts.groupby(rows["forecaster"]).transform("nunique") > 1
        rows["forecaster"] = rows["forecaster"].astype(str)
        rows.loc[several, "forecaster"] = rows.loc[several, "forecaster"] + " " + opts[several]
    if "n_samples" in rows.columns and rows["n_samples"].dropna().nunique() > 1:
        rows["forecaster"] = rows["forecaster"] + " S=" + rows["n_samples"].map(
            lambda n: str(int(n)) if pd.notna(n) else "?")
    if label_sources and ("evidence_run" in rows.columns or "evidence_agent" in rows.columns):
        run = rows.get("evidence_run", pd.Series(None, index=rows.index))
        agent = rows.get("evidence_agent", pd.Series(None, index=rows.index))
        source = [_source(r, a) for r, a in zip(run, agent)]
        has = pd.Series([s is not None for s in source], index=rows.index)
        if has.any():
            rows.loc[has, "context"] = rows.loc[has, "context"] + pd.Series(
                [f" [{s}]" for s in source if s is not None], index=rows.index[has])
    return rows


def _source(run, agent) -> str | None:
    run = None if run is None or (isinstance(run, float) and run != run) else str(run)
    agent = None if agent is None or (isinstance(agent, float) and agent != agent) else str(agent)
    if run is None and agent is None:
        return None
    where = run.rstrip("/").rsplit("/", 1)[-1] if run else "?"
    return f"{agent} @ {where}" if agent else where


def _order(values: pd.Series, known: list[str] | None = None) -> list[str]:
    seen = list(dict.fromkeys(values.dropna().astype(str)))
    if known:
        return [k for k in known if k in seen] + [v for v in seen if v not in known]
    return seen


def _stand_in(rows: pd.DataFrame, context: str) -> bool:
    if "reproduces_paper" in rows.columns:
        flags = rows.loc[rows["context"] == context, "reproduces_paper"].dropna()
        if len(flags):
            return not bool(flags.astype(bool).all())
    condition = ctx.CONDITIONS.get(context)
    return condition is not None and not condition.reproduces_paper


def _ignores_text(rows: pd.DataFrame, forecaster: str) -> bool:
    if "context_used" not in rows.columns:
        return False
    mine = rows[(rows["forecaster"] == forecaster) & (rows["context"] != "no-context")]
    return len(mine) > 0 and not mine["context_used"].fillna(False).astype(bool).any()


def _label(context: str, stand_in: bool) -> str:
    base, sep, source = context.partition(" [")
    return LABELS.get(base, base) + (STAND_IN if stand_in else "") + (f" [{source}" if sep else "")


def _counts(cell: dict) -> str:
    return str(int(cell["fail"])) if cell else DASH


def scrps_interval(rows: pd.DataFrame, forecaster: str, context: str) -> str | None:
    """With ``--ci``: the t-interval of the cell's mean sCRPS over its scored tasks (the tasks are the
    independent units; :func:`harness.reporting.mean_interval`), None otherwise or with fewer than two tasks."""
    options = report_options()
    if not options.ci:
        return None
    cell = rows[(rows["forecaster"] == forecaster) & (rows["context"] == context) & (rows["status"] == OK)]
    interval = mean_interval(cell["scrps"].to_numpy(dtype=float), alpha=options.alpha)
    return None if interval is None else interval.text()


def table2(rows: pd.DataFrame, forecasters: list[str], contexts: list[str]) -> Table:
    """Table 2: sCRPS mean ± SE per forecaster × context, and the failures per context; the best cell over
    all forecasters and contexts underlined, as in the paper (none when all tie; bold, the best per
    forecaster over the DR contexts, is :func:`.research_tables.table2_dr`'s)."""
    cells = {(c["forecaster"], c["context"]): c for c in summary_table(rows, CELLS, TASK).to_dict("records")}
    stand_ins = {c: _stand_in(rows, c) for c in contexts}
    from tsagent_plugins.tasks.drcik.report.research_tables import _unique_best

    best = _unique_best({k: float(c["scrps_mean"]) for k, c in cells.items() if pd.notna(c["scrps_mean"])})
    header = ["Forecaster", *[_label(c, stand_ins[c]) for c in contexts], "Fail" + (" (per context)"
                                                                                      if len(contexts) > 1 else "")]
    table = Table("drcik-table2", "Dr-CiK Table 2. sCRPS by forecaster and context condition (mean ± standard "
                  "error over scored tasks; lower is better)", header)
    for forecaster in forecasters:
        shown = []
        for context in contexts:
            cell = cells.get((forecaster, context))
            table.interval(len(shown) + 1, scrps_interval(rows, forecaster, context) if cell else None)
            shown.append(table.explain(fmt_pm(cell["scrps_mean"], cell["scrps_se"]) if cell else DASH,
                                       "not run in this context condition" if not cell else
                                       "no scored task: no sCRPS" if pd.isna(cell["scrps_mean"]) else
                                       "a single scored task: no standard error"))
            if cell:
                table.data.append({"forecaster": forecaster, "context": context, "n": int(cell["n"]),
                                   "scrps_mean": cell["scrps_mean"], "scrps_se": cell["scrps_se"],
                                   "fail": int(cell["fail"]), "hidden": int(cell["hidden"]),
                                   "undefined": int(cell["undefined"])})
        fails = table.explain(" | ".join(_counts(cells.get((forecaster, c), {})) for c in contexts),
                              "not run in this context condition")
        label = forecaster + (IGNORES_TEXT if _ignores_text(rows, forecaster) and len(contexts) > 1 else "")
        table.add(label, [*shown, fails])
        for column, context in enumerate(contexts, 1):
            if (forecaster, context) in best:
                table.style(len(table.rows) - 1, column, "underline")
    n_scored = sorted({int(c["n"]) for c in cells.values()})
    table.notes.append("sCRPS: energy-form CRPS scaled by 1 / mean |y| over the forecast window, capped at 5 per "
                       "task (Dr-CiK Appendix H.2); ± is the standard error of the mean over the scored tasks "
                       f"(scored tasks per cell: {', '.join(map(str, n_scored)) or '0'}).")
    table.notes.append("Fail: tasks without a valid forecast (the forecaster raised, timed out or returned "
                       "unusable samples), left out of the mean.")
    absent = "; ".join(f"{name} needs tasks carrying {field} ({why})"
                       for name, (field, why) in ctx.UNAVAILABLE.items() if name not in contexts)
    if any(stand_ins.values()):
        table.notes.append(f"{STAND_IN} Stand-in: the task's target description. The public release omits the "
                           "original context, so the paper's Background condition is approximated"
                           + (f"; {absent} (tasks written by `harness dr-generate` carry it)." if absent else "."))
    elif absent:
        table.notes.append(f"Not in this run: {absent} (tasks written by `harness dr-generate` carry it).")
    if any(_ignores_text(rows, f) for f in forecasters) and len(contexts) > 1:
        table.notes.append(f"{IGNORES_TEXT} Ignores the text context: one forecast per task, scored under every "
                           "condition.")
    return table


def common_subset(rows: pd.DataFrame, forecasters: list[str], contexts: list[str]) -> Table:
    """Per cell over the tasks every cell completed: metrics mean ± SE and average ranks ± SE."""
    keep = common_tasks(rows, CELLS, TASK)
    sub = rows[rows[TASK].isin(keep)]
    header = ["Forecaster", "Context", "sCRPS", "sRMSE", "sMAE", "Avg. rank point (sRMSE)",
              "Avg. rank distributional (sCRPS)"]
    table = Table("drcik-table2-common", f"Dr-CiK Table 2, common subset: the {len(keep)} task(s) every "
                  f"forecaster × context cell completed (mean ± SE; rank 1 = best)", header)
    if not keep:
        table.notes.append("No task was completed by every cell: nothing to compare on a common subset.")
        return table
    summary = {(c["forecaster"], c["context"]): c for c in summary_table(sub, CELLS, TASK).to_dict("records")}
    ranks = {(r["forecaster"], r["context"]): r for r in average_ranks(rows, CELLS, TASK).to_dict("records")}
    stand_ins = {c: _stand_in(rows, c) for c in contexts}
    for forecaster in forecasters:
        for context in contexts:
            cell, rank = summary.get((forecaster, context)), ranks.get((forecaster, context))
            if cell is None:
                continue
            single, none = "a single common task: no standard error", "no value on the common tasks"
            table.add(forecaster, [_label(context, stand_ins[context]),
                                   *[pm(table, cell[f"{m}_mean"], cell[f"{m}_se"], none, single)
                                     for m in ("scrps", "srmse", "smae")],
                                   pm(table, rank["point_rank"], rank["point_rank_se"], none, single, 2),
                                   pm(table, rank["dist_rank"], rank["dist_rank_se"], none, single, 2)])
            table.data.append({"forecaster": forecaster, "context": context, "n": int(cell["n"]),
                               **{k: cell[k] for k in cell if k.endswith(("_mean", "_se"))},
                               **{k: rank[k] for k in ("point_rank", "point_rank_se", "dist_rank",
                                                       "dist_rank_se")}})
    table.notes.append(f"Common tasks: {', '.join(map(str, keep))}.")
    table.notes.append("Average rank: per task, the cells are ranked by sRMSE (point) and by sCRPS "
                       "(distributional), ties sharing the mean rank; then averaged over the common tasks.")
    return table


def _unscored(rows: pd.DataFrame) -> list[str]:
    notes = []
    for status, what in ((LABELS_HIDDEN, "labels hidden (forecasts exported, not scored)"),
                         (UNDEFINED_SCALE, "undefined scale (mean |y| = 0 over the forecast window, not scored)")):
        ids = _order(rows.loc[rows["status"] == status, TASK])
        if ids:
            notes.append(f"Dr-CiK tasks with {what}: {', '.join(ids)}.")
    return notes


def build_section(rows: pd.DataFrame) -> Section:
    """The Dr-CiK report section for ``rows`` (template ``drcik``): research rows
    (``episode_kind == "research"``) give Table 3, Figures 7 and 16 (:func:`research_tables.research_section`);
    forecasting rows give Table 2, with one column per DR agent and the Figure 4 statistics when
    rows carry an ``evidence_agent`` (evidence from a research run)."""
    from tsagent_plugins.tasks.drcik.report import figures as figs
    from tsagent_plugins.tasks.drcik.report import research_tables
    from tsagent_plugins.tasks.drcik.research.scoring import research_scores

    kind = rows["episode_kind"] if "episode_kind" in rows.columns else pd.Series("forecast", index=rows.index)
    research = rows[kind == "research"].reset_index(drop=True)
    forecasts = rows[kind != "research"].reset_index(drop=True)
    scores, research_messages = research_scores(research) if len(research) else ([], [])
    out = Section(research_tables.dr_tables(scores), research_messages, research_tables.dr_figures(scores)) if scores \
        else Section([], research_messages)
    if forecasts.empty:
        missing = figs.not_shown(scores, None)
        return out if missing is None else Section(out.tables + [missing], out.messages, out.figures)
    by_agent = "evidence_agent" in forecasts.columns and forecasts["evidence_agent"].notna().any()
    forecasts, messages = _prepare(forecasts, label_sources=not by_agent)
    counts = sorted({int(n) for n in forecasts["n_samples"].dropna()}) if "n_samples" in forecasts else []
    if len(counts) > 1:
        messages.insert(0, f"the rows mix sample counts (n_samples = {', '.join(map(str, counts))}): "
                           "scores of different sample counts are kept apart, not pooled")
    evidence_scores: list[dict] = []
    if by_agent:
        section, evidence_scores = _with_dr_agents(forecasts, messages)
    else:
        # Figure 5 from the non-DR conditions alone too (e.g. original/rewritten context on generated tasks)
        figure5 = ({"drcik-figure5": figs.figure5(forecasts)}
                   if figs.figure5_forecaster(forecasts) is not None else {})
        section = Section(_table2_tables(forecasts), messages, figure5)
    from tsagent_plugins.tasks.drcik.report import strata

    role_table = strata.table17(forecasts)
    tables = section.tables + ([role_table] if role_table is not None else []) + out.tables
    # the tables and figures of the deep-research side not shown, when the report has that side at all
    missing = figs.not_shown(scores + evidence_scores, forecasts) if (len(research) or by_agent) else None
    if missing is not None:
        tables.append(missing)
    return Section(tables, section.messages + out.messages, {**section.figures, **out.figures})


def _table2_tables(rows: pd.DataFrame) -> list:
    forecasters = _order(rows["forecaster"])
    contexts = _order(rows["context"], list(ctx.CONDITIONS))
    main = table2(rows, forecasters, contexts)
    subset = common_subset(rows, forecasters, contexts)
    unscored = _unscored(rows)
    main.notes += unscored
    if rows["status"].eq(FAILED).any() and "reason" in rows.columns:
        reasons = rows.loc[rows["status"] == FAILED, "reason"].astype(str).value_counts()
        main.notes.append("Failure reasons: " + "; ".join(f"{r[:120]} ({n}x)" for r, n in reasons.head(3).items())
                          + ("; ..." if len(reasons) > 3 else ""))
    return [main, subset]


def _with_dr_agents(rows: pd.DataFrame, messages: list[str]) -> tuple[Section, list[dict]]:
    """Rows with DR evidence from research runs: Table 2 gets one column per DR agent (not one per
    condition, which would mix agents), then the Figure 4 statistics per evidence-recall judge, read
    from the research runs named in ``evidence_run``, and Table 15's end-to-end sCRPS when those runs'
    tasks carry difficulty labels.  Returns the section and the DR metric rows read."""
    from tsagent_plugins.tasks.drcik.report import research_tables
    from tsagent_plugins.tasks.drcik.report import strata
    from tsagent_plugins.tasks.drcik.research.scoring import read_scores

    dr_table = research_tables.table2_dr(rows)
    dr_table.notes += _unscored(rows)
    tables = [dr_table]
    scores = []
    for run_dir in dict.fromkeys(rows["evidence_run"].dropna()) if "evidence_run" in rows.columns else []:
        found = read_scores(run_dir)
        if not found:
            messages.append(f"{run_dir}: research run not judged; run `harness dr-score {run_dir}` for Figure 4")
        scores += found
    from tsagent_plugins.tasks.drcik.report import figures as figs
    from tsagent_plugins.tasks.drcik.research.scoring import scored

    figures = {}
    if scores:
        tables.append(research_tables.table2_by_origin(rows, {r["benchmark_id"]: r.get("origin") for r in scores}))
        by_difficulty = strata.table15_scrps(rows, strata.difficulty_of(scored(scores)))
        if by_difficulty is not None:
            tables.append(by_difficulty)
    for label, group in research_tables.by_judge(scores).items():
        table = research_tables.figure4_stats(rows, group)
        table.key += f"-{group[0]['judge']}"
        table.title += f" (evidence recall judge {label})"
        tables.append(table)
        figures[f"drcik-figure4-{group[0]['judge']}"] = figs.figure4(rows, scored(group), table)
    if figs.figure5_forecaster(rows) is not None:
        figures["drcik-figure5"] = figs.figure5(rows, scores)
    figures["drcik-figure8"] = figs.figure8(rows, scores)
    return Section(tables, messages, figures), scores

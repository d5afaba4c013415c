"""Dr-CiK results by stratum: Table 10 (corpus), Table 15 (difficulty), Tables 16 and 17 (evidence role).

Each builder returns a :class:`harness.Table`, or None when its data is absent (then
:func:`.figures.not_shown` says what it needs).  Inputs: one judge's DR metric rows (:mod:`~tsagent_plugins.tasks.drcik.research.scoring`;
failed episodes are counted apart, never scored as zeros) and forecasting rows (``forecaster``,
``context``, ``benchmark_id``, ``status``, ``scrps``; DR conditions also ``evidence_agent``).

- **Table 10** (Appendix D.1, "Raw source context vs. Dr-CiK corpus"): per corpus (the rows' ``corpus``
  label: A = the raw CAF contexts, B = the generated corpus, as ``tasks/drcik/table10.yaml`` sets them) and
  DR agent: evidence recall (pooled), supporting-document recall and distractor avoidance (Table 3's
  reading), the three metrics the paper compares.  Shown when the rows hold two or more corpora.
- **Table 15** (Appendix K.1): per difficulty dimension and level (``annotations.difficulty``, the task
  level being its hardest step's, :mod:`~tsagent_plugins.tasks.drcik.dataset.difficulty`): DR evidence recall (pooled) per DR agent, and the
  end-to-end sCRPS (a forecaster given a DR agent's ``dr-evidence``; the paper's pair is Codex +
  MoiraiAgent, here every pair the rows hold).  Levels in their scale's order, easiest first.
- **Table 16** (Appendix K.2): DR evidence recall by evidence role: per DR agent, the share of the
  retrospective (prospective) items of E_t matched, pooled over the tasks that mark roles.
- **Table 17** (Appendix K.2): forecasting sCRPS (mean ± SE over tasks) per forecaster under the
  non-DR conditions, ``retrospective-only`` and ``prospective-only`` among them, over the tasks that ran a
  role condition (the paper's 80-task expert split: the tasks that mark roles).
"""

from __future__ import annotations

import pandas as pd

from harness.reporting import DASH, Table
from tsagent_plugins.tasks.drcik.report.cells import (NO_CITATION, NO_EVIDENCE, NO_SUPPORTING, mean_se, pct,
                                                      pct_pm, pm)
from tsagent_plugins.tasks.drcik.research import metrics as m
from tsagent_plugins.tasks.drcik.dataset.contexts import DR_CONDITIONS, ROLE_CONDITIONS
from tsagent_plugins.tasks.drcik.dataset.difficulty import DIMENSIONS, LEVELS
from tsagent_plugins.tasks.drcik.research.scoring import failed, scored, task_scores
from tsagent_plugins.tasks.drcik.dataset.loader import ROLES



def _agents(rows: list[dict]) -> list[str]:
    return list(dict.fromkeys(str(r["agent"]) for r in rows))


def _pooled(rows: list[dict]) -> float | None:
    agg = m.aggregate(task_scores(rows))
    return next(iter(agg.values())).evidence_recall_pooled if len(agg) == 1 else None


# -- Table 10 ---------------------------------------------------------------------------------------

def corpora(rows: list[dict]) -> list[str]:
    """The corpus labels the rows hold (first seen first; rows without one left out)."""
    return list(dict.fromkeys(str(r["corpus"]) for r in rows if r.get("corpus")))


def table10(rows: list[dict]) -> Table | None:
    """Table 10 for one judge's rows (each with its ``corpus``); None with fewer than two corpora."""
    labels = sorted(corpora(rows))
    if len(labels) < 2:
        return None
    label, judge = rows[0]["judge_label"], rows[0]["judge"]
    table = Table(f"drcik-table10-{judge}", f"Dr-CiK Table 10. Deep research on a raw-context corpus vs the generated "
                  f"corpus (judge {label})", ["DR agent", "Corpus", "Tasks", "Failed", "Evidence recall (pooled)",
                                              "Supp. doc recall", "Distractor avoidance"])
    for agent in _agents(rows):
        for corpus in labels:
            mine = [r for r in rows if str(r["agent"]) == agent and str(r.get("corpus")) == corpus]
            if not mine:
                continue
            ok, n_failed = scored(mine), len(failed(mine))
            recall = _pooled(ok) if ok else None
            supp, supp_se = mean_se(r.get("supporting_recall") for r in ok)
            avoid, avoid_se = mean_se(r.get("distractor_avoidance") for r in ok)
            everything = "every episode of this agent on this corpus failed: no metric"
            table.add(agent, [corpus, str(len(ok)), str(n_failed),
                              pct(table, recall, NO_EVIDENCE if ok else everything),
                              pct_pm(table, supp, supp_se, NO_SUPPORTING if ok else everything),
                              pct_pm(table, avoid, avoid_se, NO_CITATION if ok else everything)])
            table.data.append({"agent": agent, "corpus": corpus, "tasks": len(ok), "failed": n_failed,
                               "evidence_recall_pooled": recall, "supporting_recall": supp,
                               "distractor_avoidance": avoid})
    table.notes.append("Corpus: the rows' corpus label (tasks/drcik/table10.yaml: A = the raw CAF task contexts "
                       "before Dr-CiK augmentation, B = the generated Dr-CiK corpus; Appendix D.1). Supp. doc recall "
                       "and distractor avoidance (Table 3's reading): mean ± SE over the tasks; failed episodes "
                       "are counted apart and left out of every mean.")
    return table


# -- Table 15 ---------------------------------------------------------------------------------------

def difficulty_of(rows: list[dict]) -> dict[str, dict[str, str]]:
    """benchmark id -> its difficulty labels, from DR metric rows that carry them."""
    return {str(r["benchmark_id"]): dict(r["difficulty"]) for r in rows if isinstance(r.get("difficulty"), dict)
            and r["difficulty"]}


def _strata(labels: dict[str, dict[str, str]]) -> list[tuple[str, str, list[str]]]:
    """(dimension, level, task ids) for every level some task has, dimensions and levels in scale order."""
    out = []
    for dim in DIMENSIONS:
        for level in LEVELS[dim]:
            ids = sorted(t for t, d in labels.items() if d.get(dim) == level)
            if ids:
                out.append((dim, level, ids))
    return out


def table15_recall(rows: list[dict]) -> Table | None:
    """Table 15, DR side, one judge: pooled evidence recall per difficulty level and DR agent."""
    ok = scored(rows)
    labels = difficulty_of(ok)
    if not labels:
        return None
    label, judge = rows[0]["judge_label"], rows[0]["judge"]
    agents = _agents(ok)
    table = Table(f"drcik-table15-{judge}", f"Dr-CiK Table 15. DR evidence recall (pooled) by difficulty level "
                  f"(judge {label})", ["Dimension", "Level", "Tasks", *agents])
    for dim, level, ids in _strata(labels):
        cells = []
        for agent in agents:
            mine = [r for r in ok if str(r["agent"]) == agent and str(r["benchmark_id"]) in ids]
            recall = _pooled(mine) if mine else None
            cells.append(pct(table, recall, NO_EVIDENCE if mine else "this agent ran no task at this level"))
            table.data.append({"dimension": dim, "level": level, "agent": agent, "tasks": len(mine),
                               "evidence_recall_pooled": recall})
        table.add(dim, [level, str(len(ids)), *cells])
    table.notes.append("Task level on a dimension: its hardest labelled step's (Appendix L.3; the paper labels steps "
                       "and does not say how a task gets one level). Tasks without labels are left out.")
    return table


def table15_scrps(forecasts: pd.DataFrame, labels: dict[str, dict[str, str]]) -> Table | None:
    """Table 15, end-to-end side: sCRPS (mean ± SE over tasks) under ``dr-evidence`` per difficulty level,
    one column per forecaster + DR agent pair; None without labels or DR-evidence forecasts."""
    if not labels or "evidence_agent" not in forecasts.columns:
        return None
    ok = forecasts[(forecasts["status"] == "ok") & (forecasts["context"] == "dr-evidence")
                   & forecasts["evidence_agent"].notna()].copy()
    ok["scrps"] = pd.to_numeric(ok["scrps"], errors="coerce")
    ok = ok[ok["benchmark_id"].astype(str).isin(labels)]
    if ok.empty:
        return None
    pairs = list(dict.fromkeys(zip(ok["evidence_agent"].astype(str), ok["forecaster"].astype(str))))
    table = Table("drcik-table15-e2e", "Dr-CiK Table 15. End-to-end sCRPS by difficulty level (a forecaster given "
                  "a DR agent's evidence; mean ± SE over tasks, lower is better)",
                  ["Dimension", "Level", "Tasks", *[f"{a} + {f}" for a, f in pairs]])
    for dim, level, ids in _strata(labels):
        cells = []
        for agent, forecaster in pairs:
            vals = ok[(ok["evidence_agent"] == agent) & (ok["forecaster"] == forecaster)
                      & ok["benchmark_id"].astype(str).isin(ids)]["scrps"].dropna()
            mean, se = mean_se(vals.tolist())
            cells.append(pm(table, mean, se, "no scored forecast of this pair on a task at this level"))
            table.data.append({"dimension": dim, "level": level, "agent": agent, "forecaster": forecaster,
                               "n": int(len(vals)), "scrps_mean": mean, "scrps_se": se})
        table.add(dim, [level, str(len(ids)), *cells])
    table.notes.append("Difficulty labels read from the judged research runs the evidence came from; sCRPS capped "
                       "at 5 per task (Appendix H.2).")
    return table


# -- Tables 16 and 17 -------------------------------------------------------------------------------

def table16(rows: list[dict]) -> Table | None:
    """Table 16 for one judge's rows: per DR agent, pooled evidence recall of the retrospective and of the
    prospective items of E_t, over the tasks that mark roles; None when no task does."""
    ok = [r for r in scored(rows) if isinstance(r.get("evidence_roles"), dict) and r["evidence_roles"]]
    if not ok:
        return None
    label, judge = rows[0]["judge_label"], rows[0]["judge"]
    table = Table(f"drcik-table16-{judge}", f"Dr-CiK Table 16. DR evidence recall by evidence role (judge {label})",
                  ["DR agent", "Tasks", "Retrospective", "Prospective"])
    for agent in _agents(ok):
        mine = [r for r in ok if str(r["agent"]) == agent]
        cells, record = [], {"agent": agent, "tasks": len(mine)}
        for role in ROLES:
            verdicts = [v for r in mine for v in r.get("verdicts") or [] if r["evidence_roles"].get(v["item"]) == role]
            hit = sum(v.get("matched") is True for v in verdicts)
            recall = hit / len(verdicts) if verdicts else None
            cells.append(f"{pct(table, recall, NO_EVIDENCE)} ({hit}/{len(verdicts)})" if verdicts else
                         table.explain(DASH, "no item of this role in the tasks"))
            record.update({f"{role}_items": len(verdicts), f"{role}_matched": hit, f"{role}_recall": recall})
        table.add(agent, [str(len(mine)), *cells])
        table.data.append(record)
    table.notes.append("Pooled over the tasks that mark each evidence item retrospective (explains the observed "
                       "history) or prospective (describes the forecast window), Appendix K.2; (matched / items "
                       "of E_t with that role; E1 excluded as in every evidence recall).")
    return table


def table17(forecasts: pd.DataFrame) -> Table | None:
    """Table 17: sCRPS mean ± SE per forecaster × non-DR condition over the tasks that ran a role condition;
    None when no row ran one."""
    from tsagent_plugins.tasks.drcik.dataset.contexts import CONDITIONS

    if "context" not in forecasts.columns or not forecasts["context"].isin(ROLE_CONDITIONS).any():
        return None
    tasks = set(forecasts.loc[forecasts["context"].isin(ROLE_CONDITIONS), "benchmark_id"].astype(str))
    rows = forecasts[forecasts["benchmark_id"].astype(str).isin(tasks) & ~forecasts["context"].isin(DR_CONDITIONS)]
    rows = rows.assign(scrps=pd.to_numeric(rows["scrps"], errors="coerce"))
    present = set(rows["context"])
    contexts = [c for c in CONDITIONS if c in present] + sorted(present - set(CONDITIONS))
    table = Table("drcik-table17", "Dr-CiK Table 17. Forecasting sCRPS by evidence role (mean ± SE over the tasks "
                  "marking evidence roles; lower is better)", ["Forecaster", *contexts])
    for forecaster in dict.fromkeys(rows["forecaster"].astype(str)):
        cells = []
        for context in contexts:
            cell = rows[(rows["forecaster"] == forecaster) & (rows["context"] == context)]
            vals = cell.loc[cell["status"] == "ok", "scrps"].dropna()
            mean, se = mean_se(vals.tolist())
            cells.append(pm(table, mean, se, "not run in this context condition on these tasks" if cell.empty else
                            "no scored task in this cell: every forecast failed or went unscored"))
            table.data.append({"forecaster": forecaster, "context": context, "n": int(len(vals)),
                               "failed": int((cell["status"] == "failed").sum()), "scrps_mean": mean, "scrps_se": se})
        table.add(forecaster, cells)
    table.notes.append(f"Tasks: the {len(tasks)} that ran retrospective-only or prospective-only (tasks marking each "
                       "evidence item's role, Appendix K.2). retrospective-only approximates a setting with no "
                       "information about the future; sCRPS capped at 5 per task (Appendix H.2).")
    return table

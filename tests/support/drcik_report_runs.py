"""Inputs of ``harness report`` that make every Dr-CiK table, each with values left undefined on purpose, so a test can
check that every missing cell says why (:func:`tests.support.report_runs.check_exports`).

:func:`make_report_inputs` writes under ``root``:

- ``research-a`` and ``research-b``: research runs (corpus A and B: Table 10) on the public sample's three tasks,
  edited: task_42 and task_163 mark evidence roles (Table 16) and carry difficulty labels (Table 15); task_201 has
  neither origin (Table 14) nor reasoning hops (Figure 7); task_42 has no ``profile`` distractor (Figure 16).
  Agents: ``alpha`` restates evidence items citing supporting documents and a distractor (all three tasks on A,
  task_42 on B); ``silent`` runs task_42 only and cites nothing (no distractor avoidance; a single task: no
  standard error); ``crashed`` failed its only episode.  Both runs are scored by the lexical judge and by a second
  judge label (``other``, the same verdicts: Table 11).
- ``forecast-dr``: forecasting rows (template drcik) with DR evidence from ``research-a`` (Tables 2 with DR agents,
  13, 15 end to end, 17, Figure 4 statistics): a cell over a single task, a cell every forecast of which failed,
  conditions one forecaster did not run.
- ``forecast``: forecasting rows without DR evidence (Table 2 and its common subset), one condition not run by one
  forecaster.
- ``release``: a ``harness dr-generate``-shaped folder (the edited sample, a manifest whose source licence gives no
  redistribution terms or attribution, a cloze round with no blank, a distractor audit, a judge calibration):
  Tables 5 to 9, Figures 3 and 11, the difficulty labels.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from tests.support.drcik_research_runs import write_episode
from tsagent_plugins.judges.lexical import LexicalJudge
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, parse_task
from tsagent_plugins.tasks.drcik.research.scoring import score_run, write_scores

ROLES = {"task_42": ["retrospective", "retrospective", "retrospective", "prospective", "prospective"],
         "task_163": ["retrospective", "retrospective", "prospective"]}
DIFFICULTY = {"task_42": {"certainty": "likely", "explicitness": "explicit"},
              "task_163": {"certainty": "uncertain", "explicitness": "explicit"}}


def edited_sample(root: Path) -> Path:
    """A copy of the public sample at ``root`` with the edits of the module docstring."""
    shutil.copytree(SAMPLE_DIR, root)
    for path in sorted((root / "tasks").glob("*.json")):
        raw = json.loads(path.read_text())
        bid = raw["benchmark_id"]
        for item, role in zip(raw["annotations"]["gt_evidence"], ROLES.get(bid, [])):
            item["role"] = role
        if bid in DIFFICULTY:
            raw["annotations"]["difficulty"] = DIFFICULTY[bid]
        if bid == "task_201":
            del raw["origin"], raw["reasoning_hops"]
        if bid == "task_42":
            raw["documents"] = [d for d in raw["documents"] if d.get("subtype") != "profile"]
        path.write_text(json.dumps(raw))
    return root


def _tasks(release: Path) -> dict:
    tasks = [parse_task(json.loads(p.read_text()), str(p), release) for p in sorted((release / "tasks").glob("*.json"))]
    return {t.benchmark_id: t for t in tasks}


def _research_run(run: Path, tasks: dict, corpus: str, which: tuple[str, ...]) -> Path:
    pool = list(tasks.values())
    for bid in which:
        task = tasks[bid]
        distractor = next(d.document_id for d in task.documents if d.role == "distractor")
        write_episode(run, "alpha", pool, bid, [(task.evidence[1].text, [task.supporting_ids[0], distractor])])
    if corpus == "A":
        write_episode(run, "silent", pool, "task_42", [("a claim citing nothing", [])])
        crashed = write_episode(run, "crashed", pool, "task_163", [("never written", [])])
        row = json.loads((crashed / "row.json").read_text())
        (crashed / "row.json").write_text(json.dumps({**row, "status": "failed", "error": "agent_crashed: timeout"}))
    for path in run.glob("episodes/*/row.json"):   # an episode of its own on each corpus
        row = json.loads(path.read_text())
        path.write_text(json.dumps({**row, "corpus": corpus, "episode": f"{row['episode']}@{corpus}"}))
    rows = score_run(run, LexicalJudge())
    write_scores(run, rows)
    write_scores(run, [{**r, "judge": "other", "judge_label": "other@v1 (rule)", "judge_kind": "rule"} for r in rows])
    return run


def _forecast_run(folder: Path, rows: list[dict]) -> Path:
    folder.mkdir(parents=True)
    frame = pd.DataFrame([{"run_id": folder.name, "template": "drcik", "task": "sample", "srmse": r.get("scrps"),
                           "smae": r.get("scrps"), **r} for r in rows])
    frame["episode"] = [f"{r['forecaster']}/{r['context']}/{r.get('evidence_agent')}/{r['benchmark_id']}"
                        for r in rows]
    frame.to_parquet(folder / "results.parquet", index=False)
    return folder


def _dr_forecasts(research: Path) -> list[dict]:
    rows = []
    scrps = {"task_42": 0.5, "task_163": 0.8, "task_201": 1.1}
    for forecaster, gain in (("llm-dp", 0.2), ("naive", 0.0)):
        for bid, base in scrps.items():
            rows.append({"forecaster": forecaster, "context": "no-context", "benchmark_id": bid, "status": "ok",
                         "scrps": base})
            for agent in ("alpha", "silent"):
                if agent == "silent" and bid != "task_42":
                    continue                                   # silent researched task_42 only: single-task cells
                for context in ("dr-evidence", "verified-dr"):
                    failed = forecaster == "naive" and agent == "silent" and context == "verified-dr"
                    rows.append({"forecaster": forecaster, "context": context, "benchmark_id": bid,
                                 "status": "failed" if failed else "ok", "scrps": None if failed else base - gain,
                                 "evidence_agent": agent, "evidence_run": str(research)})
        # evidence roles (Table 17): llm-dp on task_42 only; naive failed its one retrospective-only forecast
        if forecaster == "llm-dp":
            rows += [{"forecaster": forecaster, "context": c, "benchmark_id": "task_42", "status": "ok",
                      "scrps": 0.4} for c in ("retrospective-only", "prospective-only")]
        else:
            rows.append({"forecaster": forecaster, "context": "retrospective-only", "benchmark_id": "task_42",
                         "status": "failed", "scrps": None})
    return rows


def _forecasts() -> list[dict]:
    rows = [{"forecaster": f, "context": "no-context", "benchmark_id": bid, "status": "ok", "scrps": s}
            for f, values in (("A", (0.2, 0.4)), ("B", (0.3, 0.1))) for bid, s in zip(("t1", "t2"), values)]
    rows.append({"forecaster": "A", "context": "supporting-evidence", "benchmark_id": "t1", "status": "ok",
                 "scrps": 0.1})
    return rows


def _generation(release: Path) -> None:
    gen = release / "generation"
    (gen / "qc_cloze").mkdir(parents=True)
    (gen / "qc").mkdir()
    (gen / "calibration").mkdir()
    empty = {"blanks": 0, "tasks": 0, "correct": 0, "partial": 0, "wrong": 0, "mean_score": None}
    (gen / "qc_cloze" / "round_1.json").write_text(json.dumps({"round": 1, "repair": False, "asked": 0,
                                                               "blanks": [], "table": empty}))
    (gen / "qc" / "distractors.json").write_text(json.dumps({"table": [
        {"subtype": "total", "distractors": 2, "rejectable_by_rule": 2, "explicitly_rejectable": 2}]}))
    (gen / "calibration" / "agreement.json").write_text(json.dumps({
        "rows": [{"stage": "evidence", "units": 1, "comparable": 1, "agree": 1, "judge_stricter": 0,
                  "judge_more_permissive": 0, "at_least_as_strict": True}],
        "records": 3, "stage_level": 3, "per_entry": 0, "tasks": ["task_42"]}))
    manifest = json.loads((release / "benchmark_manifest.json").read_text())
    manifest["sources"] = [{"name": "CiK", "license": "Apache-2.0"}]
    (release / "benchmark_manifest.json").write_text(json.dumps(manifest))


def make_report_inputs(root: Path) -> dict[str, list[Path]]:
    """The report inputs of the module docstring under ``root``, as ``harness report`` arguments per report:
    ``research`` (the two research runs and the forecasts with their evidence), ``forecast`` and ``release``."""
    release = edited_sample(root / "release")
    tasks = _tasks(release)
    research_a = _research_run(root / "research-a", tasks, "A", ("task_42", "task_163", "task_201"))
    research_b = _research_run(root / "research-b", tasks, "B", ("task_42",))
    forecast_dr = _forecast_run(root / "forecast-dr", _dr_forecasts(research_a))
    forecast = _forecast_run(root / "forecast", _forecasts())
    _generation(release)
    return {"research": [research_a, research_b, forecast_dr], "forecast": [forecast], "release": [release]}

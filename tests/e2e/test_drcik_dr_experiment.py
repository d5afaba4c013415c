"""The end-to-end Dr-CiK experiment ``tasks/experiments/drcik-dr-sample.yaml`` (offline, scripted models):
research stage (DR agents × the three sample tasks, judged by the lexical judge when it ends) ->
forecasting stage (llm-dp and naive × no context, supporting evidence and the DR conditions, once per
DR agent) -> ``harness report``: Tables 2 and 3, Figure 4 statistics, Figures 7 and 16.

To keep it short the test runs the shipped experiment with two of its five DR agents (each with its
own scripted model from the stage's ``scripts``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness.wire import proxy_log, read_log
from harness.report import build_report
from harness.sandbox import choose_backend
from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE, REPORT_FILE
from tsagent_plugins.tasks.drcik.research.outputs import DEEP_RESEARCH_FILE
from tests.support.paths import REPO

EXPERIMENT = REPO / "tasks" / "experiments" / "drcik-dr-sample.yaml"
AGENTS = ["retrieval-bm25-gemini-3-flash", "drbench-gemini-3-flash"]
TASK_IDS = ["task_163", "task_201", "task_42"]


def _local_sandbox() -> str | None:
    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(_local_sandbox() not in ("bubblewrap", "unshare"),
                                                   reason="no isolating local sandbox (bubblewrap or unshare) here")]


@pytest.fixture(scope="module")
def e2e(tmp_path_factory):
    folder = tmp_path_factory.mktemp("drcik-dr")
    spec = yaml.safe_load(EXPERIMENT.read_text())
    research, forecast = spec["stages"]
    assert set(research["agents"]) == {"retrieval-bm25-gemini-3-flash", "retrieval-gemini-3-flash",
                                       "drbench-gemini-3-flash", "opendr-gemini-3-flash",
                                       "bench2future-gemini-3-flash"} == set(research["scripts"])
    research["agents"] = AGENTS
    research["scripts"] = {a: str((EXPERIMENT.parent / research["scripts"][a]).resolve()) for a in AGENTS}
    for stage in (research, forecast):
        stage["tasks"] = [str((EXPERIMENT.parent / t).resolve()) for t in stage["tasks"]]
    experiment = folder / "drcik-dr-two-agents.yaml"
    experiment.write_text(yaml.safe_dump(spec))
    root = folder / "run"
    run = subprocess.run([sys.executable, "-m", "harness", "run", "--experiment", str(experiment),
                          "--model-backend", "scripted", "--out", str(root)],
                         capture_output=True, text=True, timeout=900, cwd=REPO)
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    report = subprocess.run([sys.executable, "-m", "harness", "report", str(root / "research"), str(root / "forecast"),
                             "--out", str(folder / "report")], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert report.returncode == 0, report.stderr[-3000:]
    return root, run.stdout + run.stderr, report.stdout, folder / "report"


def test_research_stage_is_judged_when_it_ends(e2e):
    root, output, _, _ = e2e
    rows = pd.read_parquet(root / "research" / "results.parquet")
    assert sorted(rows["profile"]) == sorted(AGENTS * 3) and set(rows["status"]) == {"ok"}
    scores = [json.loads(x) for x in (root / "research" / "dr_scores.jsonl").read_text().splitlines()]
    assert len(scores) == 6 and {s["judge_label"] for s in scores} == {"lexical@lexical-v1 (lexical)"}
    by = {(s["agent"], s["benchmark_id"]): s for s in scores}
    for row in rows.itertuples():
        s = by[(row.profile, row.benchmark_id)]
        assert s["hallucinated"] == row.hallucinated_ids      # the research row and the DR metrics agree
        assert s["k_t"] == len(s["verdicts"]) + 5                 # K_t = |E_t| + 5, E_t = items minus E1
    # retrieval's script cites the top three search results and one made-up id; drbench's synthesis cites S999,
    # which names no brief: one hallucinated id each (Appendix I.1)
    assert {by[(AGENTS[0], t)]["hallucinated"] for t in TASK_IDS} == {1}
    assert {by[(AGENTS[1], t)]["hallucinated"] for t in TASK_IDS} == {1}
    assert "DR metrics: 6 episode(s) judged by lexical@lexical-v1 (lexical)" in output


def test_every_stage_leaves_complete_valid_submissions(e2e):
    """The forecasting stage runs once per DR agent; a later unit's export never empties an earlier one's."""
    from tsagent_plugins.tasks.drcik.forecast.experiment import validate_submission
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    root, output, _, _ = e2e
    assert "INVALID" not in output
    tasks = [t for t in load_tasks() if t.benchmark_id in TASK_IDS]
    folders = sorted((root / "forecast" / "submissions").iterdir())
    assert {f.name for f in folders} >= {"llm-dp__no-context", "naive__supporting-evidence",
                                         f"llm-dp__dr-evidence__{AGENTS[1]}"}
    for folder in folders:
        assert validate_submission(folder, tasks).ok, folder
        assert len((folder / "forecasts.jsonl").read_text().splitlines()) == 3, folder


def _context_blocks(folder: Path) -> set[str]:
    blocks = set()
    for call in sorted(p for p in folder.glob("proxy/**/") if proxy_log(p) is not None):
        for entry in read_log(proxy_log(call)):
            if entry.get("type") == "request":
                prompt = entry["body"]["messages"][-1]["content"]
                blocks.add(prompt.split("<context>\n", 1)[1].split("\n</context>", 1)[0] if "<context>" in prompt
                           else "")
    return blocks


def test_llm_dp_prompts_hold_exactly_each_conditions_text(e2e):
    root, _, _, _ = e2e
    research = pd.read_parquet(root / "research" / "results.parquet")
    rows = pd.read_parquet(root / "forecast" / "results.parquet")
    dp = rows[rows["forecaster"] == "llm-dp"]
    assert set(dp["status"]) == {"ok"}
    for r in research.itertuples():
        folder = root / "research" / "episodes" / r.episode
        claims = json.loads((folder / "key" / DEEP_RESEARCH_FILE).read_text())["evidence"]
        details = json.loads((folder / "score.json").read_text())["details"]
        supporting = set(json.loads((folder / "key" / KEY_FILE).read_text())["supporting"])
        verified = [c for c, d in zip(claims, details) if d["resolved"] and set(d["resolved"]) <= supporting]
        report = (folder / "workspace" / REPORT_FILE).read_text().strip()
        mine = dp[(dp["benchmark_id"] == r.benchmark_id) & (dp["evidence_agent"] == r.profile)].set_index("context")
        expected = {"dr-evidence": "\n".join(f"- {c}" for c in claims), "dr-report": report,
                    "verified-dr": "\n".join(f"- {c}" for c in verified) if verified else ""}
        for condition, text in expected.items():
            episode = root / "forecast" / "episodes" / mine.loc[condition, "episode"]
            assert _context_blocks(episode) == {text}, (r.profile, r.benchmark_id, condition)
            assert mine.loc[condition, "context_status"] == ("verified_empty" if not text else "ok")


def test_report_prints_tables_2_and_3_and_writes_figures_7_and_16(e2e):
    root, _, printed, out = e2e
    assert str(out / "report.md") in printed.splitlines()  # the report prints the files it wrote
    document = (out / "report.md").read_text()
    assert "Dr-CiK Table 2 with DR agents" in document and "Dr-CiK Table 3" in document
    assert "Dr-CiK Figure 4 statistics" in document and "Figure 16" in document
    assert (out / "figures" / "drcik-figure16.png").stat().st_size > 10_000
    assert (out / "figures" / "drcik-figure7-lexical.png").stat().st_size > 10_000
    report = build_report([root / "research", root / "forecast"], with_figures=False)
    tables = {t.key: t for t in report.tables}
    t2 = tables["drcik-table2-dr"]
    assert t2.header == ["Forecaster", "DR condition", "no-context", "supporting-evidence", *sorted(AGENTS),
                         "Fail (per column)"]
    assert {r[-1] for r in t2.rows} == {"0 | 0 | 0 | 0"}   # every forecast of this run scored
    # the sample marks no roles and carries no difficulty labels, and one corpus, one judge: those tables footnoted
    assert [r[0].split(" (")[0] for r in tables["drcik-not-shown"].rows] == [
        "Table 10", "Table 11", "Table 15", "Table 16", "Table 17", "Figure 5 original- and rewritten-context bars"]
    assert [r[:2] for r in t2.rows] == [[f, c] for f in ("llm-dp", "naive")
                                         for c in ("dr-evidence", "dr-report", "verified-dr")]
    rows = pd.read_parquet(root / "forecast" / "results.parquet")
    cells = {(d["forecaster"], d["context"], d["agent"]): d for d in t2.data}
    for (f, c, a), group in rows[rows["status"] == "ok"].groupby(
            ["forecaster", "context", rows["evidence_agent"].fillna("")]):
        cell = cells[(f, c, a or None)]
        assert cell["n"] == 3 and cell["scrps_mean"] == pytest.approx(group["scrps"].mean())
    t3 = tables["drcik-table3-lexical"]
    assert sorted(r[0] for r in t3.rows) == sorted(AGENTS)
    scores = [json.loads(x) for x in (root / "research" / "dr_scores.jsonl").read_text().splitlines()]
    for row in t3.rows:
        mine = [s for s in scores if s["agent"] == row[0]]
        assert row[1] == "3" and row[-2] == str(sum(s["hallucinated"] for s in mine))
    fig4 = tables["drcik-figure4-lexical"]
    assert fig4.data[0]["n"] == 2 * 2 * 3       # (forecaster, DR agent, task) pairs of raw vs verified sMAE

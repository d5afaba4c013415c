"""Dr-CiK Tables 10, 15, 16 and 17 (:mod:`tsagent_plugins.tasks.drcik.report.strata`) on small hand-made research
episodes (the lexical judge, claims restating chosen evidence items) and forecasting rows, and ``harness report``
showing each table only when its data exists (footnoted in the not-shown table otherwise)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.support.drcik_research_runs import write_episode
from tsagent_plugins.judges.lexical import LexicalJudge
from tsagent_plugins.tasks.drcik.report import strata
from tsagent_plugins.tasks.drcik.research.scoring import score_run, write_scores
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, load_tasks, parse_task
from tsagent_plugins.tasks.drcik.report.table2 import build_section

#: Appendix K.2 roles per task (E1..En) and Appendix L.3 task levels, as generated tasks carry them.
ROLES = {"task_42": ["retrospective", "retrospective", "retrospective", "prospective", "prospective"],
         "task_163": ["retrospective", "retrospective", "prospective"]}
DIFFICULTY = {"task_42": {"certainty": "likely", "explicitness": "explicit"},
              "task_163": {"certainty": "uncertain", "explicitness": "explicit"}}


@pytest.fixture(scope="module")
def tasks():
    """The sample with roles and difficulty labels on task_42 and task_163 (task_201 unmarked)."""
    out = []
    for path in sorted((SAMPLE_DIR / "tasks").glob("*.json")):
        raw = json.loads(path.read_text())
        for item, role in zip(raw["annotations"]["gt_evidence"], ROLES.get(raw["benchmark_id"], [])):
            item["role"] = role
        if raw["benchmark_id"] in DIFFICULTY:
            raw["annotations"]["difficulty"] = DIFFICULTY[raw["benchmark_id"]]
        out.append(parse_task(raw, str(path), SAMPLE_DIR))
    return {t.benchmark_id: t for t in out}


def restating(tasks, task_id, items):
    """Claims restating the given evidence items (E1 = 0) word for word, each citing a supporting document."""
    task = tasks[task_id]
    return [(task.evidence[i].text, [task.supporting_ids[0]]) for i in items]


@pytest.fixture
def scores(tmp_path, tasks):
    """alpha restates E2, E4 of task_42 and E3 of task_163; beta restates E5 of task_42."""
    run = tmp_path / "research"
    pool = list(tasks.values())
    write_episode(run, "alpha", pool, "task_42", restating(tasks, "task_42", [1, 3]))
    write_episode(run, "alpha", pool, "task_163", restating(tasks, "task_163", [2]))
    write_episode(run, "beta", pool, "task_42", restating(tasks, "task_42", [4]))
    return run, score_run(run, LexicalJudge())


def test_research_key_and_rows_carry_roles_and_difficulty(scores):
    _, rows = scores
    rows = {(r["agent"], r["benchmark_id"]): r for r in rows}
    a42 = rows[("alpha", "task_42")]
    assert a42["evidence_roles"] == {"E2": "retrospective", "E3": "retrospective", "E4": "prospective",
                                     "E5": "prospective"}   # E1 is not in E_t
    assert a42["difficulty"] == DIFFICULTY["task_42"]
    assert {v["item"]: v["matched"] for v in a42["verdicts"]} == {"E2": True, "E3": False, "E4": True, "E5": False}
    assert {v["item"]: v["matched"] for v in rows[("beta", "task_42")]["verdicts"]}["E5"] is True


def test_table16_recall_by_evidence_role(scores):
    """alpha: retrospective items E2, E3 (task_42), E2 (task_163): 1 of 3 matched; prospective E4, E5, E3: 2 of 3.
    beta: retrospective 0 of 2, prospective 1 of 2."""
    _, rows = scores
    table = strata.table16(rows)
    data = {d["agent"]: d for d in table.data}
    assert table.key == "drcik-table16-lexical" and table.title.startswith("Dr-CiK Table 16.")
    assert (data["alpha"]["retrospective_matched"], data["alpha"]["retrospective_items"]) == (1, 3)
    assert (data["alpha"]["prospective_matched"], data["alpha"]["prospective_items"]) == (2, 3)
    assert data["alpha"]["retrospective_recall"] == pytest.approx(1 / 3)
    assert data["beta"]["retrospective_recall"] == 0.0 and data["beta"]["prospective_recall"] == 0.5
    assert table.rows[0] == ["alpha", "2", "33.3% (1/3)", "66.7% (2/3)"]
    unmarked = [{**r, "evidence_roles": None} for r in rows]
    assert strata.table16(unmarked) is None


def test_table15_recall_by_difficulty_level(scores):
    """certainty likely = task_42 (alpha 2 of 4, beta 1 of 4); uncertain = task_163 (alpha 1 of 2, beta none);
    explicitness explicit = both tasks (alpha 3 of 6)."""
    _, rows = scores
    table = strata.table15_recall(rows)
    cells = {(d["dimension"], d["level"], d["agent"]): d["evidence_recall_pooled"] for d in table.data}
    assert cells[("certainty", "likely", "alpha")] == 0.5 and cells[("certainty", "likely", "beta")] == 0.25
    assert cells[("certainty", "uncertain", "alpha")] == 0.5 and cells[("certainty", "uncertain", "beta")] is None
    assert cells[("explicitness", "explicit", "alpha")] == 0.5
    assert [r[:3] for r in table.rows] == [["certainty", "likely", "1"], ["certainty", "uncertain", "1"],
                                           ["explicitness", "explicit", "2"]]   # scale order, easiest first
    assert strata.table15_recall([{**r, "difficulty": None} for r in rows]) is None


def forecasts():
    """naive on task_42 / task_163 under no-context and the role conditions, and on task_201 (no roles) under
    no-context only; naive + alpha's DR evidence on both labelled tasks."""
    rows = [("no-context", "task_42", 1.0), ("no-context", "task_163", 2.0), ("no-context", "task_201", 9.0),
            ("retrospective-only", "task_42", 0.8), ("retrospective-only", "task_163", 1.0),
            ("prospective-only", "task_42", 0.5), ("prospective-only", "task_163", None),
            ("dr-evidence", "task_42", 0.7), ("dr-evidence", "task_163", 0.9)]
    return pd.DataFrame([{"forecaster": "naive", "context": c, "benchmark_id": t, "scrps": s, "smae": s, "srmse": s,
                          "status": "ok" if s is not None else "failed",
                          "evidence_agent": "alpha" if c == "dr-evidence" else None} for c, t, s in rows])


def test_table17_sCRPS_by_evidence_role_over_the_tasks_marking_roles():
    table = strata.table17(forecasts())
    cells = {d["context"]: d for d in table.data}
    assert table.key == "drcik-table17" and table.header == ["Forecaster", "no-context", "retrospective-only",
                                                             "prospective-only"]
    assert cells["no-context"]["scrps_mean"] == 1.5 and cells["no-context"]["n"] == 2     # task_201 left out
    assert cells["no-context"]["scrps_se"] == pytest.approx(0.5)
    assert cells["retrospective-only"]["scrps_mean"] == pytest.approx(0.9)
    assert cells["retrospective-only"]["scrps_se"] == pytest.approx(0.1)
    assert (cells["prospective-only"]["scrps_mean"], cells["prospective-only"]["failed"]) == (0.5, 1)
    assert table.rows == [["naive", "1.500 ± 0.500", "0.900 ± 0.100", "0.500 ± –ᵃ"]]
    assert table.notes[0] == "–ᵃ a single task: no standard error"
    assert strata.table17(forecasts().query("context == 'no-context'")) is None


def test_table15_end_to_end_sCRPS(scores):
    _, rows = scores
    table = strata.table15_scrps(forecasts(), strata.difficulty_of(rows))
    cells = {(d["dimension"], d["level"]): d for d in table.data}
    assert table.header == ["Dimension", "Level", "Tasks", "alpha + naive"]
    assert cells[("certainty", "likely")]["scrps_mean"] == 0.7
    assert cells[("certainty", "uncertain")]["scrps_mean"] == 0.9
    assert cells[("explicitness", "explicit")]["scrps_mean"] == pytest.approx(0.8)
    assert cells[("explicitness", "explicit")]["scrps_se"] == pytest.approx(0.1)
    assert strata.table15_scrps(forecasts(), {}) is None


def research_rows(run, corpus=None):
    rows = []
    for path in sorted(run.glob("episodes/*/row.json")):
        row = json.loads(path.read_text())
        rows.append({**row, "run_dir": str(run), "corpus": corpus})
    return rows


def test_table10_two_corpora_through_the_report(tmp_path, tasks):
    """The same agent on corpus A (restates E2 of task_42: 1 of 4) and B (E2 and E4: 2 of 4): Table 10 per
    corpus, read from the research rows' corpus label; one corpus only: footnoted as not shown."""
    pool = list(tasks.values())
    runs = {"A": tmp_path / "a", "B": tmp_path / "b"}
    write_episode(runs["A"], "alpha", pool, "task_42", restating(tasks, "task_42", [1]) + [("noise", ["doc_0"])])
    write_episode(runs["B"], "alpha", pool, "task_42", restating(tasks, "task_42", [1, 3]))
    for run in runs.values():
        write_scores(run, score_run(run, LexicalJudge()))
    rows = pd.DataFrame(research_rows(runs["A"], "A") + research_rows(runs["B"], "B"))
    section = build_section(rows)
    (t10,) = [t for t in section.tables if t.key == "drcik-table10-lexical"]
    cells = {d["corpus"]: d for d in t10.data}
    assert cells["A"]["evidence_recall_pooled"] == 0.25 and cells["B"]["evidence_recall_pooled"] == 0.5
    assert (cells["A"]["tasks"], cells["A"]["failed"]) == (1, 0)
    assert [r[:3] for r in t10.rows] == [["alpha", "A", "1"], ["alpha", "B", "1"]]
    shown = {t.key for t in section.tables}
    assert {"drcik-table16-lexical", "drcik-table15-lexical"} <= shown
    missing = next(t for t in section.tables if t.key == "drcik-not-shown")
    names = [r[0] for r in missing.rows]
    assert not any(n.startswith(("Table 10", "Table 15", "Table 16")) for n in names)
    assert "Table 17 (forecasting by evidence role)" in names
    # one corpus only, and tasks without roles or labels: each of those tables footnoted with what it needs
    plain = tmp_path / "plain"
    write_episode(plain, "alpha", load_tasks(), "task_42", [("noise", [])])
    write_scores(plain, score_run(plain, LexicalJudge()))
    section = build_section(pd.DataFrame(research_rows(plain, "B")))
    assert not {k for k in (t.key for t in section.tables) if k.startswith(("drcik-table10", "drcik-table15",
                                                                            "drcik-table16"))}
    needs = dict(next(t for t in section.tables if t.key == "drcik-not-shown").rows)
    assert "two corpora" in needs["Table 10 (research on a raw-context corpus vs the generated corpus)"]
    assert "annotations.difficulty" in needs["Table 15 (results by difficulty dimension)"]
    assert "annotations.gt_evidence[i].role" in needs["Table 16 (DR evidence recall by evidence role)"]


def test_report_shows_table17_beside_table2_for_forecast_only_runs():
    section = build_section(forecasts().query("context != 'dr-evidence'").drop(columns=["evidence_agent"]))
    assert [t.key for t in section.tables] == ["drcik-table2", "drcik-table2-common", "drcik-table17"]


def test_figure5_leaves_the_role_conditions_to_table17():
    from harness.reporting import figure_problems
    from tsagent_plugins.tasks.drcik.report.figures import figure5

    fig = figure5(forecasts())
    ticks = [t.get_text().replace("\n", "") for t in fig.axes[0].get_xticklabels()]
    assert ticks == ["no-context", "dr-evidence"] and figure_problems(fig) == []

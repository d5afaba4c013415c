"""Human calibration (Appendix D.2, Figure 11): review records, human majority, the judge re-asked on the reviewed
units, agree / stricter / more permissive, and calibration tasks reused by a generation."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik.generation import engine as eng
from tsagent_plugins.tasks.drcik.quality import calibration as cal

from .conftest import write_release, task


def verdict(judge):
    return {"text": json.dumps({"judge": judge, "confidence": "high", "summary": judge, "findings": [],
                                "correction_hint": ""})}


def generated(tmp_path, engine):
    """A generation whose evidence stage judged u1..u3 and chain stage c1 (all accepted)."""
    out = tmp_path / "gen"
    generation_engine, _ = engine({"match": [{"when": {"contains": "CTX-"}, "reply": verdict("correct")}]}, out)
    generation_engine.clients.update(judge_evidence=generation_engine.clients["generator"],
                                     judge_chain=generation_engine.clients["generator"])

    def stage(name, prompt, values):
        return eng.Stage(name, 4, lambda unit, attempt: {"ok": True},
                         judge=lambda unit, output: [eng.JudgeCall(prompt, values(unit))])

    generation_engine.run(stage("step4_evidence_decomposition", "judge_evidence", lambda u: {
        "task_id": u.id, "context": f"CTX-{u.id}", "gt_evidence_extraction": "{}"}),
        [eng.Unit("u1"), eng.Unit("u2"), eng.Unit("u3")])
    generation_engine.run(stage("step5_chain_expansion", "judge_chain", lambda u: {
        "context": f"CTX-{u.id}", "expanded_output": "{}", "item_kind": "chain", "source_event_ids": "E1"}),
        [eng.Unit("c1")])
    return out


def review(path, stage, unit, reviewer, verdict_, entry=None, note=""):
    cal.append_review(path, {"task": unit, "stage": stage, "unit": unit, "reviewer": reviewer, "verdict": verdict_,
                             "entry": entry, "note": note})


def test_figure_11_counts_a_more_permissive_judge_as_such(tmp_path, engine):
    out = generated(tmp_path, engine)
    path = out / cal.REVIEWS
    for r in ("r1", "r2", "r3"):
        review(path, "evidence", "u1", r, "acceptable")  # majority accepts; the judge rejects: stricter
    review(path, "evidence", "u2", "r1", "acceptable")
    review(path, "evidence", "u2", "r2", "not_acceptable", note="E2 missing")
    review(path, "evidence", "u2", "r3", "acceptable")
    review(path, "evidence", "u2", "r3", "not_acceptable")  # r3 changes their mind: majority rejects u2
    review(path, "evidence", "u3", "r1", "acceptable")
    review(path, "evidence", "u3", "r2", "not_acceptable")  # a tie: not comparable
    review(path, "chain", "c1", "r1", "acceptable")
    review(path, "chain", "c1", "r2", "not_acceptable", entry="C3")  # a per-entry rejection is r2's verdict
    review(path, "chain", "c1", "r3", "acceptable", entry="C3")
    script = {"match": [{"when": {"contains": "CTX-u1"}, "reply": verdict("needs_correction")},
                        {"when": {"contains": "CTX-u2"}, "reply": verdict("correct")},
                        {"when": {"contains": "CTX-u3"}, "reply": verdict("uncertain")},
                        {"when": {"contains": "CTX-c1"}, "reply": verdict("correct")}]}
    judge_engine, client = engine(script, out)
    judge_engine.clients.update(judge_evidence=client, judge_chain=client)
    result = cal.calibrate(out, judge_engine)
    rows = {r["stage"]: r for r in result["rows"]}
    assert rows["evidence"] == {"stage": "evidence", "units": 3, "comparable": 2, "agree": 0, "judge_stricter": 1,
                                "judge_more_permissive": 1, "at_least_as_strict": False}
    assert rows["chain"] == {"stage": "chain", "units": 1, "comparable": 1, "agree": 1, "judge_stricter": 0,
                             "judge_more_permissive": 0, "at_least_as_strict": True}
    assert (result["records"], result["stage_level"], result["per_entry"]) == (12, 10, 2)
    assert client.totals["requests"] == 4
    saved = json.loads((out / "generation" / "calibration" / "agreement.json").read_text())
    assert saved["rows"] == result["rows"]


def test_a_bad_record_names_the_file_line_and_field(tmp_path):
    path = tmp_path / "reviews.jsonl"
    path.write_text('{"task": "t", "stage": "evidence", "unit": "t", "reviewer": "r", "verdict": "ok"}\n')
    with pytest.raises(ValueError, match=r"reviews\.jsonl:1: verdict"):
        cal.read_reviews(path)


def test_a_generation_reusing_calibration_tasks_is_flagged(tmp_path):
    reviews = tmp_path / "reviews.jsonl"
    review(reviews, "evidence", "t1", "r1", "acceptable")
    review(reviews, "chain", "t9", "r1", "acceptable")
    gen = write_release(tmp_path / "gen", [task("t1", {}, []), task("t2", {}, [])])
    assert cal.reused_units(gen, reviews) == ["t1"]

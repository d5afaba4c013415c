"""Cloze audit (Appendix D.1, Table 8): blanks, graded scores, documents to repair, re-run on failed blanks only."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik.quality import cloze

from .conftest import doc, task, write_release

EVIDENCE = {"E1": "Harbor Pumping Station flow peaked at 1,200 m3 on day 3.", "E2": "Flow fell by 30 percent."}
DOCS = [doc("s1", "Harbor Station flow peaked at 1200 m3 on day 3."), doc("s2", "Flow fell sharply."),
        doc("x1", "Flow fell by 30 percent at Aurora.", "distractor", "profile")]


def answers(**kw):
    return {"text": json.dumps({"answers": [{"blank": k, "answer": v} for k, v in kw.items()]})}


def test_the_paper_figures_imply_partial_blanks_average_about_063():
    assert cloze.implied_partial_mean() == pytest.approx(0.6258, abs=1e-4)


def test_scores():
    assert cloze.score("number", "1,200", "1200 m3") == 1.0
    assert cloze.score("number", "30", "20") == pytest.approx(2 / 3)
    assert cloze.score("number", "30", "90") == 0.0 and cloze.score("number", "30", "") == 0.0
    assert cloze.score("name", "Harbor Pumping Station", "harbor  pumping station") == 1.0
    assert cloze.score("name", "Harbor Pumping Station", "Harbor Station") == pytest.approx(0.8)
    assert cloze.score("name", "Harbor Pumping Station", "Aurora") == 0.0


def test_blanks_are_the_entity_and_the_numbers():
    raw = task("t1", EVIDENCE, DOCS)
    got = [(b["blank"], b["evidence_id"], b["kind"], b["truth"]) for b in cloze.blanks_of(raw)]
    assert got == [("BLANK_1", "E1", "name", "Harbor Pumping Station"), ("BLANK_2", "E1", "number", "1,200"),
                   ("BLANK_3", "E1", "number", "3"), ("BLANK_4", "E2", "number", "30")]
    dated = task("t2", {"E1": "On 2025-01-02 12:00:00 flow hit -4.5 (see m3)."}, [])
    assert [(b["kind"], b["truth"]) for b in cloze.blanks_of(dated)] == [("datetime", "2025-01-02 12:00:00"),
                                                                           ("number", "-4.5")]
    assert cloze.score("datetime", "2025-01-02 12:00:00", "at 2025-01-02 12:00") == 1.0
    assert cloze.score("date", "2025-01-02", "2025-01-03") == 0.0
    assert "E1: [BLANK_1] flow peaked at [BLANK_2] m3 on day [BLANK_3]." in cloze.masked(raw, cloze.blanks_of(raw))


def test_a_clock_time_a_date_time_and_a_range_are_one_blank_each():
    raw = task("t3", {"E1": "Pumps 2 and 3 were off from 09:00 to 15:00 on 2025-01-02.",
                      "E2": "Restart at 2025-01-02 16:30, inspection at 9:30 pm, between 2025-01-03 and 2025-01-04."},
               [])
    got = [(b["kind"], b["truth"]) for b in cloze.blanks_of(raw)]
    assert got == [("number", "2"), ("number", "3"), ("range", "09:00 to 15:00"), ("date", "2025-01-02"),
                   ("datetime", "2025-01-02 16:30"), ("time", "9:30 pm"), ("range", "2025-01-03 and 2025-01-04")]
    assert "E1: Pumps [BLANK_1] and [BLANK_2] were off from [BLANK_3] on [BLANK_4]." in cloze.masked(raw, cloze.blanks_of(raw))
    # a one-hour misread of a clock time is wrong, not a partial number; one wrong end of a range is half
    assert cloze.score("range", "09:00 to 15:00", "9:00-15:00") == 1.0
    assert cloze.score("range", "09:00 to 15:00", "10:00 to 15:00") == 0.5
    assert cloze.score("range", "09:00 to 15:00", "the afternoon") == 0.0
    assert cloze.score("time", "9:30 pm", "21:30") == 1.0 and cloze.score("time", "9:30 pm", "10:30 pm") == 0.0
    assert cloze.score("datetime", "2025-01-02 16:30", "2025-01-02 17:30:00") == 0.0


def test_a_partial_blank_is_scored_partial_its_document_listed_and_repair_reasks_only_failed_blanks(tmp_path,
                                                                                                    engine):
    root = write_release(tmp_path / "rel", [task("t1", EVIDENCE, DOCS)])
    first = {"match": [{"when": {"contains": "[BLANK_1]"},
                        "reply": answers(BLANK_1="Harbor Station", BLANK_2="1200", BLANK_3="3", BLANK_4="")}]}
    eng, client = engine(first, root)
    record = cloze.audit(root, eng)
    by = {b["blank"]: b for b in record["blanks"]}
    assert by["BLANK_1"]["grade"] == "partial" and by["BLANK_1"]["score"] == pytest.approx(0.8)
    assert by["BLANK_4"]["grade"] == "wrong" and by["BLANK_2"]["grade"] == "correct"
    assert record["table"] == {"blanks": 4, "tasks": 1, "correct": 2, "partial": 1, "wrong": 1, "mean_score": 0.7}
    assert cloze.documents_to_repair(record["blanks"]) == [
        {"task": "t1", "document_id": "s1", "blanks": ["BLANK_1"]},
        {"task": "t1", "document_id": "s2", "blanks": ["BLANK_4"]}]
    assert client.totals["requests"] == 1
    # a person repairs s1 and s2; the re-run masks only BLANK_1 and BLANK_4 (a prompt masking BLANK_2 gets nonsense)
    second = {"match": [{"when": {"contains": "[BLANK_2]"}, "reply": answers(BLANK_1="x", BLANK_2="x", BLANK_3="x",
                                                                               BLANK_4="x")},
                        {"when": {"contains": "[BLANK_4]"},
                         "reply": answers(BLANK_1="Harbor Pumping Station", BLANK_4="30")}]}
    eng2, _ = engine(second, root)
    again = cloze.audit(root, eng2, repair=True)
    assert again["round"] == 2 and again["asked"] == 2
    assert again["table"] == {"blanks": 4, "tasks": 1, "correct": 4, "partial": 0, "wrong": 0, "mean_score": 1.0}
    assert [r["table"]["mean_score"] for r in cloze.rounds(root)] == [0.7, 1.0]
    with pytest.raises(ValueError, match="nothing to re-run"):
        cloze.audit(root, eng2, repair=True)

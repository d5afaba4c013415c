"""Distractor distinguishability audit (Appendix D.1, Table 9): rule passes first, the LLM only on what they leave."""

from __future__ import annotations

import json
from datetime import datetime

from tsagent_plugins.tasks.drcik.quality import distractor_audit as da

from .conftest import doc, task, write_release

DOCS = [
    doc("s1", "Harbor Pumping Station water flow rose after the storm of 2025-01-02."),
    doc("d_window", "Harbor Pumping Station water flow fell during the drought of 2023-06-10.", "distractor",
        "temporal"),
    doc("d_cf", "Harbor Pumping Station water flow was 5.0 on 2025-01-01 and 9.0 on 2025-01-02.", "distractor",
        "timeseries"),
    doc("d_entity", "Aurora Station water flow will double in January 2025.", "distractor", "profile"),
    doc("d_noisy", "Harbor Pumping Station memo of January 2, 2025: the cafeteria reopens.", "distractor", "noisy"),
    doc("d_conf", "Harbor Pumping Station water flow and energy use, January 2025 review.", "distractor",
        "confounder"),
    doc("d_hypo", "A hypothetical Harbor Pumping Station water flow surge in January 2025.", "distractor",
        "confounder"),
]


def reply(marker, answer, cue=""):
    return {"when": {"contains": marker}, "reply": {"text": json.dumps({"rejectable": answer, "cue": cue})}}


def test_rules_reject_without_a_model_call_and_the_rest_reaches_the_llm(tmp_path, engine):
    root = write_release(tmp_path / "rel", [task("t1", {"E1": "storm"}, DOCS)])
    script = {"match": [reply("5.0 on 2025-01-01", "yes", "5.0 contradicts the history value 1.0"),
                        reply("energy use", "unsure")]}
    eng, client = engine(script, root)
    records = {r["document_id"]: r for r in da.audit(root, eng)}
    assert set(records) == {"d_window", "d_cf", "d_entity", "d_noisy", "d_conf", "d_hypo"}  # supporting skipped
    assert (records["d_window"]["by"], records["d_window"]["rule"]) == ("rule", "out_of_window")
    assert records["d_entity"]["rule"] == "entity_mismatch"
    assert records["d_noisy"]["rule"] == "variable_absent"
    assert (records["d_hypo"]["rule"], records["d_hypo"]["cue"]) == ("disqualifier", "hypothetical")
    # the counterfactual-history distractor names the entity, the variable and in-window dates: only the LLM rejects
    assert records["d_cf"] == {"task": "t1", "document_id": "d_cf", "subtype": "timeseries", "status": "rejectable",
                               "by": "llm", "rule": None, "cue": "5.0 contradicts the history value 1.0"}
    assert records["d_conf"]["status"] == "ambiguous"
    assert client.totals["requests"] == 2  # d_cf and d_conf only
    assert not (root / "generation" / da.STAGE / "t1__d_window").exists()
    rows = {r["subtype"]: r for r in da.table9(list(records.values()))}
    assert rows["total"] == {"subtype": "total", "distractors": 6, "rejectable_by_rule": 4, "rejectable_by_llm": 1,
                             "explicitly_rejectable": 5, "ambiguous": 1, "failing": 0, "defective": 0}
    assert rows["confounder"]["ambiguous"] == 1 and rows["confounder"]["rejectable_by_rule"] == 1


def test_an_llm_no_is_failing(tmp_path, engine):
    root = write_release(tmp_path / "rel", [task("t1", {"E1": "x"}, [DOCS[2]])])
    eng, _ = engine({"match": [reply("5.0 on", "no")]}, root)
    assert [r["status"] for r in da.audit(root, eng)] == ["failing"]


def test_dates_and_the_window():
    got = da.dates_in("On 2024-02-30 nothing; March 3, 2024 and Dec 2023 and 2025-01-01.")
    assert got[0] == (datetime(2025, 1, 1), datetime(2025, 1, 1, 23, 59))
    assert got[1][0] == datetime(2024, 3, 3)
    assert got[2] == (datetime(2023, 12, 1), datetime(2024, 1, 1))
    assert len(got) == 3  # the impossible 2024-02-30 is not a date
    raw = task("t", {}, [])
    inside = doc("x", "Harbor Pumping Station water flow, December 2024 to January 2025.", "distractor", "temporal")
    assert da.rule_pass(raw, inside) is None  # one date overlaps the window: no out-of-window cue


def test_an_entity_less_distractor_of_an_entity_dependent_type_is_defective_not_rejectable(tmp_path, engine):
    """Irrelevant, off-variable and off-window distractors are about the task's entity: one naming none is
    defective (issue 37), whatever date it gives; an off-entity one naming another entity is not."""
    docs = [doc("w", "Water flow fell during the drought of 2023-06-10.", "distractor", "temporal"),
            doc("n", "The cafeteria reopens on Monday.", "distractor", "noisy"),
            doc("c", "Energy use rose in January 2025.", "distractor", "confounder"),
            doc("p", "Aurora Station water flow will double in January 2025.", "distractor", "profile")]
    flagged = task("t2", {"E1": "x"}, [doc("w2", "Harbor Pumping Station flow fell on 2023-06-10.", "distractor",
                                           "temporal")])
    flagged["generation"] = {"flagged": [{"stage": "step8_meta2doc", "unit": "t2__temporal", "reason": "judge"}]}
    root = write_release(tmp_path / "rel", [task("t1", {"E1": "x"}, docs), flagged])
    eng, client = engine({"match": []}, root)
    records = {r["document_id"]: r for r in da.audit(root, eng)}
    assert {k: (r["status"], r["rule"]) for k, r in records.items()} == {
        "w": ("defective", "entity_missing"), "n": ("defective", "entity_missing"),
        "c": ("defective", "entity_missing"), "p": ("rejectable", "entity_mismatch"),
        "w2": ("defective", "flagged_for_repair")}
    total = da.table9(list(records.values()))[-1]
    assert (total["explicitly_rejectable"], total["defective"], total["rejectable_by_rule"]) == (1, 4, 1)
    assert client.totals["requests"] == 0

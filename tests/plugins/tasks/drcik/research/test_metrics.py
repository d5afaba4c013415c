"""DR metrics (Appendix H.1) on hand-made evidence files: each formula checked with values."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik.research import metrics as m
from tsagent_plugins.tasks.drcik.research.inputs import output_from_resolved
from tsagent_plugins.tasks.drcik.research.outputs import read_evidence, resolve

SUBS = ("noisy", "confounder", "profile", "temporal", "timeseries")
DOCS = {
    **{f"a{i}": m.DocInfo("A", "supporting") for i in range(1, 5)},
    **{f"a_{s}": m.DocInfo("A", "distractor", s) for s in SUBS},
    "b1": m.DocInfo("B", "supporting"), "b2": m.DocInfo("B", "supporting"),
    "b_timeseries": m.DocInfo("B", "distractor", "timeseries"),
}
IDS = {f"doc_{rid}": rid for rid in DOCS}          # visible id -> release id, as a research key holds
A = m.TaskLabels("A", (("E1", "background"), ("E2", "sales rose 20%"), ("E3", "a bug on 2025-10-12"),
                       ("E4", "sales return to normal")), frozenset({"a1", "a2", "a3", "a4"}), 2, "synthetic")
B = m.TaskLabels("B", (("E1", "background"), ("E2", "firmware update")), frozenset({"b1", "b2"}), 4, "expert")


def evidence_file(tmp_path, name, items):
    path = tmp_path / name
    path.write_text(json.dumps(items))
    parsed, reasons = read_evidence(path)
    assert reasons == []
    return parsed


@pytest.fixture
def outputs(tmp_path):
    cites_a = [["doc_a1", "doc_a_noisy"], ["doc_a2", "doc_a_confounder"], ["doc_a_profile"], ["doc_a_temporal"],
               ["doc_a_timeseries", "doc_b1"], ["doc_ghost"], [], [], ["doc_a3"], ["doc_a4"]]
    items_a = [{"claim": f"claim {i}", "cited_document_ids": c} for i, c in enumerate(cites_a)]
    res_a = resolve(evidence_file(tmp_path, "a.json", items_a), IDS, {k: vars(v) for k, v in DOCS.items()}, "A")
    items_b = [{"claim": "the firmware was updated", "cited_document_ids": []}]
    res_b = resolve(evidence_file(tmp_path, "b.json", items_b), IDS)
    return output_from_resolved("X", "A", res_a), output_from_resolved("X", "B", res_b)


def test_e1_excluded_and_k_t():
    assert [i for i, _ in m.scored_evidence(A)] == ["E2", "E3", "E4"]
    assert m.k_t(A) == 3 + 5 and m.k_t(B) == 1 + 5
    no_e1 = m.TaskLabels("C", (("G0", "first"), ("G1", "second")), frozenset())
    assert m.scored_evidence(no_e1) == [("G1", "second")]       # the first item is the background one


def test_k_t_cut_keeps_the_agents_order(outputs):
    out_a, _ = outputs
    judged = m.judged_claims(out_a, A)
    assert judged == [f"claim {i}" for i in range(8)]          # claims 8 and 9 (citing a3, a4) are not judged
    # but their citations still count in Q_t (cited anywhere in the output)
    assert {"a3", "a4"} <= set(m.cited_documents(out_a))


def test_task_metrics_with_every_subtype_a_cross_task_document_and_an_unresolved_id(outputs):
    out_a, _ = outputs
    assert out_a.hallucinated == 1                               # doc_ghost
    s = m.score_task(out_a, A, DOCS, [True, False, True])
    assert s.evidence_recall == pytest.approx(2 / 3)
    # Q_t = a1..a4, five in-task distractors, b1 (another task's supporting doc): 10 documents
    assert s.cited == 10
    assert s.supporting_recall == pytest.approx(4 / 4)
    # Table 3's reading: 6 of the 10 cited documents are not supporting
    assert s.distractor_avoidance == s.cited_not_distractor == pytest.approx(1 - 6 / 10)
    # the other reading: all 5 of A's distractors are cited, none left uncited
    assert s.n_distractors == 5 and s.distractors_uncited == 0.0
    assert s.in_task_distractors == {sub: 1 for sub in SUBS}
    assert s.cross_task == 1
    assert (s.hallucinated, s.judge_malformed) == (1, 0)


def test_task_without_citations_avoids_every_distractor_but_has_no_cited_share(outputs):
    _, out_b = outputs
    s = m.score_task(out_b, B, DOCS, [False])
    assert s.cited == 0 and s.distractor_avoidance is None and s.cited_not_distractor is None
    assert s.n_distractors == 1 and s.distractors_uncited == 1.0
    assert s.supporting_recall == 0.0 and s.evidence_recall == 0.0


def test_pooled_versus_per_task_recall_and_aggregates(outputs):
    out_a, out_b = outputs
    scores = [m.score_task(out_a, A, DOCS, [True, False, True]), m.score_task(out_b, B, DOCS, [None])]
    agg = m.aggregate(scores)["X"]
    assert agg.evidence_recall_pooled == pytest.approx(2 / 4)          # (2 + 0) / (3 + 1)
    assert agg.evidence_recall_mean == pytest.approx((2 / 3 + 0) / 2)
    assert agg.supporting_recall == pytest.approx((1.0 + 0.0) / 2)
    # cited share (Table 3): A only; uncited share: A 0.0, B 1.0 (citing nothing stays in the mean)
    assert agg.distractor_avoidance == pytest.approx(0.4) and agg.avoidance_tasks == 1
    assert agg.distractors_uncited == pytest.approx(0.5) and agg.uncited_tasks == 2
    assert agg.hallucinated == 1 and agg.judge_malformed == 1 and agg.cross_task == 1
    assert m.recall_by(scores, "reasoning_hops") == {("X", 2): pytest.approx(2 / 3), ("X", 4): 0.0}
    assert m.recall_by(scores, "origin") == {("X", "synthetic"): pytest.approx(2 / 3), ("X", "expert"): 0.0}


def test_subtype_citation_share_counts_own_task_citations_only(outputs):
    out_a, out_b = outputs
    share = m.subtype_citation_share([out_a, out_b], DOCS, ["A", "B"])
    # the universe has two counterfactual-history distractors (A's and B's); only A's is cited in A
    assert share == {"confounder": 1.0, "noisy": 1.0, "profile": 1.0, "temporal": 1.0, "timeseries": 0.5}
    # A's distractor cited in B's episode is cross-task there, not a citation of its subtype
    cross = m.ResearchOutput("Y", "B", (m.Claim("x", ("a_noisy",)),))
    assert m.subtype_citation_share([cross], DOCS, ["A", "B"])["noisy"] == 0.0


def test_verdict_count_must_match_e_t(outputs):
    with pytest.raises(ValueError, match="A: 2 judge verdicts for 3 evidence items"):
        m.score_task(outputs[0], A, DOCS, [True, False])


def test_both_distractor_avoidance_readings_on_a_hand_computed_case():
    """Task A has 5 distractors (D_t) and 4 supporting documents.  Episode 1 cites a1, a_noisy, b1:
    uncited share 1 - 1/5 = 0.8; cited share 1 - |{a_noisy, b1}| / 3 = 1/3.  Episode 2 (task B) cites
    nothing: uncited share 1 (kept), cited share undefined (left out)."""
    one = m.ResearchOutput("X", "A", (m.Claim("c", ("a1", "a_noisy")), m.Claim("d", ("b1",))))
    two = m.ResearchOutput("X", "B", (m.Claim("e"),))
    s1, s2 = m.score_task(one, A, DOCS, [False] * 3), m.score_task(two, B, DOCS, [False])
    assert (s1.distractors_uncited, s1.cited_not_distractor) == (pytest.approx(0.8), pytest.approx(1 / 3))
    assert (s2.distractors_uncited, s2.cited_not_distractor) == (1.0, None)
    agg = m.aggregate([s1, s2])["X"]
    assert agg.distractors_uncited == pytest.approx(0.9) and agg.uncited_tasks == 2
    assert agg.distractor_avoidance == pytest.approx(1 / 3) and agg.avoidance_tasks == 1


def test_k_t_counts_positions_of_the_agents_own_list_malformed_items_included(tmp_path):
    """B has |E_t| = 1, K_t = 6: positions 0-5.  Item 3 is malformed (dropped by the reader): the item at
    position 6 must not move up into the top K_t."""
    raw = [{"claim": f"c{i}", "cited_document_ids": []} for i in range(8)]
    raw[3] = {"claim": 42}
    path = tmp_path / "e.json"
    path.write_text(json.dumps(raw))
    items, reasons = read_evidence(path)
    assert len(items) == 7 and reasons == ["e.json[3].claim: missing or not a non-empty string, item dropped"]
    out = output_from_resolved("X", "B", resolve(items, IDS))
    assert m.judged_claims(out, B) == ["c0", "c1", "c2", "c4", "c5"]


def test_an_id_cited_only_in_the_report_is_in_q_t_and_a_fake_one_is_hallucinated(tmp_path):
    items = evidence_file(tmp_path, "r.json", [{"claim": "x", "cited_document_ids": ["doc_a1"]}])
    ids = {"doc_0123456789ab": "a2", "doc_aaaaaaaaaaaa": "a_noisy", "doc_a1": "a1"}
    report = "Sales rose (see doc_0123456789ab, doc_aaaaaaaaaaaa); doc_ffffffffffff says nothing; doc_0123456789ab."
    res = resolve(items, ids, {k: vars(v) for k, v in DOCS.items()}, "A", report=report)
    assert res.report_cited == ["a2", "a_noisy"] and res.report_dropped == ["doc_ffffffffffff"]
    out = output_from_resolved("X", "A", res)
    assert m.cited_documents(out) == ["a1", "a2", "a_noisy"]
    s = m.score_task(out, A, DOCS, [False] * 3)
    assert s.cited == 3 and s.supporting_recall == pytest.approx(2 / 4) and s.hallucinated == 1


def test_hallucinated_ids_count_distinct_ids_and_occurrences_apart(tmp_path):
    items = evidence_file(tmp_path, "h.json", [{"claim": "x", "cited_document_ids": ["doc_ghost", "doc_a1"]},
                                               {"claim": "y", "cited_document_ids": ["doc_ghost", "doc_fake"]},
                                               {"claim": "z", "cited_document_ids": [" doc_ghost "]}])
    res = resolve(items, IDS)
    assert (res.hallucinated, res.hallucinated_occurrences) == (2, 4)
    s = m.score_task(output_from_resolved("X", "A", res), A, DOCS, [False] * 3)
    assert (s.hallucinated, s.hallucinated_occurrences) == (2, 4)


def test_c_e_is_the_documents_of_the_matched_claim(outputs):
    out_a, _ = outputs
    assert m.matched_documents(out_a, A, 2) == ["a2", "a_confounder"]     # verdict index is 1-based
    assert m.matched_documents(out_a, A, None) == [] and m.matched_documents(out_a, A, 9) == []

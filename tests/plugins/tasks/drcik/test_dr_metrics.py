"""DR metrics (Appendix H.1) on hand-made evidence files: each formula checked with values."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik import dr_metrics as m
from tsagent_plugins.tasks.drcik.dr_inputs import output_from_resolved
from tsagent_plugins.tasks.drcik.research_outputs import read_evidence, resolve

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
    assert s.distractor_avoidance == pytest.approx(1 - 6 / 10)
    assert s.in_task_distractors == {sub: 1 for sub in SUBS}
    assert s.cross_task == 1
    assert (s.hallucinated, s.judge_malformed) == (1, 0)


def test_task_without_citations_has_no_avoidance(outputs):
    _, out_b = outputs
    s = m.score_task(out_b, B, DOCS, [False])
    assert s.cited == 0 and s.distractor_avoidance is None
    assert s.supporting_recall == 0.0 and s.evidence_recall == 0.0


def test_pooled_versus_per_task_recall_and_aggregates(outputs):
    out_a, out_b = outputs
    scores = [m.score_task(out_a, A, DOCS, [True, False, True]), m.score_task(out_b, B, DOCS, [None])]
    agg = m.aggregate(scores)["X"]
    assert agg.evidence_recall_pooled == pytest.approx(2 / 4)          # (2 + 0) / (3 + 1)
    assert agg.evidence_recall_mean == pytest.approx((2 / 3 + 0) / 2)
    assert agg.supporting_recall == pytest.approx((1.0 + 0.0) / 2)
    assert agg.distractor_avoidance == pytest.approx(0.4) and agg.avoidance_tasks == 1
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

"""Context conditions as data (paper Section 5.4 / Appendix F)."""

from __future__ import annotations

import json

import pytest

from harness.config import ConfigError
from tsagent_plugins.tasks.drcik.dataset import contexts
from tsagent_plugins.tasks.drcik.dataset.contexts import (CONDITIONS, UNAVAILABLE, VERIFIED_EMPTY, EvidenceClaim, context_used,
                                          load_dr_evidence, parse_dr_evidence, verified)
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks


@pytest.fixture(scope="module")
def task():
    return {t.benchmark_id: t for t in load_tasks()}["task_163"]


def test_registry_names():
    assert list(CONDITIONS) == ["no-context", "background", "supporting-evidence", "retrospective-only",
                                "prospective-only", "original-context", "rewritten-context", "supporting-documents",
                                "dr-evidence", "dr-report", "verified-dr"]
    assert set(UNAVAILABLE) == {"original-context", "rewritten-context"}
    assert not CONDITIONS["background"].reproduces_paper
    assert all(c.reproduces_paper for n, c in CONDITIONS.items() if n != "background")
    with pytest.raises(ValueError, match="unknown context condition 'oracle'"):
        contexts.get("oracle")


def test_no_context_and_background(task):
    assert contexts.get("no-context").text_for(task).text is None
    bg = contexts.get("background").text_for(task)
    assert bg.text == task.target_description and bg.text.startswith("The Global Horizontal Irradiance")


def test_supporting_evidence(task):
    out = contexts.get("supporting-evidence").text_for(task)
    assert out.items == 3
    lines = out.text.splitlines()
    assert sum(line.startswith("- ") for line in lines) == 3     # one bullet per item
    assert all(line.startswith(("- ", "  ")) for line in lines)  # multi-line items stay inside
    assert out.text.startswith(f"- {task.evidence[0].text.splitlines()[0]}")


ROLES_42 = ["retrospective", "retrospective", "retrospective", "prospective", "prospective"]


def role_task(roles=ROLES_42, benchmark_id="task_42"):
    """A sample task with ``annotations.gt_evidence[i].role`` set (Appendix K.2), read by the loader."""
    from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, parse_task

    raw = json.loads((SAMPLE_DIR / "tasks" / f"{benchmark_id}.json").read_text())
    for item, role in zip(raw["annotations"]["gt_evidence"], roles):
        if role is not None:
            item["role"] = role
    return parse_task(raw, "roles.json", SAMPLE_DIR)


def test_retrospective_and_prospective_only():
    """task_42 with E1-E3 retrospective (history, the bug) and E4-E5 prospective (the sales-off event): each
    condition gives exactly its role's items, in order; a role with no item gives no context (empty)."""
    task = role_task()
    assert [e.role for e in task.evidence] == ROLES_42 and task.marks_roles
    retro = contexts.get("retrospective-only").text_for(task)
    pro = contexts.get("prospective-only").text_for(task)
    assert (retro.items, pro.items, retro.status, pro.status) == (3, 2, "ok", "ok")
    assert retro.text == "\n".join(f"- {e.text}" for e in task.evidence[:3])
    assert pro.text == "\n".join(f"- {e.text}" for e in task.evidence[3:])
    none = contexts.get("prospective-only").text_for(role_task(["retrospective"] * 5))
    assert (none.text, none.status, none.items) == (None, "empty", 0)


def test_role_conditions_refuse_tasks_that_do_not_mark_roles(task):
    with pytest.raises(ValueError, match=r"task task_163: annotations.gt_evidence\[0\].role is not given"):
        contexts.get("retrospective-only").text_for(task)
    with pytest.raises(ValueError, match=r"gt_evidence\[2\].role is not given"):
        contexts.get("prospective-only").text_for(role_task(["retrospective", "prospective", None, None, None]))
    with pytest.raises(ConfigError, match=r"roles.json.*annotations.gt_evidence\[1\].role: expected one of "
                                          r"retrospective, prospective"):
        role_task(["retrospective", "future"])


def test_supporting_documents_only_supporting(task):
    out = contexts.get("supporting-documents").text_for(task)
    assert out.items == 12
    for d in task.documents:
        assert (d.content.strip() in out.text) == (d.role == "supporting")
    for word in ("supporting", "distractor"):
        assert f"role: {word}" not in out.text


def _claims(task):
    sup, dis = task.supporting_ids, task.distractor_ids
    return [
        EvidenceClaim("A: only supporting", (sup[0], sup[1])),
        EvidenceClaim("B: cites a distractor", (sup[0], dis[0])),
        EvidenceClaim("C: cites nothing", ()),
        EvidenceClaim("D: another supporting", (sup[2],)),
        EvidenceClaim("E: another task's document", ("doc_1548",)),
    ]


def test_dr_evidence_and_verified(task):
    claims = _claims(task)
    raw = contexts.get("dr-evidence").text_for(task, claims)
    assert raw.items == 5 and "B: cites a distractor" in raw.text
    assert [c.claim for c in verified(task, claims)] == ["A: only supporting", "D: another supporting"]
    ver = contexts.get("verified-dr").text_for(task, claims)
    assert ver.items == 2 and ver.text == "- A: only supporting\n- D: another supporting"


def test_verified_empty(task):
    out = contexts.get("verified-dr").text_for(task, _claims(task)[1:3])
    assert out.text is None and out.status == VERIFIED_EMPTY


def test_verified_drops_unresolved_ids_first(task):
    sup = task.supporting_ids
    claims = [EvidenceClaim("F: supporting + unresolved", (sup[0], "doc_ghost")),
              EvidenceClaim("G: only unresolved", ("doc_ghost",))]
    pool = frozenset(d.document_id for d in task.documents)
    out = contexts.DrOutput(tuple(claims), known_ids=pool)
    assert [c.claim for c in verified(task, out)] == ["F: supporting + unresolved"]
    # without the pool an unknown id is just not a supporting document
    assert verified(task, claims) == []


def test_dr_report_and_dr_output(task):
    out = contexts.DrOutput(tuple(_claims(task)), report="# Report\n\nSales rose.\n", agent="retrieval", run="r1")
    rep = contexts.get("dr-report").text_for(task, out)
    assert (rep.text, rep.items, rep.status) == ("# Report\n\nSales rose.", 1, "ok")
    assert contexts.get("dr-evidence").text_for(task, out).items == 5
    assert contexts.get("dr-report").text_for(task, _claims(task)).status == "empty"   # claims only: no report


def test_dr_condition_needs_dr(task):
    with pytest.raises(ValueError, match="needs a DR agent's evidence"):
        contexts.get("verified-dr").text_for(task)


def test_statistical_forecasters_do_not_use_context():
    assert not context_used(CONDITIONS["supporting-evidence"], uses_context=False)
    assert context_used(CONDITIONS["supporting-evidence"], uses_context=True)
    assert not context_used(CONDITIONS["no-context"], uses_context=True)


def test_parse_dr_evidence(tmp_path):
    good = {"evidence": [{"claim": " Sales rise. ", "cited_document_ids": ["doc_1"]}, {"claim": "x"}]}
    (tmp_path / "evidence.json").write_text(json.dumps(good))
    assert load_dr_evidence(tmp_path / "evidence.json") == [EvidenceClaim("Sales rise.", ("doc_1",)),
                                                           EvidenceClaim("x", ())]
    assert parse_dr_evidence(good["evidence"]) == parse_dr_evidence(good)
    for bad, field in (([{"claim": ""}], "evidence[0].claim"),
                       ([{"claim": "a", "cited_document_ids": "doc_1"}], "evidence[0].cited_document_ids"),
                       ({"items": []}, "<root>"), (["text"], "evidence[0]")):
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        with pytest.raises(ConfigError) as err:
            load_dr_evidence(tmp_path / "bad.json")
        assert "bad.json" in str(err.value) and field in str(err.value)

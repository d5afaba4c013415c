"""Appendix L.3 difficulty labels: per step from the four prompts, the task level is the hardest step's, stored in
annotations.difficulty and read back by the loader."""

from __future__ import annotations

import json

import pytest

from tsagent_plugins.tasks.drcik.dataset.difficulty import LEVELS, check_difficulty, task_level
from tsagent_plugins.tasks.drcik.dataset.loader import load_task_file
from tsagent_plugins.tasks.drcik.quality import difficulty_labels

from .conftest import doc, task, write_release

PHRASES = {"certainty": "by its certainty", "domain_knowledge": "as General or Specialist",
           "explicitness": "by its explicitness", "temporal_complexity": "by its temporal complexity"}
ANSWERS = {"certainty": ["Certain", "Likely"], "domain_knowledge": ["General", "General"],
           "explicitness": ["Implicit", "Explicit"], "temporal_complexity": ["Predictable", "Straightforward"]}


def rule(dim, levels):
    steps = [{"step_id": f"E{i + 1}", "level": lv} for i, lv in enumerate(levels)]
    return {"when": {"contains": PHRASES[dim]}, "reply": {"text": json.dumps({"steps": steps})}}


def release(tmp_path):
    return write_release(tmp_path / "rel", [task("t1", {"E1": "A storm hit.", "E2": "Flow will likely rise."},
                                                 [doc("d1", "A storm hit the station.")])])


def test_task_level_is_the_hardest_step():
    assert task_level("certainty", ["certain", "likely", "certain"]) == "likely"
    assert task_level("explicitness", ["implicit", "explicit"]) == "implicit"
    assert task_level("domain_knowledge", ["general"]) == "general"
    with pytest.raises(ValueError, match="unknown level 'hard'"):
        task_level("certainty", ["hard"])
    assert LEVELS["temporal_complexity"] == ("straightforward", "predictable", "variable")


def test_labels_are_stored_and_read_back_by_the_loader(tmp_path, engine):
    root = release(tmp_path)
    eng, client = engine({"match": [rule(d, lv) for d, lv in ANSWERS.items()]}, root)
    summary = difficulty_labels.label(root, eng)
    want = {"certainty": "likely", "domain_knowledge": "general", "explicitness": "implicit",
            "temporal_complexity": "predictable"}
    assert summary == {"labelled": {"t1": want}, "unlabelled": {}}
    loaded = load_task_file(root / "tasks" / "t1.json")
    assert loaded.difficulty == want
    assert loaded.annotations["difficulty_steps"]["certainty"] == {"E1": "certain", "E2": "likely"}
    assert client.totals["requests"] == 4
    # resumable: a second run asks nothing
    eng2, client2 = engine({"match": []}, root)
    assert difficulty_labels.label(root, eng2)["labelled"]["t1"] == want
    assert client2.totals["requests"] == 0


def test_an_answer_missing_a_step_is_asked_again_then_the_dimension_is_left_unlabelled(tmp_path, engine):
    root = release(tmp_path)
    rules = [rule(d, lv) for d, lv in ANSWERS.items() if d != "certainty"] + [rule("certainty", ["Certain"])]
    eng, client = engine({"match": rules}, root, rounds=2)
    summary = difficulty_labels.label(root, eng)
    assert summary["unlabelled"] == {"t1": ["certainty"]}
    assert "certainty" not in load_task_file(root / "tasks" / "t1.json").difficulty
    lines = (root / "generation" / "qc_difficulty" / "t1__certainty" / "attempts.jsonl").read_text().splitlines()
    assert [json.loads(x)["status"] for x in lines] == ["check_failed", "check_failed"]


def test_the_loader_gives_only_l3_labels(tmp_path):
    root = release(tmp_path)
    raw = json.loads((root / "tasks" / "t1.json").read_text())
    raw["annotations"]["difficulty"] = {"certainty": "likely", "explicitness": "hard", "temporal": "low"}
    (root / "tasks" / "t1.json").write_text(json.dumps(raw))
    loaded = load_task_file(root / "tasks" / "t1.json")
    assert loaded.difficulty == {"certainty": "likely"}
    assert loaded.annotations["difficulty"]["temporal"] == "low"  # other content kept, unchanged
    assert check_difficulty(raw["annotations"]["difficulty"]) == [
        "annotations.difficulty.explicitness: unknown level 'hard' (known: explicit, implied, implicit)",
        "annotations.difficulty.temporal: unknown dimension (known: certainty, domain_knowledge, explicitness, "
        "temporal_complexity)"]

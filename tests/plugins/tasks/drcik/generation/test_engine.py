"""The generate-until-correct engine on the scripted model: judge rejections, flagged units, malformed answers,
attempts persisted, resume keeps accepted units."""

from __future__ import annotations

import json

import pytest
import yaml

from harness import AgentProfile, ModelClient
from tsagent_plugins.tasks.drcik.generation import engine as eng
from tsagent_plugins.tasks.drcik.generation import prompts
from tsagent_plugins.tasks.drcik.generation.schemas import EvidenceDecomposition

PROFILE = AgentProfile(name="gen", agent="dr-generate", provider="custom", model="scripted-model",
                       prices={"input": 1.0, "cached": 0.0, "output": 2.0})
EVENTS = {"extracted_events": [{"event_id": "E1", "event": "A pumping station.", "time_start": "null",
                                "time_end": "null"}], "causal_graph": [], "causal_context": []}
GENERATOR = {"when": {"contains": "Extract the independent event(s)"}, "reply": {"text": json.dumps(EVENTS)}}


def verdict(judge, hint=""):
    return {"text": json.dumps({"judge": judge, "confidence": "high", "summary": judge, "findings": [],
                                "correction_hint": hint})}


def stage():
    def generate(unit, attempt):
        return attempt.ask("evidence_decomposition", {"context": unit.data}, EvidenceDecomposition)

    def judge(unit, output):
        return [eng.JudgeCall("judge_evidence", {"task_id": unit.id, "context": unit.data,
                                                 "gt_evidence_extraction": json.dumps(output)})]

    return eng.Stage("evidence", 4, generate, judge=judge, judge_name="judge_evidence")


@pytest.fixture
def run(tmp_path):
    clients = []

    def go(script, units, rounds=5, jobs=1, out=None):
        path = tmp_path / f"script{len(clients)}.yaml"
        path.write_text(yaml.safe_dump(script))
        client = ModelClient.open(PROFILE, tmp_path / "proxy", "scripted", {"script": str(path)})
        clients.append(client)
        engine = eng.Engine(out or tmp_path / "out", {"generator": client, "judge_evidence": client},
                            rounds=rounds, jobs=jobs)
        return engine.run(stage(), units)

    yield go
    for c in clients:
        c.stop()


def attempts(tmp_path, unit, out="out"):
    lines = (tmp_path / out / "generation" / "evidence" / unit / "attempts.jsonl").read_text().splitlines()
    return [json.loads(x) for x in lines]


def test_a_judge_rejecting_twice_then_accepting_gives_three_recorded_attempts(tmp_path, run):
    script = {"match": [GENERATOR], "turns": [verdict("needs_correction", "split E1"),
                                              verdict("uncertain"), verdict("correct")]}
    result = run(script, [eng.Unit("t1", "A pumping station.")])["t1"]
    assert result.accepted and not result.flagged and result.attempts == 3
    assert result.output == EvidenceDecomposition.model_validate(EVENTS).model_dump(mode="json")
    got = attempts(tmp_path, "t1")
    assert [a["status"] for a in got] == ["rejected", "rejected", "accepted"]
    assert [a["judge"][0]["verdict"] for a in got] == ["needs_correction", "uncertain", "correct"]
    assert got[0]["reason"] == "judge_evidence: needs_correction: split E1"
    first = got[0]["generator"][0]
    assert first["prompt"] == "evidence_decomposition" and first["model"] == "scripted-model"
    assert first["prompt_sha256"] == prompts.load("evidence_decomposition").sha256
    assert json.loads(first["response"]) == EVENTS and first["tokens"] > 0
    assert first["cost_usd"] == pytest.approx(first["tokens"] * 1e-6, rel=1.0)  # priced at $1-2 per M tokens
    assert got[0]["cost_usd"] == pytest.approx(first["cost_usd"] + got[0]["judge"][0]["cost_usd"])
    saved = json.loads((tmp_path / "out" / "generation" / "evidence" / "t1" / "result.json").read_text())
    assert saved["accepted"] and saved["attempts"] == 3 and not saved["first_pass"]


def test_a_unit_failing_every_round_is_flagged_and_the_others_go_on(tmp_path, run):
    reject = {"when": {"contains": "Task ID:\n```\nbad\n```"}, "reply": verdict("needs_correction", "wrong")}
    accept = {"when": {"contains": "Task ID:\n```\ngood\n```"}, "reply": verdict("correct")}
    results = run({"match": [GENERATOR, reject, accept]}, [eng.Unit("bad", "x"), eng.Unit("good", "y")],
                  rounds=3, jobs=2)
    assert results["bad"].flagged and not results["bad"].accepted and results["bad"].attempts == 3
    assert results["bad"].output is not None and results["bad"].reason == "judge_evidence: needs_correction: wrong"
    assert results["good"].accepted and results["good"].attempts == 1
    assert len(attempts(tmp_path, "bad")) == 3


def test_malformed_answers_are_regenerated_and_counted(tmp_path, run):
    script = {"match": [{"when": {"contains": "Ground Truth Evidences (events)"}, "reply": verdict("correct")}],
              "turns": [{"text": "Sure! Here are the events: E1 ..."},
                        {"text": json.dumps({"extracted_events": [{"event_id": "X1", "event": "a"}],
                                             "causal_graph": [], "causal_context": []})},
                        {"text": "```json\n" + json.dumps(EVENTS) + "\n```"}]}
    result = run(script, [eng.Unit("t1", "ctx")])["t1"]
    assert result.accepted and result.attempts == 3
    got = attempts(tmp_path, "t1")
    assert [a["status"] for a in got] == ["malformed", "malformed", "accepted"]
    assert got[0]["reason"] == "not JSON" and got[0]["judge"] == []
    assert got[1]["reason"].startswith("EvidenceDecomposition: extracted_events.0.event_id: String should match")


def test_resume_keeps_accepted_units_and_redoes_unfinished_ones(tmp_path, run):
    judge = {"when": {"contains": "Ground Truth Evidences (events)"}, "reply": verdict("correct")}
    script = {"match": [GENERATOR, judge]}
    run(script, [eng.Unit("t1", "a")])
    before = (tmp_path / "out" / "generation" / "evidence" / "t1" / "result.json").read_bytes()
    (tmp_path / "out" / "generation" / "evidence" / "t2").mkdir()
    (tmp_path / "out" / "generation" / "evidence" / "t2" / "attempts.jsonl").write_text('{"partial": true}\n')
    results = run(script, [eng.Unit("t1", "a"), eng.Unit("t2", "b")])
    assert results["t1"].accepted and results["t2"].accepted
    assert (tmp_path / "out" / "generation" / "evidence" / "t1" / "result.json").read_bytes() == before
    assert len(attempts(tmp_path, "t1")) == 1 and len(attempts(tmp_path, "t2")) == 1  # partial attempt replaced
    # the kept unit made no request: its proxy logs are those of the first run only
    logs = sorted(p.parent.name for p in (tmp_path / "proxy").glob("*/proxy.jsonl.zst"))
    assert sum(name.startswith("evidence__t1__") for name in logs) == 2  # generator + judge, first run only


def test_a_json_null_from_the_generator_or_the_judge_is_a_failed_attempt_not_a_crash(tmp_path, run):
    """Issue 37: ``null`` from the generator crashed the stage's code checks, ``null`` from the judge crashed on
    ``verdict["judge"]``; each is a malformed answer: the unit is regenerated, then flagged."""
    null_generator = {"match": [{"when": {"contains": "Extract the independent event(s)"}, "reply": {"text": "null"}}]}
    result = run(null_generator, [eng.Unit("g", "ctx")], rounds=2)["g"]
    assert result.flagged and result.output is None and result.attempts == 2
    assert [a["status"] for a in attempts(tmp_path, "g")] == ["malformed", "malformed"]
    assert attempts(tmp_path, "g")[0]["reason"] == "EvidenceDecomposition: the answer is JSON null"
    null_judge = {"match": [GENERATOR, {"when": {"contains": "Ground Truth Evidences (events)"},
                                        "reply": {"text": "null"}}]}
    result = run(null_judge, [eng.Unit("j", "ctx")], rounds=2)["j"]
    assert result.flagged and not result.accepted and result.output is not None
    got = attempts(tmp_path, "j")
    assert [a["status"] for a in got] == ["rejected", "rejected"] and got[0]["judge"][0]["verdict"] == "malformed"
    assert "malformed verdict (JudgeVerdict: the answer is JSON null)" in got[0]["reason"]
    assert eng.parse_json("null", None) is None  # without a schema a null is a value

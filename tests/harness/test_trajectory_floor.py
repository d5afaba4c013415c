"""An LLM agent's episode keeps at least the prompt and what the proxy saw, however early the agent stopped."""

from __future__ import annotations

import json

from harness.proxy.accounting import EpisodeUsage
from harness.trajectory import validate_trajectory
from harness.trajectory_floor import iso, with_prompt

PROMPT = "Which parameter changed?\nAnswer in results.json."


def _log(tmp_path, records):
    path = tmp_path / "proxy.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records) + "{not json\n")
    return path


def test_no_trajectory_becomes_the_prompt_and_the_proxied_requests(tmp_path):
    log = _log(tmp_path, [
        {"type": "request", "seq": 1, "ts": 100.0, "method": "HEAD", "path": "/"},
        {"type": "response", "seq": 1, "ts": 100.1, "status": 200},
        {"type": "request", "seq": 2, "ts": 101.0, "method": "POST", "path": "/v1/messages",
         "body": {"model": "claude-opus-4-6", "messages": []}},
        {"type": "response", "seq": 2, "ts": 102.0, "status": 200,
         "usage": {"prompt_tokens": 900, "cached_tokens": 100, "completion_tokens": 7, "reasoning_tokens": 2}},
        {"type": "request", "seq": 3, "ts": 103.0, "method": "POST", "path": "/v1/messages", "body": {}},
    ])
    usage = EpisodeUsage("e", prompt_tokens=900, cached_tokens=100, completion_tokens=7, reasoning_tokens=2,
                         cost_usd=0.01, n_requests=2)
    doc = with_prompt(None, PROMPT, 99.5, "agent killed after 1 s wall-clock limit", agent="claude-code",
                      version="2.1", model="claude-opus-4.6", proxy_log=log, usage=usage)
    validate_trajectory(doc)
    steps = doc["steps"]
    assert [(s["step_id"], s["source"]) for s in steps] == [(1, "user"), (2, "agent"), (3, "agent")]
    assert steps[0]["message"] == PROMPT and steps[0]["timestamp"] == iso(99.5) == "1970-01-01T00:01:39.500000+00:00"
    assert steps[1]["metrics"]["prompt_tokens"] == 900 and steps[1]["metrics"]["completion_tokens"] == 7
    assert steps[1]["model_name"] == "claude-opus-4-6" and steps[1]["extra"] == {"proxy_seq": 2, "status": 200}
    assert "metrics" not in steps[2] and steps[2]["extra"] == {"proxy_seq": 3}  # cut off: no response logged
    final = doc["final_metrics"]
    totals = (final["total_prompt_tokens"], final["total_completion_tokens"], final["total_cached_tokens"])
    assert totals == (900, 7, 100)
    assert final["total_cost_usd"] == 0.01 and final["total_steps"] == 3
    assert doc["agent"] == {"name": "claude-code", "version": "2.1", "model_name": "claude-opus-4.6"}
    assert "agent killed after 1 s wall-clock limit" in doc["notes"]


def test_a_kill_before_any_model_call_keeps_the_prompt(tmp_path):
    doc = with_prompt(None, PROMPT, 50.0, "agent killed after 0 s wall-clock limit", agent="gemini-cli",
                      version="0.1", proxy_log=tmp_path / "absent.jsonl", usage=None)
    assert [s["source"] for s in doc["steps"]] == ["user"]
    assert doc["final_metrics"]["total_prompt_tokens"] == 0 and doc["final_metrics"]["total_steps"] == 1
    assert "model_name" not in doc["agent"]


def test_totals_without_usage_are_the_logged_responses(tmp_path):
    log = _log(tmp_path, [
        {"type": "request", "seq": 1, "method": "POST"},
        {"type": "response", "seq": 1, "status": 200, "usage": {"prompt_tokens": 10, "completion_tokens": 3}},
        {"type": "request", "seq": 2, "method": "POST"},
        {"type": "response", "seq": 2, "status": 200, "usage": {"prompt_tokens": 20, "completion_tokens": 4,
                                                                "reasoning_tokens": 1}},
    ])
    final = with_prompt(None, PROMPT, 0.0, "x", agent="a", version="1", proxy_log=log)["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (30, 7)
    assert final["extra"]["total_reasoning_tokens"] == 1 and final["extra"]["proxy_calls"] == 2


def test_a_trajectory_without_the_prompt_gets_it_first():
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"}, "notes": "n",
           "steps": [{"step_id": 1, "source": "agent", "message": "hi",
                      "tool_calls": [{"tool_call_id": "c1", "function_name": "bash", "arguments": {}}]},
                     {"step_id": 2, "source": "agent", "message": "bye"}]}
    out = with_prompt(doc, PROMPT, 10.0, "agent killed after 3 s wall-clock limit", agent="a", version="1")
    assert [(s["step_id"], s["source"], s["message"]) for s in out["steps"]] == [
        (1, "user", PROMPT), (2, "agent", "hi"), (3, "agent", "bye")]
    assert out["steps"][1]["tool_calls"][0]["tool_call_id"] == "c1"
    assert out["notes"].startswith("n\nthe harness put the task prompt first")


def test_a_trajectory_with_a_user_step_is_left_alone():
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
           "steps": [{"step_id": 1, "source": "system", "message": "sys"},
                     {"step_id": 2, "source": "user", "message": "the CLI's own rendering of the prompt"}]}
    assert with_prompt(doc, PROMPT, 0.0, "x", agent="a", version="1") is doc

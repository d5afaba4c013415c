"""Claude Code's native log -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/claude-code).

``direct/`` was captured by ``tests/e2e/test_claude_code.py`` running Claude
Code 2.1.96 against ``examples/scripts/claude-balldrop.yaml``; the expected
values below come from that script (texts, the shell command, token counts).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal import ClaudeCode
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "native_logs" / "claude-code"
SCRIPT = load_script(REPO / "examples" / "scripts" / "claude-balldrop.yaml")


def convert(folder: Path, proxy: bool = True) -> dict:
    stdout = (folder / "agent.stdout").read_text()
    traj = ClaudeCode().trajectory(folder / "home", stdout, folder / "proxy.jsonl" if proxy else None)
    validate_trajectory(traj)
    return traj


def test_steps_tool_call_and_output():
    traj = convert(FIXTURE / "direct")
    session = json.loads((FIXTURE / "direct" / "agent.stdout").read_text().splitlines()[0])["session_id"]
    assert traj["session_id"] == session
    assert traj["agent"] == {"name": "claude-code", "version": "2.1.96", "model_name": "claude-opus-4-6"}
    user, act, answer = traj["steps"]
    assert user["source"] == "user"
    assert user["message"] == (FIXTURE / "direct" / "prompt.txt").read_text()
    assert act["reasoning_content"] == SCRIPT.turns[0].reasoning
    assert act["message"] == SCRIPT.turns[0].text
    [call] = act["tool_calls"]
    assert call["function_name"] == "Bash" and call["arguments"]["command"] == SCRIPT.turns[0].tool_calls[0].shell
    [result] = act["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"] and result["extra"] == {"is_error": False}
    assert result["content"].startswith("wrote results.json with ")
    assert answer["message"] == SCRIPT.turns[1].text and "tool_calls" not in answer
    assert [s["step_id"] for s in traj["steps"]] == [1, 2, 3]
    assert traj["extra"]["native_logs"] == [str(p.relative_to(FIXTURE / "direct" / "home"))
                                            for p in sorted((FIXTURE / "direct" / "home").rglob("*.jsonl"))]


def test_tokens_follow_anthropic_counting_and_agree_with_the_proxy():
    traj = convert(FIXTURE / "direct")
    for step, turn in zip(traj["steps"][1:], SCRIPT.turns, strict=True):
        m = step["metrics"]
        # input_tokens in the log exclude the cache read: prompt = input + cache read (+ cache creation)
        assert (m["prompt_tokens"], m["cached_tokens"], m["completion_tokens"]) == \
            (turn.usage.prompt_tokens, turn.usage.cached_tokens, turn.usage.completion_tokens)
        assert m["extra"] == {"reasoning_tokens": 0, "source": "cli"}
        # cost at the profile's prices (TraceBench Table 21: 5 / 0.5 / 25 per 1M), equation (1)
        u = turn.usage
        assert m["cost_usd"] == pytest.approx(((u.prompt_tokens - u.cached_tokens) * 5 + u.cached_tokens * 0.5
                                               + u.completion_tokens * 25) / 1e6)
    final = traj["final_metrics"]
    assert final["total_prompt_tokens"] == sum(t.usage.prompt_tokens for t in SCRIPT.turns)
    assert final["total_completion_tokens"] == sum(t.usage.completion_tokens for t in SCRIPT.turns)
    assert final["total_cached_tokens"] == sum(t.usage.cached_tokens for t in SCRIPT.turns)
    assert final["total_steps"] == 3
    assert final["extra"]["token_source"] == "cli" and "disagreement" not in final["extra"]
    assert final["extra"]["cli_totals"] == final["extra"]["proxy_totals"]
    assert final["total_cost_usd"] == pytest.approx(sum(s["metrics"]["cost_usd"] for s in traj["steps"][1:]))


def test_without_the_proxy_log_the_cli_numbers_stand_alone():
    traj = convert(FIXTURE / "direct", proxy=False)
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == "cli" and "proxy_totals" not in final["extra"]
    assert final["total_prompt_tokens"] == sum(t.usage.prompt_tokens for t in SCRIPT.turns)
    # Claude Code prices the run itself (result event): kept as the cost
    result = [json.loads(line) for line in (FIXTURE / "direct" / "agent.stdout").read_text().splitlines()][-1]
    assert final["total_cost_usd"] == pytest.approx(result["total_cost_usd"])


def test_disagreeing_cli_totals_yield_to_the_proxy(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    lines = (folder / "agent.stdout").read_text().splitlines()
    result = json.loads(lines[-1])
    result["usage"]["input_tokens"] += 1000  # a CLI that miscounts
    (folder / "agent.stdout").write_text("\n".join(lines[:-1] + [json.dumps(result)]) + "\n")
    final = convert(folder)["final_metrics"]
    assert final["extra"]["token_source"] == "proxy"
    proxy = final["extra"]["proxy_totals"]["prompt_tokens"]
    assert final["extra"]["disagreement"]["prompt_tokens"] == {"cli": proxy + 1000, "proxy": proxy}
    assert final["total_prompt_tokens"] == proxy


def test_a_run_killed_at_the_limit_keeps_its_prompt_and_says_why():
    traj = convert(FIXTURE / "timeout")
    assert traj["steps"][0]["message"] == (FIXTURE / "timeout" / "prompt.txt").read_text()
    assert "no final 'result' event" in traj["notes"]
    # the model call in flight never reached the session log; the proxy counted what was streamed
    assert [s["source"] for s in traj["steps"]] == ["user"]
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == "proxy" and final["extra"]["cli_totals"] is None
    assert "0 model call(s) in it, 1 in the proxy log" in final["extra"]["disagreement"]["reason"]
    assert final["total_prompt_tokens"] == final["extra"]["proxy_totals"]["prompt_tokens"] > 0


def test_a_missing_session_log_falls_back_to_the_proxy_log(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    shutil.rmtree(folder / "home" / ".claude")
    traj = convert(folder)
    assert "native log not converted" in traj["notes"]
    assert traj["steps"][0]["source"] == "user"
    assert (FIXTURE / "direct" / "prompt.txt").read_text().strip() in traj["steps"][0]["message"]
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    assert [s["metrics"]["prompt_tokens"] for s in agent_steps] == [t.usage.prompt_tokens for t in SCRIPT.turns]
    assert all(s["metrics"]["extra"]["source"] == "proxy" for s in agent_steps)


def test_nothing_to_convert_gives_no_trajectory(tmp_path):
    assert ClaudeCode().trajectory(tmp_path, "", None) is None


def test_subagent_conversations_are_noted_not_inlined(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    [log] = (folder / "home").rglob("*.jsonl")
    entry = {"type": "assistant", "isSidechain": True, "timestamp": "2026-11-29T16:00:00Z",
             "message": {"id": "msg_side", "model": "claude-opus-4-6", "content": [{"type": "text", "text": "side"}]}}
    log.write_text(log.read_text() + json.dumps(entry) + "\n")
    sub = log.parent / log.stem / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-1.jsonl").write_text(json.dumps(entry) + "\n")
    traj = convert(folder)
    assert "1 sidechain entries, 1 subagent log(s)" in traj["notes"]
    assert all(s.get("message") != "side" for s in traj["steps"])
    assert ".claude/projects/-workspace/" + log.stem + "/subagents/agent-1.jsonl" in traj["extra"]["native_logs"]

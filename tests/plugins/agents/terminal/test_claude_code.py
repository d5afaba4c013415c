"""Claude Code's native log -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/claude-code).

``direct/`` was captured by ``tests/e2e/test_terminal_episodes.py`` running Claude
Code 2.1.96 against ``examples/scripts/claude-balldrop.yaml``; the expected
values below come from that script (texts, the shell command, token counts).
The checks common to the four CLIs are in ``../test_terminal_native_logs.py``; here: what is
specific to this one.
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


def test_native_logs_are_listed():
    traj = convert(FIXTURE / "direct")
    assert traj["extra"]["native_logs"] == [str(p.relative_to(FIXTURE / "direct" / "home"))
                                            for p in sorted((FIXTURE / "direct" / "home").rglob("*.jsonl"))]


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

"""Codex's rollout -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/codex).

``direct/`` was captured by ``tests/e2e/test_codex.py`` running Codex 0.124.0
against ``examples/scripts/codex-balldrop.yaml``; expected values come from
that script.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal import Codex
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "native_logs" / "codex"
SCRIPT = load_script(REPO / "examples" / "scripts" / "codex-balldrop.yaml")


def convert(folder: Path, proxy: bool = True) -> dict:
    traj = Codex().trajectory(folder / "home", (folder / "agent.stdout").read_text(),
                              folder / "proxy.jsonl" if proxy else None)
    validate_trajectory(traj)
    return traj


def test_steps_tool_call_and_output_come_from_the_rollout():
    folder = FIXTURE / "direct"
    stdout = (folder / "agent.stdout").read_text()
    # the --json stdout of this run has no item.completed for the command: the rollout is the source
    assert '"type":"command_execution","command"' in stdout and '"status":"completed","aggregated_output"' not in stdout
    traj = convert(folder)
    thread = json.loads(stdout.splitlines()[0])["thread_id"]
    assert traj["session_id"] == thread
    assert traj["agent"] == {"name": "codex", "version": "0.124.0", "model_name": "gpt-5.5"}
    assert traj["extra"]["reasoning_effort"] == "high" and traj["extra"]["model_provider"] == "harness"
    user, act, answer = traj["steps"]
    assert user["source"] == "user" and user["message"] == (folder / "prompt.txt").read_text()
    assert act["reasoning_content"] == SCRIPT.turns[0].reasoning
    assert act["message"] == SCRIPT.turns[0].text
    [call] = act["tool_calls"]
    assert call["function_name"] == "exec_command"
    assert call["arguments"] == {"cmd": SCRIPT.turns[0].tool_calls[0].shell}
    [result] = act["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"]
    assert "Process exited with code 0" in result["content"] and "wrote results.json with " in result["content"]
    assert answer["message"] == SCRIPT.turns[1].text


def test_tokens_are_the_growth_of_the_running_total():
    traj = convert(FIXTURE / "direct")
    for step, turn in zip(traj["steps"][1:], SCRIPT.turns, strict=True):
        m = step["metrics"]
        # Responses counting: input includes cached, output includes reasoning
        assert (m["prompt_tokens"], m["cached_tokens"], m["completion_tokens"], m["extra"]["reasoning_tokens"]) == \
            (turn.usage.prompt_tokens, turn.usage.cached_tokens, turn.usage.completion_tokens,
             turn.usage.reasoning_tokens or 0)
        u = turn.usage  # gpt-5.5 prices, TraceBench Table 21: 5 / 0.5 / 30 per 1M
        assert m["cost_usd"] == pytest.approx(((u.prompt_tokens - u.cached_tokens) * 5 + u.cached_tokens * 0.5
                                               + u.completion_tokens * 30) / 1e6)
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == "cli"
    assert final["extra"]["total_reasoning_tokens"] == sum(t.usage.reasoning_tokens or 0 for t in SCRIPT.turns)
    assert final["total_prompt_tokens"] == sum(t.usage.prompt_tokens for t in SCRIPT.turns)


def test_a_rollout_cut_before_its_last_token_count(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    [rollout] = (folder / "home").rglob("rollout-*.jsonl")
    lines = rollout.read_text().splitlines()
    last = max(i for i, line in enumerate(lines) if '"token_count"' in line)
    rollout.write_text("\n".join(lines[:last]) + "\n")
    traj = convert(folder)
    last_step = traj["steps"][-1]
    assert last_step["message"] == SCRIPT.turns[1].text
    # its counts were not logged by the CLI: taken from the proxy call it matches
    assert last_step["metrics"]["extra"]["source"] == "proxy"
    assert last_step["metrics"]["prompt_tokens"] == SCRIPT.turns[1].usage.prompt_tokens
    assert "taken from the proxy log" in traj["notes"]
    assert traj["final_metrics"]["extra"]["token_source"] == "proxy"

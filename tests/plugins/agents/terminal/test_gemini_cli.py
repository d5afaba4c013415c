"""Gemini CLI's session file -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/gemini-cli).

``direct/`` was captured by ``tests/e2e/test_gemini_cli.py`` running Gemini
CLI 0.35.3 against ``examples/scripts/gemini-balldrop.yaml``; expected values
come from that script.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal import GeminiCli
from tsagent_plugins.agents.terminal.gemini_cli import final_json
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "native_logs" / "gemini-cli"
SCRIPT = load_script(REPO / "examples" / "scripts" / "gemini-balldrop.yaml")


def convert(folder: Path, proxy: bool = True) -> dict:
    traj = GeminiCli().trajectory(folder / "home", (folder / "agent.stdout").read_text(),
                                  folder / "proxy.jsonl" if proxy else None)
    validate_trajectory(traj)
    return traj


def session() -> dict:
    [path] = (FIXTURE / "direct" / "home").rglob("session-*.json")
    return json.loads(path.read_text())


def test_steps_tool_call_and_output():
    folder = FIXTURE / "direct"
    traj = convert(folder)
    assert traj["session_id"] == final_json((folder / "agent.stdout").read_text())["session_id"]
    assert traj["agent"] == {"name": "gemini-cli", "version": "0.35.3", "model_name": "gemini-3.1-pro-preview"}
    user, act, answer = traj["steps"]
    assert user["message"] == (folder / "prompt.txt").read_text()
    assert act["message"] == SCRIPT.turns[0].text
    [call] = act["tool_calls"]
    assert call["function_name"] == "run_shell_command"
    assert call["arguments"]["command"] == SCRIPT.turns[0].tool_calls[0].shell
    [result] = act["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"] and result["extra"]["status"] == "success"
    assert result["content"].startswith("Output: wrote results.json with ")
    assert answer["message"] == SCRIPT.turns[1].text


def test_thoughts_come_from_the_stream_where_the_session_file_trims_them():
    traj = convert(FIXTURE / "direct")
    assert traj["steps"][1]["reasoning_content"] == SCRIPT.turns[0].reasoning
    assert "taken from the proxy log" in traj["notes"]
    # the session file alone: its fragments are stored trimmed, so spaces between them are lost
    fragments = [t["description"] for t in session()["messages"][1]["thoughts"]]
    assert len(fragments) > 1
    alone = convert(FIXTURE / "direct", proxy=False)
    assert alone["steps"][1]["reasoning_content"] == "".join(fragments) != SCRIPT.turns[0].reasoning


def test_tokens_add_thoughts_to_the_output():
    traj = convert(FIXTURE / "direct")
    tokens = session()["messages"][1]["tokens"]
    assert tokens["output"] + tokens["thoughts"] == SCRIPT.turns[0].usage.completion_tokens  # output excludes thoughts
    for step, turn in zip(traj["steps"][1:], SCRIPT.turns, strict=True):
        m = step["metrics"]
        assert (m["prompt_tokens"], m["cached_tokens"], m["completion_tokens"], m["extra"]["reasoning_tokens"]) == \
            (turn.usage.prompt_tokens, turn.usage.cached_tokens, turn.usage.completion_tokens,
             turn.usage.reasoning_tokens or 0)
        u = turn.usage  # gemini-3.1-pro prices, TraceBench Table 21: 2 / 0.2 / 12 per 1M
        assert m["cost_usd"] == pytest.approx(((u.prompt_tokens - u.cached_tokens) * 2 + u.cached_tokens * 0.2
                                               + u.completion_tokens * 12) / 1e6)
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == "cli"
    # the CLI's own totals (stdout stats) agree with the proxy
    assert final["extra"]["cli_totals"] == final["extra"]["proxy_totals"]


def test_failed_run_output_is_read_from_stderr():
    folder = FIXTURE / "error-400"
    assert final_json((folder / "agent.stdout").read_text()) is None
    data = final_json((folder / "agent.stderr").read_text())
    assert data["error"]["code"] == 400
    messages = GeminiCli().failure_messages("", (folder / "agent.stderr").read_text(), 1)
    assert messages[0] == (400, data["error"]["message"])

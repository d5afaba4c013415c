"""Gemini CLI's session file -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/gemini-cli).

``direct/`` was captured by ``tests/e2e/test_terminal_episodes.py`` running Gemini
CLI 0.35.3 against ``examples/scripts/gemini-balldrop.yaml``; expected values
come from that script.
The checks common to the four CLIs are in ``../test_terminal_native_logs.py``; here: what is
specific to this one.
"""

from __future__ import annotations

import json
from pathlib import Path


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
    tokens = session()["messages"][1]["tokens"]
    assert tokens["output"] + tokens["thoughts"] == SCRIPT.turns[0].usage.completion_tokens  # output excludes thoughts
    # the converted step counts (thoughts included) are checked in ../test_terminal_native_logs.py
    assert convert(FIXTURE / "direct")["steps"][1]["metrics"]["completion_tokens"] == SCRIPT.turns[0].usage.completion_tokens


def test_failed_run_output_is_read_from_stderr():
    folder = FIXTURE / "error-400"
    assert final_json((folder / "agent.stdout").read_text()) is None
    data = final_json((folder / "agent.stderr").read_text())
    assert data["error"]["code"] == 400
    messages = GeminiCli().failure_messages("", (folder / "agent.stderr").read_text(), 1)
    assert messages[0] == (400, data["error"]["message"])

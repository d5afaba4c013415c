"""OpenCode's JSON events -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/opencode).

``direct/`` was captured by ``tests/e2e/test_terminal_episodes.py`` running OpenCode
1.14.41 against ``examples/scripts/opencode-balldrop.yaml``; expected values
come from that script.  OpenCode's stdout events lack the user message: it is
filled from the session database, else from the proxy log, and the trajectory
says which.
The checks common to the four CLIs are in ``../test_terminal_native_logs.py``; here: what is
specific to this one.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal import OpenCode
from tsagent_plugins.agents.terminal.base import json_lines
from tsagent_plugins.agents.terminal.opencode import session_records, step_usage
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO, TESTS

FIXTURE = TESTS / "fixtures" / "native_logs" / "opencode"
SCRIPT = load_script(REPO / "examples" / "scripts" / "opencode-balldrop.yaml")


def convert(folder: Path, proxy: bool = True) -> dict:
    traj = OpenCode().trajectory(folder / "home", (folder / "agent.stdout").read_text(),
                                 folder / "proxy.jsonl" if proxy else None)
    validate_trajectory(traj)
    return traj


def test_user_message_missing_from_events_is_read_from_the_database():
    folder = FIXTURE / "direct"
    events = json_lines((folder / "agent.stdout").read_text())
    assert {e["type"] for e in events} <= {"step_start", "text", "reasoning", "tool_use", "step_finish"}
    assert not any("user" in json.dumps(e.get("part", {}).get("type")) for e in events)
    traj = convert(folder)
    user = traj["steps"][0]
    # sent on standard input: OpenCode stores it with a leading newline, as the model received it
    assert user["message"] == "\n" + (folder / "prompt.txt").read_text()
    assert user["extra"] == {"filled_from": "opencode.db"}
    assert "read from its session database" in traj["notes"]


def test_without_the_database_the_user_message_comes_from_the_proxy(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    for db in (folder / "home").rglob("opencode.db*"):
        db.unlink()
    traj = convert(folder)
    assert traj["steps"][0]["extra"] == {"filled_from": "proxy.jsonl"}
    assert traj["steps"][0]["message"].strip() == (folder / "prompt.txt").read_text().strip()
    assert "first conversation request in the proxy log" in traj["notes"]
    assert traj["agent"]["model_name"] == "minimax/minimax-m2.7"  # from the proxy too


def test_tokens_and_the_title_call_the_cli_does_not_count():
    traj = convert(FIXTURE / "direct")  # the per-step counts are checked in ../test_terminal_native_logs.py
    final = traj["final_metrics"]
    title = SCRIPT.match[0].reply.usage
    assert final["extra"]["token_source"] == "proxy"
    cli = sum(t.usage.prompt_tokens for t in SCRIPT.turns)
    assert final["extra"]["disagreement"]["prompt_tokens"] == {"cli": cli, "proxy": cli + title.prompt_tokens}
    assert "outside the conversation (1)" in final["extra"]["disagreement"]["reason"]
    assert final["total_prompt_tokens"] == cli + title.prompt_tokens
    # OpenCode priced the steps itself from the configured prices; the proxy's cost includes the title call
    assert final["extra"]["cli_cost_usd"] < final["total_cost_usd"]


def test_step_usage_normalisation():
    # OpenCode's input excludes cache reads and writes, its output excludes reasoning
    u = step_usage({"input": 4000, "output": 280, "reasoning": 120, "cache": {"read": 8000, "write": 10}})
    assert (u.prompt_tokens, u.cached_tokens, u.completion_tokens, u.reasoning_tokens) == (12010, 8000, 400, 120)
    # checked against the capture: the step_finish tokens give back the scripted counts
    finishes = [e["part"]["tokens"] for e in json_lines((FIXTURE / "direct" / "agent.stdout").read_text())
                if e["type"] == "step_finish"]
    assert [step_usage(t).prompt_tokens for t in finishes] == [t.usage.prompt_tokens for t in SCRIPT.turns]


def test_the_database_is_read_without_touching_the_episode_files():
    db = next((FIXTURE / "direct" / "home").rglob("opencode.db"))
    before = {p.name: p.read_bytes() for p in db.parent.glob("opencode.db*")}
    messages, parts = session_records(FIXTURE / "direct" / "home")
    assert [m["role"] for m in messages][:2] == ["user", "assistant"] and parts
    assert {p.name: p.read_bytes() for p in db.parent.glob("opencode.db*")} == before


def test_a_run_killed_at_the_limit_is_built_from_what_remains():
    folder = FIXTURE / "timeout"
    traj = convert(folder)
    assert traj["steps"][0]["message"].strip() == (folder / "prompt.txt").read_text().strip()
    # the step in flight had started (step_start) but never finished; it is paired with its proxy call,
    # whose stream was cut before the usage chunk, so no counts exist anywhere
    assert [s["source"] for s in traj["steps"]] == ["user", "agent"]
    assert "metrics" not in traj["steps"][1] and traj["steps"][1]["extra"]["proxy_seq"] > 0
    assert "no step_finish event" in traj["notes"]
    final = traj["final_metrics"]
    assert final["total_prompt_tokens"] == final["extra"]["proxy_totals"]["prompt_tokens"]
    assert final["extra"]["token_source"] == "proxy"


@pytest.mark.parametrize("case", ["error-400"])
def test_the_error_event_becomes_a_system_step(case, tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(FIXTURE / "direct", folder)
    error = (FIXTURE / case / "agent.stdout").read_text()
    (folder / "agent.stdout").write_text((folder / "agent.stdout").read_text() + error)
    traj = convert(folder)
    last = traj["steps"][-1]
    assert last["source"] == "system" and last["extra"]["status"] == 400
    assert last["message"] == json.loads(error.splitlines()[0])["error"]["data"]["message"]

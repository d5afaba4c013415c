"""Codex's rollout -> ATIF, on logs captured from the real CLI (tests/fixtures/native_logs/codex).

``direct/`` was captured by ``tests/e2e/test_terminal_episodes.py`` running Codex 0.124.0
against ``examples/scripts/codex-balldrop.yaml``; expected values come from
that script.
The checks common to the four CLIs are in ``../test_terminal_native_logs.py``; here: what is
specific to this one.
"""

from __future__ import annotations

import shutil
from pathlib import Path


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


def test_tool_call_and_output_come_from_the_rollout():
    folder = FIXTURE / "direct"
    stdout = (folder / "agent.stdout").read_text()
    # the --json stdout of this run has no item.completed for the command: the rollout is the source
    assert '"type":"command_execution","command"' in stdout and '"status":"completed","aggregated_output"' not in stdout
    traj = convert(folder)
    assert traj["extra"]["reasoning_effort"] == "high" and traj["extra"]["model_provider"] == "harness"


def test_reasoning_tokens_are_totalled():
    # Responses counting: output includes reasoning; the per-step counts are in ../test_terminal_native_logs.py
    final = convert(FIXTURE / "direct")["final_metrics"]
    assert final["extra"]["total_reasoning_tokens"] == sum(t.usage.reasoning_tokens or 0 for t in SCRIPT.turns)


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

"""Codex 0.124.0 (TraceBench: gpt-5.5, reasoning effort high) end to end: the real pinned CLI in the Docker sandbox, offline.

The generic episode checks for this CLI are in ``test_e2e_terminal_episodes.py``; here: what is
specific to it.  The scripted model makes the CLI run Python through its shell tool (writing
``results.json``, or ``rule.py`` in the programmatic case), checks every
request it receives (dummy key, wire, model, reasoning effort, the tool result
carrying the Python output) and ends the run.  The harness scores the episode
and the ATIF trajectory is checked step by step (see ``tests.support.terminal_e2e.check_success``).
"""

from __future__ import annotations

from tests.support.terminal_e2e import SCRIPTS, e2e_marks, run_episode

pytestmark = e2e_marks

PROFILE = "gpt-5.5"


def test_rollout_and_fresh_codex_home(tmp_path):
    episode = run_episode(PROFILE, SCRIPTS / "codex-balldrop.yaml", tmp_path, "direct", case="direct")
    [rollout] = episode.home.glob(".codex/sessions/*/*/*/rollout-*.jsonl")
    assert episode.trajectory["session_id"] in rollout.name
    # Codex appends a trust entry to its config: the per-episode CODEX_HOME keeps that out of other episodes
    config = (episode.home / ".codex" / "config.toml").read_text()
    assert 'model_provider = "harness"' in config

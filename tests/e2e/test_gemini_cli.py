"""Gemini CLI 0.35.3 (TraceBench: gemini-3.1-pro, reasoning effort high) end to end: the real pinned CLI in the Docker sandbox, offline.

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

PROFILE = "gemini-3.1-pro"


def test_session_file_and_thoughts(tmp_path):
    episode = run_episode(PROFILE, SCRIPTS / "gemini-balldrop.yaml", tmp_path, "direct", case="direct")
    [session] = episode.home.glob(".gemini/tmp/workspace/chats/session-*.json")
    assert episode.trajectory["session_id"] in session.read_text()
    # streamed thought fragments are stored trimmed: the text comes from the proxy log
    assert episode.trajectory["steps"][1]["reasoning_content"] == episode.script.turns[0].reasoning

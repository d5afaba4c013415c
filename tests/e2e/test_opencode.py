"""OpenCode 1.14.41 (TraceBench: minimax-m2.7) end to end: the real pinned CLI in the Docker sandbox, offline.

The generic episode checks for this CLI are in ``test_e2e_terminal_episodes.py``; here: what is
specific to it.  The scripted model makes the CLI run Python through its shell tool (writing
``results.json``, or ``rule.py`` in the programmatic case), checks every
request it receives (dummy key, wire, model, the tool result
carrying the Python output) and ends the run.  The harness scores the episode
and the ATIF trajectory is checked step by step (see ``tests.support.terminal_e2e.check_success``).
"""

from __future__ import annotations

from tests.support.terminal_e2e import SCRIPTS, e2e_marks, run_episode

pytestmark = e2e_marks

PROFILE = "minimax-m2.7"


def test_user_message_is_filled_from_the_session_database(tmp_path):
    episode = run_episode(PROFILE, SCRIPTS / "opencode-balldrop.yaml", tmp_path, "direct", case="direct")
    user = episode.trajectory["steps"][0]
    assert user["extra"] == {"filled_from": "opencode.db"}
    assert "missing from OpenCode's JSON events" in episode.trajectory["notes"]
    assert '"type":"user"' not in episode.read("agent.stdout")

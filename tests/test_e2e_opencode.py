"""OpenCode 1.14.41 (TraceBench: minimax-m2.7) end to end: the real pinned CLI in the Docker sandbox, offline.

The scripted model makes the CLI run Python through its shell tool (writing
``results.json``, or ``rule.py`` in the programmatic case), checks every
request it receives (dummy key, wire, model, the tool result
carrying the Python output) and ends the run.  The harness scores the episode
and the ATIF trajectory is checked step by step (see ``_terminal_e2e.check_success``).
"""

from __future__ import annotations

import pytest
from _terminal_e2e import SCRIPTS, check_success, e2e_marks, run_episode

pytestmark = e2e_marks

PROFILE = "minimax-m2.7"


@pytest.mark.parametrize("submission,script", [
    ("direct", "opencode-balldrop.yaml"),
    ("programmatic", "opencode-balldrop-rule.yaml"),
])
def test_episode(tmp_path, submission, script):
    episode = run_episode(PROFILE, SCRIPTS / script, tmp_path, submission)
    check_success(episode, PROFILE, submission)


def test_user_message_is_filled_from_the_session_database(tmp_path):
    episode = run_episode(PROFILE, SCRIPTS / "opencode-balldrop.yaml", tmp_path, "direct", case="direct")
    user = episode.trajectory["steps"][0]
    assert user["extra"] == {"filled_from": "opencode.db"}
    assert "missing from OpenCode's JSON events" in episode.trajectory["notes"]
    assert '"type":"user"' not in episode.read("agent.stdout")

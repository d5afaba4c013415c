"""Claude Code 2.1.96 (TraceBench: claude-opus-4.6, reasoning effort high) end to end: the real pinned CLI in the Docker sandbox, offline.

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

PROFILE = "claude-opus-4.6"


def test_session_log_and_result_event(tmp_path):
    episode = run_episode(PROFILE, SCRIPTS / "claude-balldrop.yaml", tmp_path, "direct", case="direct")
    [log] = episode.home.glob(".claude/projects/-workspace/*.jsonl")
    assert log.stem == episode.trajectory["session_id"]
    assert episode.trajectory["extra"]["result"] == {"subtype": "success", "is_error": False, "num_turns": 2,
                                                     "stop_reason": "end_turn", "terminal_reason": "completed"}

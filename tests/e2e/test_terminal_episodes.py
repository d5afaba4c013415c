"""Every terminal agent, both submission modes, end to end: the real pinned CLI in the Docker sandbox, offline.

The scripted model makes the CLI run Python through its shell tool (writing
``results.json``, or ``rule.py`` in the programmatic case), checks every
request it receives (dummy key, wire, model, reasoning effort, the tool result
carrying the Python output) and ends the run.  The harness scores the episode
and the ATIF trajectory is checked step by step (see ``tests.support.terminal_e2e.check_success``).
CLI-specific checks live in ``test_e2e_<cli>.py``.
"""

from __future__ import annotations

import pytest
from tests.support.terminal_e2e import CLIS, SCRIPTS, check_success, e2e_marks, run_episode

pytestmark = e2e_marks


@pytest.mark.parametrize("profile", sorted(CLIS))
@pytest.mark.parametrize("submission,suffix", [("direct", ""), ("programmatic", "-rule")])
def test_episode(tmp_path, profile, submission, suffix):
    script = SCRIPTS / f"{CLIS[profile][1]}-balldrop{suffix}.yaml"
    episode = run_episode(profile, script, tmp_path, submission)
    check_success(episode, profile, submission)

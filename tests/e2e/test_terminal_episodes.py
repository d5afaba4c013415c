"""Every terminal agent, both submission modes, end to end: the real pinned CLI in the Docker sandbox, offline.

The scripted model makes the CLI run Python through its shell tool (writing
``results.json``, or ``rule.py`` in the programmatic case), checks every
request it receives (dummy key, wire, model, reasoning effort, the tool result
carrying the Python output) and ends the run.  The harness scores the episode
and the ATIF trajectory is checked step by step (see ``tests.support.terminal_e2e.check_success``).
The direct episode of each CLI runs once (``direct``, a module fixture; with
``$HARNESS_CAPTURE_NATIVE_LOGS`` set it is captured into ``tests/fixtures/native_logs/<agent>/direct``)
and is checked by the generic test, the native-log test over the table below and the tests of
what only one CLI does.  CLIs: Claude Code 2.1.96 (claude-opus-4.6), Codex 0.124.0 (gpt-5.5),
Gemini CLI 0.35.3 (gemini-3.1-pro), all at reasoning effort high, and OpenCode 1.14.41 (minimax-m2.7).
"""

from __future__ import annotations

import pytest

from harness.atif import find_native_files, read_native_text
from tests.support.terminal_e2e import CLIS, SCRIPTS, Episode, check_success, e2e_marks, run_episode

pytestmark = e2e_marks

#: profile -> the CLI's own session log under the episode's home, and how it names the session.
#: OpenCode's is a SQLite database (with its write-ahead log): its use is checked by
#: test_opencode_user_message_is_filled_from_the_session_database.
NATIVE_LOG = {
    "claude-opus-4.6": (".claude/projects/-workspace/*.jsonl", "stem"),
    "gpt-5.5": (".codex/sessions/*/*/*/rollout-*.jsonl", "name"),
    "gemini-3.1-pro": (".gemini/tmp/workspace/chats/session-*.json", "text"),
}


@pytest.fixture(scope="module")
def direct(request, tmp_path_factory) -> tuple[str, Episode]:
    """(profile, its direct episode), run once per CLI (parametrised indirectly with the profile)."""
    profile = request.param
    script = SCRIPTS / f"{CLIS[profile][1]}-balldrop.yaml"
    return profile, run_episode(profile, script, tmp_path_factory.mktemp(CLIS[profile][0]), "direct", case="direct")


@pytest.mark.parametrize("direct", sorted(CLIS), indirect=True)
def test_direct_episode(direct):
    profile, episode = direct
    check_success(episode, profile, "direct")


@pytest.mark.parametrize("profile", sorted(CLIS))
def test_programmatic_episode(tmp_path, profile):
    episode = run_episode(profile, SCRIPTS / f"{CLIS[profile][1]}-balldrop-rule.yaml", tmp_path, "programmatic")
    check_success(episode, profile, "programmatic")


@pytest.mark.parametrize("direct", sorted(NATIVE_LOG), indirect=True)
def test_native_log_names_the_session(direct):
    profile, episode = direct
    pattern, where = NATIVE_LOG[profile]
    [log] = find_native_files(episode.home, pattern)  # stored compressed after the episode: its plain name
    session = episode.trajectory["session_id"]
    if where == "stem":
        assert log.stem == session
    elif where == "name":
        assert session in log.name
    else:
        assert session in read_native_text(log, 1 << 26).value


@pytest.mark.parametrize("direct", ["claude-opus-4.6"], indirect=True)
def test_claude_code_result_event(direct):
    _, episode = direct
    assert episode.trajectory["extra"]["result"] == {"subtype": "success", "is_error": False, "num_turns": 2,
                                                     "stop_reason": "end_turn", "terminal_reason": "completed"}


@pytest.mark.parametrize("direct", ["gpt-5.5"], indirect=True)
def test_codex_home_is_fresh_per_episode(direct):
    _, episode = direct
    # Codex appends a trust entry to its config: the per-episode CODEX_HOME keeps that out of other episodes
    config = (episode.home / ".codex" / "config.toml").read_text()
    assert 'model_provider = "harness"' in config


@pytest.mark.parametrize("direct", ["gemini-3.1-pro"], indirect=True)
def test_gemini_cli_thoughts_come_from_the_proxy_log(direct):
    _, episode = direct
    # streamed thought fragments are stored trimmed: the text comes from the proxy log
    assert episode.trajectory["steps"][1]["reasoning_content"] == episode.script.turns[0].reasoning


@pytest.mark.parametrize("direct", ["minimax-m2.7"], indirect=True)
def test_opencode_user_message_is_filled_from_the_session_database(direct):
    _, episode = direct
    user = episode.trajectory["steps"][0]
    assert user["extra"] == {"filled_from": "opencode.db"}
    assert "missing from OpenCode's JSON events" in episode.trajectory["notes"]
    assert '"type":"user"' not in episode.read("agent.stdout")

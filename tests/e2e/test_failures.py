"""Terminal agents that fail, end to end in Docker: a CLI hanging past the wall-clock limit, failed model calls.

* Hang: the scripted model streams its answer one character a second, so
  the CLI waits past the episode limit.  The harness must kill it at the
  limit (``agent_timeout``), leave no container behind, and still write a
  trajectory (the prompt, with a note that the run did not finish) — also
  when the limit comes before the CLI made its first model call.
* Failed model calls: the scripted model answers HTTP 400 or 429.  Each
  agent's ``classify_failure`` must read its own CLI's output as
  ``agent_crashed`` (400) or ``provider_rate_limited`` (429) — OpenCode
  included, although it exits 0 after a failed call.
"""

from __future__ import annotations

import json

import pytest
import yaml
from tests.support.terminal_e2e import CLIS, e2e_marks, run_episode

from harness import plugins as registry
from harness.sandbox.docker import LABEL_RUN, connect
from harness.wire import proxy_log, read_log
from tests.support.paths import TESTS

pytestmark = e2e_marks

LIMIT = 12.0
#: A limit no CLI starts within: killed before its first model call.
EARLY = 0.5
#: Profile options that make each CLI give up after one retry (default retries back off for minutes).
FEW_RETRIES = {
    "claude-opus-4.6": {"env": {"CLAUDE_CODE_MAX_RETRIES": "1"}},
    "gpt-5.5": {"config": {"model_providers": {"harness": {"request_max_retries": 0, "stream_max_retries": 0}}}},
    "gemini-3.1-pro": {"config": {"general": {"maxAttempts": 1}}},
    "minimax-m2.7": {},
}
TITLE = {"when": {"no_tools": True}, "reply": {"text": "Title"}}


def _script(tmp_path, name: str, data: dict):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


@pytest.mark.parametrize("profile", sorted(CLIS))
def test_cli_hanging_past_the_limit_is_killed(tmp_path, profile):
    script = _script(tmp_path, "hang.yaml", {"match": [TITLE], "turns": [
        {"text": "." * 120, "chunk_size": 1, "chunk_delay": 1.0}]})
    episode = run_episode(profile, script, tmp_path, timeout=LIMIT, case="timeout")
    row = episode.row
    assert row["status"] == "failed" and row["error_kind"] == "agent_timeout"
    assert row["exit_code"] is None
    assert LIMIT <= row["agent_seconds"] < LIMIT + 20  # killed at the limit, not after the 120 s answer
    client = connect()
    try:
        left = client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={row['run_id']}"})
    finally:
        client.close()
    assert left == []
    _check_prompt_kept(episode)


@pytest.mark.parametrize("profile", sorted(CLIS))
def test_cli_killed_before_its_first_model_call_keeps_the_prompt(tmp_path, profile):
    script = _script(tmp_path, "hang.yaml", {"match": [TITLE], "turns": [{"text": "never asked for"}]})
    episode = run_episode(profile, script, tmp_path, timeout=EARLY, case="killed-early")
    assert episode.row["status"] == "failed" and episode.row["error_kind"] == "agent_timeout"
    assert episode.row["agent_seconds"] < EARLY + 20
    _check_prompt_kept(episode)


def _check_prompt_kept(episode) -> None:
    """The trajectory of a killed CLI: the prompt as its user step, the proxy's token counts as its totals."""
    traj, row = episode.trajectory, episode.row
    assert traj is not None and traj["steps"][0]["source"] == "user"
    assert traj["steps"][0]["message"].strip() == episode.read("prompt.txt").strip()
    # the answer never finished; whatever the proxy counted is what the trajectory reports
    assert traj["final_metrics"]["total_prompt_tokens"] == row["prompt_tokens"]
    assert traj["final_metrics"]["total_completion_tokens"] == row["completion_tokens"]


@pytest.mark.parametrize("profile", sorted(CLIS))
def test_failed_model_call_is_classified(tmp_path, profile):
    error = {"error": {"status": 400, "message": "invalid request: context too long"}}
    script = _script(tmp_path, "bad-request.yaml", {"match": [TITLE], "turns": [error, error, error]})
    episode = run_episode(profile, script, tmp_path, timeout=120, case="error-400")
    agent = registry.get("agent", CLIS[profile][0])
    kind = agent.classify_failure(episode.read("agent.stdout"), episode.read("agent.stderr"), episode.row["exit_code"])
    assert kind == "agent_crashed"
    errors = json.loads(episode.row["proxy_errors"])
    assert errors == []  # a 400 is the model's answer, not an upstream failure
    if profile == "minimax-m2.7":
        assert episode.row["exit_code"] == 0  # OpenCode exits 0: only its JSON events tell
    else:
        assert episode.row["exit_code"] != 0 and episode.row["status"] == "failed"
    assert agent.classify_failure(*_clean_run_outputs(profile)) is None


@pytest.mark.parametrize("profile", [p for p in sorted(CLIS) if p != "minimax-m2.7"])
def test_rate_limited_model_call_is_classified(tmp_path, profile):
    # OpenCode retries a 429 with exponential backoff without end: the wall clock ends it (see the hang test)
    error = {"error": {"status": 429, "message": "rate limit reached for requests"}}
    script = _script(tmp_path, "rate-limited.yaml", {"turns": [error] * 4})
    episode = run_episode(profile, script, tmp_path, timeout=120, case="error-429",
                          profile_options=FEW_RETRIES[profile])
    agent = registry.get("agent", CLIS[profile][0])
    # an infrastructure failure: retried by the run (none here), then recorded apart from agent failures
    assert episode.row["status"] == "infra_failed" and episode.row["error_kind"] == "provider_rate_limited"
    kind = agent.classify_failure(episode.read("agent.stdout"), episode.read("agent.stderr"), 1)
    assert kind == "provider_rate_limited"
    log = read_log(proxy_log(episode.root))
    statuses = [entry["status"] for entry in log if entry["type"] == "response"]
    assert statuses[-1] == 429 and statuses.count(429) >= 1


def _clean_run_outputs(profile: str) -> tuple[str, str, int]:
    """(stdout, stderr, exit code) of the committed successful run of this CLI."""

    folder = TESTS / "fixtures" / "native_logs" / CLIS[profile][0] / "direct"
    return (folder / "agent.stdout").read_text(), (folder / "agent.stderr").read_text(), 0


"""An unexpected scoring exception is a typed failure of that episode, never the end of the run."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from pydantic import BaseModel

from harness.config import AgentProfile, RunSettings
from harness.contracts import Materialized
from tests.support.sandbox import IdleAgent
from harness.episode import EpisodePlan, _status, one_line, run_episode
from harness.errors import EpisodeError, ErrorKind
from harness.sandbox.none import NoneBackend
from harness.store import RunStore


class Params(BaseModel):
    seed: int = 0


class BrokenScorer:
    name = "broken-scorer"

    def materialize(self, params, episode, workspace, key_dir):
        workspace.mkdir(parents=True, exist_ok=True)
        return Materialized(prompt="do nothing", task_info={})

    def score(self, params, episode, workspace, key_dir, runner):
        raise KeyError("a key the scorer expected\nover two lines")



def test_scoring_exception_becomes_a_typed_failure_row(tmp_path):
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "t", BrokenScorer(), Params(), "0", AgentProfile(name="idle", agent="idle"), IdleAgent(),
                       NoneBackend(), RunSettings(sandbox="none"), store.run_id)
    row = run_episode(plan, store.episode("ep-0"), lambda: None)
    assert row["status"] == "failed"
    assert row["error_kind"] == "scoring_failed"
    assert row["error"] == "scoring raised KeyError: 'a key the scorer expected\\nover two lines'"
    assert "\n" not in row["error"]


def test_one_line_flattens_and_cuts():
    assert one_line("a\n  b\tc") == "a b c"
    assert one_line("x" * 500, 20) == "x" * 17 + "..."
    assert one_line(None) is None


def test_an_agent_failing_right_after_a_provider_failure_is_infrastructure(tmp_path):
    log = tmp_path / "proxy.jsonl"
    crashed = SimpleNamespace(timed_out=False, returncode=1, duration=1.0, stderr="boom\n")
    usage = SimpleNamespace(budget_exceeded=None,
                            errors=[SimpleNamespace(seq=2, kind="rate_limited", message="429 from the provider")])
    lines = [{"type": "request", "seq": 1}, {"type": "response", "seq": 1}, {"type": "request", "seq": 2},
             {"type": "response", "seq": 2, "status": 429}]
    log.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(EpisodeError) as err:  # its last request is the one that failed
        _status(crashed, usage, None, log)
    assert err.value.kind is ErrorKind.RATE_LIMIT
    with log.open("a") as fh:  # the agent went on after the failure: its own crash
        fh.write(json.dumps({"type": "request", "seq": 3}) + "\n")
    assert _status(crashed, usage, None, log) == ("failed", "agent_crashed", "agent exited with code 1: boom")

"""Episodes write their inputs at most as many at once as ``_WRITING_INPUTS`` has slots; the wait is part of the
episode's time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

import harness.episode as episode_module
from harness.config import AgentProfile, RunSettings
from harness.contracts import EpisodeScore, Materialized
from harness.episode import EpisodePlan, run_episode
from harness.sandbox.none import NoneBackend
from harness.store import RunStore
from tests.support.sandbox import IdleAgent

WRITE_SECONDS = 0.3


class Params(BaseModel):
    seed: int = 0


class SlowInputs:
    """A template whose inputs take WRITE_SECONDS to write; it counts how many episodes write at once."""

    name = "slow-inputs"

    def __init__(self):
        self.lock = threading.Lock()
        self.now = self.most = 0

    def materialize(self, params, episode, workspace, key_dir):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(WRITE_SECONDS)
        with self.lock:
            self.now -= 1
        workspace.mkdir(parents=True, exist_ok=True)
        return Materialized(prompt="go", task_info={})

    def score(self, params, episode, workspace, key_dir, runner):
        return EpisodeScore(metrics={"accuracy": 1.0})


def test_at_most_the_slots_write_inputs_at_once_and_the_wait_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(episode_module, "_WRITING_INPUTS", threading.BoundedSemaphore(2))
    store = RunStore.create(tmp_path / "run")
    template = SlowInputs()
    profile = AgentProfile(name="idle", agent="idle")

    def one(i: int) -> dict:
        plan = EpisodePlan(f"ep-{i}", "slow", template, Params(seed=i), "0", profile, IdleAgent(), NoneBackend(),
                           RunSettings(sandbox="none"), store.run_id)
        return run_episode(plan, store.episode(f"ep-{i}"), lambda: None)

    with ThreadPoolExecutor(6) as pool:
        rows = list(pool.map(one, range(6)))
    assert [r["status"] for r in rows] == ["ok"] * 6
    assert template.most == 2  # two at once (the slots), never the six episodes running
    # six writes of 0.3 s in two slots: three rounds, so the last episode waited two rounds for its slot
    waits = sorted(r["episode_seconds"] for r in rows)
    assert waits[-1] >= 3 * WRITE_SECONDS - 0.05
    assert waits[0] < 2 * WRITE_SECONDS

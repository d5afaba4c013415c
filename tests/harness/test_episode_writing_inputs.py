"""Episodes write their inputs at most one per CPU at once; the wait is part of the episode's time."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

import harness.episode as episode_module
from harness.config import AgentProfile, RunSettings
from harness.contracts import Agent, AgentInvocation, EpisodeScore, Materialized
from harness.episode import EpisodePlan, run_episode
from harness.sandbox.none import NoneBackend
from harness.store import RunStore

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


class Quick(Agent):
    name = "quick"
    version = "1"
    needs_model = False
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["true"])


def test_at_most_one_episode_per_cpu_writes_its_inputs_and_the_wait_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(episode_module, "_WRITING_INPUTS", threading.BoundedSemaphore(2))
    store = RunStore.create(tmp_path / "run")
    template = SlowInputs()
    profile = AgentProfile(name="quick", agent="quick")

    def one(i: int) -> dict:
        plan = EpisodePlan(f"ep-{i}", "slow", template, Params(seed=i), "0", profile, Quick(), NoneBackend(),
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

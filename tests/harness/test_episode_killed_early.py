"""An LLM agent killed at its time limit, however early, still leaves a trajectory that starts with the prompt."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from harness.config import AgentProfile, RunSettings
from harness.contracts import Agent, AgentInvocation, Materialized
from harness.episode import EpisodePlan, run_episode
from harness.sandbox.none import NoneBackend
from harness.store import RunStore
from harness.trajectory import load_trajectory

PROMPT = "Say which parameter changed.\nWrite results.json."


class Params(BaseModel):
    seed: int = 0


class Task:
    name = "toy"

    def materialize(self, params, episode, workspace, key_dir):
        workspace.mkdir(parents=True, exist_ok=True)
        return Materialized(prompt=PROMPT, task_info={})

    def score(self, params, episode, workspace, key_dir, runner):
        from harness.contracts import EpisodeScore

        return EpisodeScore(metrics={"accuracy": 0.0})


class Sleeper(Agent):
    """An LLM agent whose CLI is still starting when the limit comes: no native log, no model call."""

    name = "sleeper"
    version = "1"
    needs_model = True
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["sleep", "60"])

    def trajectory(self, home, stdout, proxy_log):
        return None  # nothing to convert


@pytest.mark.parametrize("limit", [0.001, 0.5])
def test_an_agent_killed_before_its_first_model_call_keeps_the_prompt(tmp_path, limit):
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "toy", Task(), Params(), "0", AgentProfile(name="sleeper", agent="sleeper", model="m"),
                       Sleeper(), NoneBackend(), RunSettings(sandbox="none", episode_timeout=limit), store.run_id)
    paths = store.episode("ep-0")
    row = run_episode(plan, paths, lambda: None)
    assert row["status"] == "failed" and row["error_kind"] == "agent_timeout"
    assert row["agent_seconds"] < 30  # killed at the limit, not after the 60 s sleep
    traj = json.loads((paths.root / "trajectory.json").read_text())
    load_trajectory(paths.root / "trajectory.json")  # valid ATIF
    assert [(s["source"], s["message"]) for s in traj["steps"]] == [("user", PROMPT)]
    assert (paths.root / "prompt.txt").read_text() == PROMPT
    assert traj["agent"] == {"name": "sleeper", "version": "1", "model_name": "m"}
    assert traj["final_metrics"]["total_prompt_tokens"] == 0 and traj["final_metrics"]["total_steps"] == 1
    assert "agent killed after" in traj["notes"] and "wall-clock limit" in traj["notes"]


def test_an_agent_without_a_model_keeps_no_trajectory(tmp_path):
    class Baseline(Sleeper):
        needs_model = False

    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "toy", Task(), Params(), "0", AgentProfile(name="b", agent="sleeper"), Baseline(),
                       NoneBackend(), RunSettings(sandbox="none", episode_timeout=0.2), store.run_id)
    paths = store.episode("ep-0")
    assert run_episode(plan, paths, lambda: None)["error_kind"] == "agent_timeout"
    assert not (paths.root / "trajectory.json").exists()  # a classical baseline has no conversation to record

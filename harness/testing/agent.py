"""Conformance tests every agent plugin must pass.

Fixture contract: override ``agent`` to return an instance of your
:class:`harness.contracts.Agent`.  Optionally override ``context`` (the
:class:`AgentContext` the command checks use).  To run an agent with
``needs_model = False`` on a small episode (without a sandbox), override
``template`` and ``params``: a :class:`harness.contracts.TaskTemplate` and small
params for it; the episode is materialized, the agent's command runs in the
workspace, and the template must score what it left::

    import pytest
    from harness.testing import AgentTests

    class TestMyAgent(AgentTests):
        @pytest.fixture
        def agent(self):
            return MyAgent()
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from typing import Any

import pytest

from harness.config import AgentProfile
from harness.contracts import Agent, AgentContext, AgentInvocation, CallResult, EpisodeScore, TaskTemplate

CANARY = "conformance-canary-api-key-0123456789"


def atif_problems(trajectory: dict) -> list[str]:
    """Every way ``trajectory`` breaks ATIF-v1.6's rules, as Harbor's own models check them (empty: valid):
    the schema (:func:`harness.trajectory.validate_trajectory`) and, spelled out here so that the kit
    checks it whatever the validator does, the rule that an agent step with ``llm_call_count`` 0 (a
    deterministic dispatch: a tool the agent's code ran) carries no ``metrics`` and no ``reasoning_content``."""
    from harness.trajectory import TrajectoryError, validate_trajectory

    problems = []
    try:
        validate_trajectory(trajectory)
    except TrajectoryError as exc:
        problems += exc.problems
    for index, step in enumerate(trajectory.get("steps") or []):
        if isinstance(step, dict) and step.get("source") == "agent" and step.get("llm_call_count") == 0:
            problems += [f"steps[{index}].{name}: Field '{name}' must be absent when llm_call_count is 0"
                         for name in ("metrics", "reasoning_content") if step.get(name) is not None]
    return problems


class AgentTests:
    """Aggregate conformance suite for :class:`harness.contracts.Agent`.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``agent`` (required, function scope): your :class:`harness.contracts.Agent` instance;
    - ``context`` (optional, function scope): the :class:`AgentContext` the command checks use (default:
      workspace ``/workspace``, a ``conformance`` profile, the proxy URL when ``agent.needs_model``);
    - ``template`` (optional, function scope): a :class:`harness.contracts.TaskTemplate` to run a small
      episode of (default ``None``: that check is skipped);
    - ``params`` (optional, function scope): small params for ``template`` (default ``None``);
    - ``recorded_home`` (optional, function scope): a folder holding a recorded episode of the agent --
      ``home/`` (its native log), and optionally ``agent.stdout`` and the proxy's log (``proxy.jsonl.zst`` or
      a plain ``proxy.jsonl``) --
      whose trajectory must follow ATIF-v1.6's rules (:func:`atif_problems`; default ``None``: skipped).
    """

    @pytest.fixture
    def agent(self) -> Agent:
        pytest.fail("override the `agent` fixture to return your Agent instance")

    @pytest.fixture
    def context(self, agent) -> AgentContext:
        profile = AgentProfile(name="conformance", agent=agent.name, model="test-model", reasoning_effort="high")
        return AgentContext(
            workspace="/workspace", home="/home/agent", prompt="Solve the task described in the workspace.",
            profile=profile, model_base_url="http://127.0.0.1:8765" if agent.needs_model else None,
            task_info={}, timeout=60,
        )

    @pytest.fixture
    def template(self) -> TaskTemplate | None:
        return None

    @pytest.fixture
    def params(self) -> Any:
        return None

    @pytest.fixture
    def recorded_home(self) -> Any:
        return None

    def test_identity(self, agent):
        assert isinstance(agent, Agent)
        assert agent.name and agent.name == agent.name.strip()
        assert isinstance(agent.version, str) and agent.version

    def test_command(self, agent, context, monkeypatch):
        for var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "OPENROUTER_API_KEY"):
            monkeypatch.setenv(var, CANARY)
        inv = agent.command(context)
        assert isinstance(inv, AgentInvocation)
        assert inv.argv and all(isinstance(a, str) for a in inv.argv)
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in inv.env.items())
        blob = json.dumps([inv.argv, inv.env, inv.stdin])
        assert CANARY not in blob, "a host API key leaked into the agent's command or environment"
        if agent.needs_model:
            assert context.model_base_url in blob or any(context.model_base_url in v for v in inv.env.values()), \
                "an LLM agent must be pointed at the model proxy URL"

    def test_logs_and_trajectory_on_empty_home(self, agent, tmp_path):
        assert agent.native_logs(tmp_path) == []
        traj = agent.trajectory(tmp_path, "", None)
        assert traj is None or ("schema_version" in traj and isinstance(traj.get("steps"), list))
        assert traj is None or atif_problems(traj) == []

    def test_recorded_trajectory_follows_atif(self, agent, recorded_home):
        if recorded_home is None:
            pytest.skip("no recorded episode given (override the `recorded_home` fixture)")
        from pathlib import Path

        folder = Path(recorded_home)
        stdout = (folder / "agent.stdout").read_text(encoding="utf-8") if (folder / "agent.stdout").is_file() else ""
        from harness.proxy_records import proxy_log

        traj = agent.trajectory(folder / "home", stdout, proxy_log(folder))
        assert traj is not None, f"{folder}: the agent made no trajectory of its recorded episode"
        assert atif_problems(traj) == []

    def test_runs_a_small_episode(self, agent, context, template, params, tmp_path):
        if agent.needs_model:
            pytest.skip("LLM agents are exercised end to end with a model backend that answers from a script")
        if template is None or params is None:
            pytest.skip("no small episode given (override the `template` and `params` fixtures)")
        template.prepare(params, lambda done, total, what: None)
        episode = template.episodes(params)[0]
        workspace, key_dir = tmp_path / "workspace", tmp_path / "key"
        workspace.mkdir()
        key_dir.mkdir()
        done = template.materialize(params, episode, workspace, key_dir)
        inv = agent.command(dataclasses.replace(context, prompt=done.prompt, task_info=done.task_info))
        env = {"PATH": os.environ.get("PATH", ""), **inv.env}
        proc = subprocess.run(inv.argv, cwd=workspace, env=env, input=inv.stdin, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        score = template.score(params, episode, workspace, key_dir,
                               lambda module, function, inputs: [CallResult(error="no sandbox here")] * len(inputs))
        assert isinstance(score, EpisodeScore) and score.metrics, "the template could not score the agent's output"
        assert not score.warnings, score.warnings

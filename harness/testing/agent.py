"""Conformance tests every agent plugin must pass.

Fixture contract: override ``agent`` to return an instance of your
:class:`harness.contracts.Agent`.  Optionally override ``context`` (the
:class:`AgentContext` used) or ``tiny_workspace`` (a folder laid out like a
TraceBench episode).  Agents with ``needs_model = False`` are also run on the
tiny episode without a sandbox and must write a valid ``results.json``::

    import pytest
    from harness.testing import AgentTests

    class TestMyAgent(AgentTests):
        @pytest.fixture
        def agent(self):
            return MyAgent()
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

from harness.config import AgentProfile
from harness.contracts import Agent, AgentContext, AgentInvocation

CANARY = "conformance-canary-api-key-0123456789"
LABELS = ["a changed", "b changed", "no parameter change"]


class AgentTests:
    """Aggregate conformance suite for :class:`harness.contracts.Agent`."""

    @pytest.fixture
    def agent(self) -> Agent:
        pytest.fail("override the `agent` fixture to return your Agent instance")

    @pytest.fixture
    def context(self, agent) -> AgentContext:
        profile = AgentProfile(name="conformance", agent=agent.name, model="test-model", reasoning_effort="high")
        return AgentContext(
            workspace="/workspace", home="/home/agent", prompt="Classify each file in test_samples/.",
            profile=profile, model_base_url="http://127.0.0.1:8765" if agent.needs_model else None,
            task_info={"submission": "direct", "labels": LABELS, "columns": ["col1", "col2", "col3"],
                       "impulse_columns": []},
            timeout=60,
        )

    @pytest.fixture
    def tiny_workspace(self, tmp_path):
        """Three labelled support samples and three test samples; test i is a noisy copy of support i."""
        rng = np.random.default_rng(0)
        t = np.arange(1, 101) * 0.01
        (tmp_path / "train_samples").mkdir()
        (tmp_path / "test_samples").mkdir()
        labels, truth = {}, {}
        for i, label in enumerate(LABELS):
            base = np.stack([np.sin(t * (i + 1) * 3), np.cos(t * (i + 2))], axis=1)
            for folder, name, x in (("train_samples", f"s{i}.parquet", base),
                                    ("test_samples", f"t{i}.parquet", base + rng.normal(0, 0.01, base.shape))):
                pd.DataFrame({"col1": x[:, 0], "col2": x[:, 1], "col3": t}).to_parquet(tmp_path / folder / name)
            labels[f"s{i}.parquet"] = label
            truth[f"t{i}.parquet"] = label
        (tmp_path / "train_labels.json").write_text(json.dumps(labels))
        return tmp_path, truth

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

    def test_solves_tiny_episode(self, agent, context, tiny_workspace):
        if agent.needs_model:
            pytest.skip("LLM agents are exercised end to end with the scripted model backend")
        root, truth = tiny_workspace
        inv = agent.command(context)
        env = {"PATH": os.environ.get("PATH", ""), **inv.env}
        proc = subprocess.run(inv.argv, cwd=root, env=env, input=inv.stdin, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        results = json.loads((root / "results.json").read_text())
        assert set(results) == set(truth)
        for name, ranked in results.items():
            assert isinstance(ranked, list) and ranked and set(ranked) <= set(LABELS)

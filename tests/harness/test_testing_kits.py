"""Every built-in metric extractor, model backend and task template passes its kind's conformance class."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.tracebench_fakes import FakePool, StandInBallDrop, registry_with

import harness.plugins
from harness.run import load_task
from harness.testing import (AgentTaskTemplateTests, AgentTests, InHarnessTaskTemplateTests, MetricExtractorTests,
                             ModelBackendTests, SandboxBackendTests)
from tests.support.paths import REPO
from harness.testing.sandbox import SandboxTimeoutTests
from harness.testing.task import TaskTemplateLeakTests, TaskTemplateScoringTests, TaskTemplateTests
from harness.testing.model import chat_request



def registered(kind: str) -> list[str]:
    names = sorted(harness.plugins.plugins().registry(kind))
    assert names, f"no built-in {kind}"
    return names


# --8<-- [start:metric-extractor]
class TestBuiltinMetricExtractors(MetricExtractorTests):
    @pytest.fixture(params=registered("metric_extractor"))
    def extractor(self, request):
        return harness.plugins.get("metric_extractor", request.param)
# --8<-- [end:metric-extractor]


# --8<-- [start:model-backend]
class TestBuiltinModelBackends(ModelBackendTests):
    @pytest.fixture(params=registered("model_backend"))
    def backend(self, request):
        return harness.plugins.get("model_backend", request.param)

    @pytest.fixture
    def options(self, backend):
        # Only the scripted backend answers offline; the provider backends need the network.
        return {"script": {"turns": [{"text": "Hello."}]}} if backend.name == "scripted" else None

    @pytest.fixture
    def model_request(self):
        return chat_request("Say hello.")
# --8<-- [end:model-backend]


# --8<-- [start:task-template]
class TestTracebenchTemplate(AgentTaskTemplateTests):
    @pytest.fixture(autouse=True)
    def simulators(self):
        sims = {n: StandInBallDrop(n) for n in ("toyball",)}
        old = harness.plugins.reset(registry_with(*sims.values()))
        yield sims
        harness.plugins.reset(old)

    @pytest.fixture
    def template(self, simulators):
        from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate

        pools: dict = {}
        return TracebenchTemplate(
            pool_loader=lambda sim, seed, per_class, progress: pools.setdefault((sim.name, seed), FakePool(sim)),
            simulator_lookup=simulators.__getitem__)
# --8<-- [end:task-template]

    def _params(self, template, **changes):
        base = dict(simulator="toyball", noise="high", context=True, examples_per_class=3, submission="programmatic",
                    n_test=10, seed=0, pool_seed=0, heldout_per_class=2)
        return template.params_model.model_validate(base | changes)

    @pytest.fixture
    def params(self, template):
        return self._params(template)

    @pytest.fixture
    def matched_params(self, template):
        return [self._params(template, submission="direct"), self._params(template, examples_per_class=0),
                self._params(template, submission="direct", examples_per_class=0)]

    def sample_identity(self, key_dir: Path):
        key = json.loads((key_dir / "key.json").read_text())
        return {name: entry["sample_id"] if isinstance(entry, dict) and "sample_id" in entry else entry
                for name, entry in key["test"].items()}


DRCIK_SPEC = REPO / "tasks" / "drcik" / "sample-statistical.yaml"


class TestDrcikForecasts(InHarnessTaskTemplateTests):
    """Dr-CiK forecasting episodes run in the harness: the in-harness kit on the bundled sample."""

    @pytest.fixture
    def template(self):
        from tsagent_plugins.tasks.drcik.template import DrcikTemplate

        return DrcikTemplate()

    @pytest.fixture
    def params(self, template):
        return load_task(DRCIK_SPEC, {"forecasters": ["naive"], "contexts": ["no-context", "background"],
                                      "samples": 5, "episodes": ["task_42"]}).params

    @pytest.fixture
    def volatile_columns(self):
        return ("seconds",)


class TestDrcikResearch(TaskTemplateTests, TaskTemplateLeakTests, TaskTemplateScoringTests):
    """Dr-CiK deep-research episodes run an agent in a sandbox: the agent kit on the bundled sample, without
    its reproducibility area: each materialization salts the corpus file names with a fresh secret (so the
    names say nothing across episodes; the key records the salt), by design not byte-reproducible."""

    def test_runs_agent_episodes(self, template, params):
        assert not template.runs_in_harness(params)

    @pytest.fixture
    def template(self):
        from tsagent_plugins.tasks.drcik.template import DrcikTemplate

        return DrcikTemplate()

    @pytest.fixture
    def params(self, template):
        return load_task(DRCIK_SPEC, {"episode_kind": "research", "forecasters": [], "episodes": ["task_42"]}).params


# --8<-- [start:sandbox]
ISOLATING = ["bubblewrap", "unshare", "docker"]


class TestIsolatingSandboxBackends(SandboxBackendTests):
    """bubblewrap, unshare and docker isolate network, names, files, environment and processes."""

    @pytest.fixture(params=ISOLATING)
    def backend(self, request):
        return harness.plugins.get("sandbox_backend", request.param)


class TestNoneSandboxBackend(SandboxTimeoutTests):
    """``none`` runs on the host (no isolation by design): only its timeouts are guaranteed."""

    grandchild_leaves_session = False  # on the host a process that leaves the session escapes by design

    @pytest.fixture
    def backend(self):
        return harness.plugins.get("sandbox_backend", "none")


def test_every_builtin_sandbox_backend_runs_a_kit_class():
# --8<-- [end:sandbox]
    assert set(ISOLATING) | {"none"} == set(registered("sandbox_backend"))


def agent_params() -> list:
    """Every built-in agent's name; the aeon baselines skipped without the ``baselines`` extra (they refuse)."""
    import importlib.util

    no_aeon = pytest.mark.skipif(importlib.util.find_spec("aeon") is None,
                                 reason="needs the baselines extra: pip install -e '.[baselines]'")
    return [pytest.param(name, marks=no_aeon) if getattr(harness.plugins.get("agent", name), "needs_aeon", False)
            else name for name in registered("agent")]


class TestBuiltinAgents(AgentTests):
    """Identity, command (no host key leaks, pointed at the proxy) and empty-home logs of every agent; every
    non-LLM agent (the classical baselines) also runs the kit's default small episode (TraceBench on BallDrop)
    and must leave a valid submission."""

    @pytest.fixture(params=agent_params())
    def agent(self, request):
        return harness.plugins.get("agent", request.param)

    @pytest.fixture
    def recorded_home(self, agent):
        """The agent's recorded episode under ``tests/fixtures/native_logs/<agent>/direct`` (the trajectory of
        each must follow ATIF-v1.6, dispatch steps without metrics included); None when it has none."""
        folder = Path(__file__).resolve().parents[1] / "fixtures" / "native_logs" / agent.name / "direct"
        return folder if folder.is_dir() else None

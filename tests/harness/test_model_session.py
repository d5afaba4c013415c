"""The run's proxy pool: one proxy per model, and every proxy, an agent's or an in-harness model user's (a
forecaster, a judge), under the same caps (rate limiter, in-flight request bodies, log budget)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.config import AgentProfile, RateLimit, RunSettings
from harness.limits import RunLimits
from harness.model_client import ModelClient
from harness.model_session import ProxyPool
from tests.support.paths import TESTS

SCRIPT = TESTS / "fixtures" / "scripts" / "llm_dp" / "retry.yaml"
MIB = 1024 * 1024


def profile(name: str) -> AgentProfile:
    return AgentProfile(name=name, agent="x", provider="custom", model="scripted-model")


class ModelUser:
    """An in-harness template whose episodes call the model ``judge-profile`` with their own options."""

    def model_profile(self, params, episode, agent_profile):
        return profile("judge-profile")

    def model_settings(self, params):
        return {"backend": "not-used-under-the-run-backend", "options": {"temperature": 0}}


@pytest.fixture
def pool():
    settings = RunSettings(proxy_inflight_mb=3, proxy_log_mb=2, rate_limits={"scripted": RateLimit(requests_per_min=600)})
    started = ProxyPool(settings, RunLimits(settings.rate_limits), "scripted", {"script": str(SCRIPT)})
    yield started
    started.stop()


def test_an_in_harness_proxy_gets_the_caps_an_agent_proxy_gets(pool):
    in_harness = SimpleNamespace(in_harness=True, template=ModelUser(), params=None, episode="e0", profile=None)
    agent = SimpleNamespace(in_harness=False, agent=SimpleNamespace(needs_model=True), profile=profile("agent"))
    model, agent_proxy = pool.for_plan(in_harness).proxy, pool.for_plan(agent).proxy
    for proxy in (model, agent_proxy):
        assert proxy.inflight is pool.inflight and proxy.inflight.limit == 3 * MIB  # one budget for the run
        assert proxy.log_budget == 2 * MIB
        assert proxy.limiter is pool.limits.for_provider("scripted") and proxy.limiter is not None
    assert model is not agent_proxy
    assert pool.for_plan(in_harness).proxy is model  # started once, shared by the episodes


def test_no_model_no_proxy_and_one_proxy_per_model_and_options(pool):
    no_model = SimpleNamespace(in_harness=False, agent=SimpleNamespace(needs_model=False), profile=profile("a"))
    assert pool.for_plan(no_model) is None
    first = pool.get(profile("p"), "scripted", {"script": str(SCRIPT)})
    assert pool.get(profile("p"), "scripted", {"script": str(SCRIPT)}) is first
    assert pool.get(profile("p"), "scripted", {"script": str(SCRIPT), "seed": 1}) is not first


def test_a_command_s_model_client_gets_the_caps_of_its_settings(tmp_path):
    settings = RunSettings(proxy_inflight_mb=5, proxy_log_mb=1)
    client = ModelClient.open(profile("gen"), tmp_path / "log", "scripted", {"script": str(SCRIPT)},
                              settings=settings)
    try:
        proxy = client.session.proxy
        assert (proxy.inflight.limit, proxy.log_budget) == (5 * MIB, 1 * MIB)
    finally:
        client.stop()

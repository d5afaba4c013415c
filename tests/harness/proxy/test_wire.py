"""A wire format registered in one place is decoded everywhere: a throwaway format, registered once with
``register_wire_format``, is priced by the model proxy, read by the context and iteration metrics, and turned
into trajectory steps by the proxy-log converter; unregistered, it is an unknown wire again."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness import plugins as registry
from harness.wire import register_wire_format, unregister_wire_format
from harness.config import Budget, Prices
from harness.contracts import EpisodeArtifacts
from harness.proxy import ModelProxy, Upstream, UpstreamResponse, Usage, WireFormat, detect_wire, read_log
from harness.proxy.client import request
from harness.proxy.sse import encode_event
from tsagent_plugins.metrics import ConsoleShareMetrics, InteractionMetrics, UsageMetrics

PATH = "/v9/fake:complete"
PROMPT = "Find the period of the pendulum."
TOOL_OUTPUT = "period = 2.0061 s"  # 17 characters: 5 tokens by chars/4


class FakeWire(WireFormat):
    """A made-up provider: a ``turns`` conversation, ``engine`` names the model, usage in ``meter``
    (``fresh`` input tokens exclude ``reused`` ones), streamed as events whose last ``meter`` counts."""

    name = "fake-wire"
    completion_keys = ("turns",)

    def matches_path(self, path: str) -> bool:
        return path.endswith("/v9/fake:complete")

    def response_rank(self, obj):
        return 0 if isinstance(obj, dict) and "meter" in obj else None

    def model(self, path, body):
        return body.get("engine") if isinstance(body, dict) else None

    def usage(self, body):
        meter = body.get("meter")
        if not isinstance(meter, dict):
            return None
        return Usage(meter["fresh"] + meter["reused"], meter["reused"], meter["out"], 0)

    def context_blocks(self, body, memo):
        return [(turn["text"], turn["who"] == "tool") for turn in body.get("turns") or []]

    def user_messages(self, body):
        return [turn["text"] for turn in body.get("turns") or [] if turn["who"] == "user"]


TOOLS = [{"name": "sh"}]
REQUESTS = [  # the agent's two iterations: the prompt, then the prompt, its call and the tool's output
    {"engine": "fake-engine-1", "tools": TOOLS, "turns": [{"who": "user", "text": PROMPT}]},
    {"engine": "fake-engine-1", "tools": TOOLS, "stream": True,
     "turns": [{"who": "user", "text": PROMPT}, {"who": "model", "text": "sh python pendulum.py"},
               {"who": "tool", "text": TOOL_OUTPUT}]},
]


async def _events():
    yield encode_event({"delta": "The period is"})
    yield encode_event({"delta": " 2.0 s", "meter": {"fresh": 30, "reused": 10, "out": 7}})


class FakeProvider(Upstream):
    """Answers the fake wire: JSON when not streamed, else SSE events."""

    async def handle(self, req):
        body = json.loads(req.body)
        if body.get("stream"):
            return UpstreamResponse.sse(_events())
        return UpstreamResponse.json(200, {"text": "I will run it.", "meter": {"fresh": 20, "reused": 0, "out": 5}})


@pytest.fixture
def fake_wire():
    fmt = register_wire_format(FakeWire())  # the one place
    try:
        yield fmt
    finally:
        unregister_wire_format(fmt.name)


@pytest.fixture
def episode(tmp_path, fake_wire) -> tuple[Path, object]:
    """An episode's ``proxy.jsonl`` written by the model proxy forwarding the two fake requests, and the
    proxy's usage of the episode."""
    log = tmp_path / "proxy.jsonl"
    with ModelProxy(FakeProvider()) as proxy:
        proxy.open_episode("e", tmp_path / "s", log, Prices(input=1, cached=0.5, output=2), Budget())
        for body in REQUESTS:
            assert request(tmp_path / "s", "POST", PATH, body).status == 200
        usage = proxy.close_episode("e")
    return log, usage


def test_the_proxy_detects_and_prices_a_registered_format(episode):
    log, usage = episode
    # JSON answer: 20 prompt, 5 completion; streamed answer: 30 + 10 reused prompt, 7 completion
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (60, 10, 12)
    assert usage.usage_missing == 0 and usage.n_requests == 2
    assert math.isclose(usage.cost_usd, (50 * 1 + 10 * 0.5 + 12 * 2) / 1e6)
    records = read_log(log)
    assert [r["wire"] for r in records if r["type"] == "request"] == ["fake-wire", "fake-wire"]
    assert [r["usage"]["prompt_tokens"] for r in records if r["type"] == "response"] == [20, 40]


def test_unregistered_the_format_is_unknown_and_another_class_cannot_take_its_name(fake_wire):
    assert detect_wire(PATH) == "fake-wire"
    unregister_wire_format(fake_wire.name)
    assert detect_wire(PATH) == "unknown"
    register_wire_format(FakeWire())
    register_wire_format(FakeWire())  # the same class again (its module imported anew): replaces the first
    assert detect_wire(PATH) == "fake-wire"

    class Impostor(FakeWire):
        pass

    with pytest.raises(ValueError, match="'fake-wire' is registered twice: by FakeWire and by Impostor"):
        register_wire_format(Impostor())


def test_the_metrics_read_a_registered_format(episode, tmp_path):
    artifacts = EpisodeArtifacts(None, episode[0], tmp_path)
    share = ConsoleShareMetrics(allow_encoding=False).extract(artifacts)  # chars/4, rounded up
    prompt = math.ceil(len(PROMPT) / 4)
    tools = math.ceil(len(json.dumps(TOOLS)) / 4)
    call = math.ceil(len("sh python pendulum.py") / 4)
    assert share["context_source"] == "proxy"
    assert share["console_tokens"] == math.ceil(len(TOOL_OUTPUT) / 4) == 5
    assert share["context_tokens"] == (prompt + tools) + (prompt + call + 5 + tools)
    assert InteractionMetrics().extract(artifacts)["agent_iterations"] == 2
    assert UsageMetrics().extract(artifacts)["total_tokens"] == 72


def test_the_trajectory_converter_reads_a_registered_format(episode, tmp_path):
    """No native log: the agent's trajectory comes from the proxy log alone (prompt, one step per call)."""
    home = tmp_path / "home"
    home.mkdir()
    agent = registry.get("agent", "claude-code")
    doc = agent.trajectory(home, "", episode[0])
    steps = doc["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent"]
    assert steps[0]["message"] == PROMPT
    assert doc["agent"]["model_name"] == "fake-engine-1"
    assert doc["final_metrics"]["total_prompt_tokens"] == 60
    assert doc["final_metrics"]["total_completion_tokens"] == 12

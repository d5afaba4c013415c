"""The proxy's memory and log are bounded apart from the agent: request bodies held at once by a run's
proxies (``proxy_inflight_mb``) and bodies one episode's ``proxy.jsonl`` stores in full (``proxy_log_mb``);
a body past the log budget is stored truncated with its size and hash, and the wire decoder says so."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading

from harness.config import Budget, Prices, RunSettings
from harness.limits import InflightBytes
from harness.proxy import ModelProxy, Upstream, UpstreamResponse, read_log
from harness.proxy.client import request
from tsagent_plugins.agents.terminal.proxylog import read_calls

PATH = "/v1/chat/completions"
ANSWER = {"object": "chat.completion", "choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}


class Echo(Upstream):
    """Answers with ANSWER plus ``pad`` characters; holds each request until ``gate`` is set (if given),
    recording how many it held at once."""

    def __init__(self, gate: threading.Event | None = None):
        self.gate, self.now, self.most = gate, 0, 0

    async def handle(self, req):
        self.now += 1
        self.most = max(self.most, self.now)
        while self.gate is not None and not self.gate.is_set():
            await asyncio.sleep(0.01)
        self.now -= 1
        pad = json.loads(req.body).get("pad", 0)
        return UpstreamResponse.json(200, {**ANSWER, "pad": "y" * pad})


def test_settings_defaults():
    settings = RunSettings()
    assert (settings.proxy_inflight_mb, settings.proxy_log_mb) == (1024, 256)


def test_bodies_past_the_log_budget_are_stored_truncated(tmp_path):
    big = {"model": "m", "messages": [{"role": "user", "content": "x" * 6000}]}
    with ModelProxy(Echo(), log_budget=5000) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", Prices(), Budget())
        small = request(tmp_path / "s", "POST", PATH, {"model": "m", "messages": []})
        large = request(tmp_path / "s", "POST", PATH, big)
        padded = request(tmp_path / "s", "POST", PATH, {"model": "m", "pad": 9000})
        usage = proxy.close_episode("e")
    assert (small.status, large.status, padded.status) == (200, 200, 200)
    assert usage.prompt_tokens == 15  # usage is read from every answer, truncated in the log or not
    records = read_log(tmp_path / "p.jsonl")
    requests = [r for r in records if r["type"] == "request"]
    responses = [r for r in records if r["type"] == "response"]
    assert requests[0]["body"] == {"model": "m", "messages": []} and "truncated" not in requests[0]
    raw = json.dumps(big).encode()
    assert {k: requests[1][k] for k in ("truncated", "size", "sha256", "body_encoding")} == {
        "truncated": True, "size": len(raw), "sha256": hashlib.sha256(raw).hexdigest(), "body_encoding": "text"}
    assert requests[1]["body"] == raw[:1024].decode()
    assert responses[2]["truncated"] is True and responses[2]["size"] > 9000
    calls = read_calls(tmp_path / "p.jsonl")
    assert calls[0].truncated == {}
    assert calls[1].truncated == {"request": {"size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}}
    assert set(calls[2].truncated) == {"response"} and calls[2].events() == []  # its small request fits


def test_request_bodies_in_flight_are_bounded(tmp_path):
    """Two proxies sharing a 3 MiB bound: two 2 MiB bodies are never held at once; a 4 MiB body is refused."""
    inflight = InflightBytes(3 << 20)
    gate = threading.Event()
    one, two = Echo(gate), Echo(gate)
    body = {"model": "m", "messages": [{"role": "user", "content": "z" * (2 << 20)}]}
    with ModelProxy(one, inflight=inflight) as a, ModelProxy(two, inflight=inflight) as b:
        a.open_episode("a", tmp_path / "a.sock", tmp_path / "a.jsonl", Prices(), Budget())
        b.open_episode("b", tmp_path / "b.sock", tmp_path / "b.jsonl", Prices(), Budget())
        answers = {}
        threads = [threading.Thread(target=lambda n=n: answers.__setitem__(n, request(
            tmp_path / f"{n}.sock", "POST", PATH, body))) for n in ("a", "b")]
        for t in threads:
            t.start()
        for _ in range(200):  # one request reached its upstream; the other waits for room
            if one.now + two.now == 1:
                break
            threading.Event().wait(0.01)
        threading.Event().wait(0.3)
        assert one.now + two.now == 1 and inflight.used <= 3 << 20
        gate.set()
        for t in threads:
            t.join(30)
        refused = request(tmp_path / "a.sock", "POST", PATH, {"model": "m", "x": "w" * (4 << 20)})
        a.close_episode("a")
        b.close_episode("b")
    assert answers["a"].status == answers["b"].status == 200
    assert inflight.used == 0 and (2 << 20) < inflight.peak <= 3 << 20
    assert refused.status == 413
    assert refused.json()["error"]["code"] == "request_too_large"
    last = read_log(tmp_path / "a.jsonl")[-2]
    assert last["type"] == "request" and last["truncated"] is True and last["size"] > 4 << 20

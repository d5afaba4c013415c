"""Forwarding through the model proxy to a fake provider on loopback.

Checks: the real key is injected and the sandbox's dummy key dropped; the key
never reaches proxy.jsonl, errors, reprs or the client; SSE is relayed without
buffering; bodies and usage land in proxy.jsonl; upstream failures are recorded
with the right kind.
"""

import asyncio
import base64
import json
import socket
import threading
import time
from http.client import IncompleteRead

import pytest
from aiohttp import web

from harness.config import Budget, Prices
from harness.proxy import DUMMY_API_KEY, HttpUpstream, ModelProxy, Secret, encode_event, join_url, read_log
from harness.proxy.client import request, stream_answer

CANARY = "sk-ant-canary-7f3c9b2e4d1a"
GPT = Prices(input=5, cached=0.5, output=30)
OPUS = Prices(input=5, cached=0.5, output=25)


class FakeProvider:
    """An aiohttp server on 127.0.0.1 imitating provider endpoints; records what it receives."""

    def __init__(self):
        self.seen: list[dict] = []
        self.loop = asyncio.new_event_loop()
        self.port = 0

    async def handle(self, req: web.Request) -> web.StreamResponse:
        raw = await req.read()
        body = json.loads(raw) if raw.startswith(b"{") else None
        self.seen.append({"method": req.method, "path": req.path, "query": req.query_string,
                          "headers": dict(req.headers), "body": body, "raw_len": len(raw)})
        fake_status = req.headers.get("x-fake-status")
        if fake_status:
            return web.json_response({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
                                     status=int(fake_status))
        if req.path == "/echo-headers":
            return web.json_response({"headers": dict(req.headers)})
        if req.path == "/cut":
            resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await resp.prepare(req)
            await resp.write(encode_event({"type": "message_start", "message": {"usage": {"input_tokens": 9}}},
                                          "message_start"))
            await asyncio.sleep(0.05)
            req.transport.abort()
            return resp
        if req.path == "/v1/chat/completions":
            return await self._chat(req, body)
        if req.path.endswith(":streamGenerateContent"):
            resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
            await resp.prepare(req)
            await resp.write(encode_event({"candidates": [{"content": {"parts": [{"text": "ok"}]},
                                                           "finishReason": "STOP"}],
                                           "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 5}}))
            return resp
        if body and body.get("stream"):
            return await self._anthropic_stream(req, body)
        return web.json_response({"id": "msg_1", "type": "message", "content": [{"type": "text", "text": "hi"}],
                                  "usage": {"input_tokens": 100, "cache_read_input_tokens": 300,
                                            "cache_creation_input_tokens": 0, "output_tokens": 20}})

    async def _anthropic_stream(self, req, body):
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(req)
        n, delay = body.get("n", 5), body.get("delay", 0.0)
        await resp.write(encode_event({"type": "message_start", "message": {
            "id": "msg_s", "usage": {"input_tokens": 1000, "cache_read_input_tokens": 3000,
                                     "cache_creation_input_tokens": 500, "output_tokens": 1}}}, "message_start"))
        for i in range(n):
            await asyncio.sleep(delay)
            await resp.write(encode_event({"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": f"part{i} "}},
                                          "content_block_delta"))
        await resp.write(encode_event({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                       "usage": {"output_tokens": 800}}, "message_delta"))
        await resp.write(encode_event({"type": "message_stop"}, "message_stop"))
        return resp

    async def _chat(self, req, body):
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(req)
        for piece in ("4", "2"):
            await resp.write(encode_event({"object": "chat.completion.chunk",
                                           "choices": [{"index": 0, "delta": {"content": piece}}]}))
        await resp.write(encode_event({"object": "chat.completion.chunk", "choices": [], "usage": {
            "prompt_tokens": 5000, "completion_tokens": 1200, "prompt_tokens_details": {"cached_tokens": 4096},
            "completion_tokens_details": {"reasoning_tokens": 900}}}))
        await resp.write(encode_event("[DONE]"))
        return resp

    def start(self):
        app = web.Application(client_max_size=64 * 2**20)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"


@pytest.fixture(scope="module")
def provider():
    fake = FakeProvider().start()
    yield fake
    fake.stop()


@pytest.fixture
def episode(provider, tmp_path):
    """A proxy forwarding with the canary key in the Anthropic scheme; yields (proxy, socket, log)."""
    upstream = HttpUpstream(provider.url, auth="x-api-key", api_key=Secret(CANARY, "ANTHROPIC_API_KEY"),
                            name="anthropic")
    with ModelProxy(upstream, shutdown_timeout=0.5) as proxy:
        sock, log = tmp_path / "proxy.sock", tmp_path / "ep" / "proxy.jsonl"
        proxy.open_episode("ep1", sock, log, OPUS, Budget())
        yield proxy, sock, log


def dummy_headers():
    return {"x-api-key": DUMMY_API_KEY, "anthropic-version": "2023-06-01"}


def test_real_key_injected_and_dummy_dropped(provider, episode):
    proxy, sock, log = episode
    answer = request(sock, "POST", "/v1/messages?beta=true", {"model": "m", "messages": []},
                     {**dummy_headers(), "authorization": f"Bearer {DUMMY_API_KEY}"})
    assert answer.status == 200
    seen = provider.seen[-1]
    assert seen["headers"]["x-api-key"] == CANARY
    assert "Authorization" not in seen["headers"] and "authorization" not in seen["headers"]
    assert seen["headers"]["anthropic-version"] == "2023-06-01"
    assert seen["path"] == "/v1/messages" and seen["query"] == "beta=true"
    assert seen["body"] == {"model": "m", "messages": []}


@pytest.mark.parametrize("auth,header,value", [("bearer", "Authorization", f"Bearer {CANARY}"),
                                               ("x-goog-api-key", "x-goog-api-key", CANARY)])
def test_other_auth_schemes(provider, tmp_path, auth, header, value):
    upstream = HttpUpstream(provider.url, auth=auth, api_key=Secret(CANARY))
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", GPT, Budget())
        path = "/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key=" + DUMMY_API_KEY
        answer = request(tmp_path / "s", "POST", path, {"contents": []}, {"x-goog-api-key": DUMMY_API_KEY})
        assert answer.status == 200
        usage = proxy.close_episode("e")
    seen = provider.seen[-1]
    assert seen["headers"][header] == value
    assert seen["query"] == "alt=sse"  # the sandbox's ?key= never goes upstream
    assert sum(1 for k in seen["headers"] if k.lower() in ("authorization", "x-goog-api-key", "x-api-key")) == 1
    assert (usage.prompt_tokens, usage.completion_tokens) == (50, 5)
    logged = read_log(tmp_path / "p.jsonl")
    assert logged[0]["query"] == "alt=sse"


def test_key_never_written_nor_shown(provider, episode, tmp_path):
    proxy, sock, log = episode
    # the fake echoes every header it got, i.e. the real key: neither the client nor the log may see it
    echo = request(sock, "POST", "/echo-headers", {"x": 1}, dummy_headers())
    assert echo.status == 200
    assert CANARY not in echo.body.decode()
    assert echo.json()["headers"]["x-api-key"] == "[REDACTED]"
    request(sock, "POST", "/v1/messages", {"m": 1}, {**dummy_headers(), "x-fake-status": "500"})
    usage = proxy.close_episode("ep1")
    text = log.read_text()
    assert CANARY not in text
    assert "[REDACTED]" in text
    assert all("x-api-key" not in rec.get("headers", {}) for rec in read_log(log))
    assert CANARY not in repr(usage) and CANARY not in json.dumps(usage.to_dict())
    up = proxy.upstream
    assert CANARY not in repr(up) and CANARY not in str(Secret(CANARY)) and CANARY not in repr(Secret(CANARY))


def test_unreachable_upstream_recorded_without_key(tmp_path):
    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    upstream = HttpUpstream(f"http://127.0.0.1:{port}", auth="x-api-key", api_key=Secret(CANARY), connect_timeout=2)
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", OPUS, Budget())
        answer = request(tmp_path / "s", "POST", "/v1/messages", {"model": "m"}, dummy_headers())
        usage = proxy.close_episode("e")
    assert answer.status == 502
    assert answer.json()["type"] == "error" and answer.json()["error"]["type"] == "api_error"
    assert [e.kind for e in usage.errors] == ["upstream_unreachable"]
    assert usage.errors[0].status is None and usage.errors[0].seq == 1
    assert f"127.0.0.1:{port}" in usage.errors[0].message
    assert CANARY not in usage.errors[0].message and CANARY not in (tmp_path / "p.jsonl").read_text()
    assert usage.n_requests == 1


@pytest.mark.parametrize("status,kind", [(429, "rate_limited"), (503, "upstream_error"), (500, "upstream_error")])
def test_upstream_error_statuses_passed_through_and_recorded(episode, status, kind):
    proxy, sock, log = episode
    answer = request(sock, "POST", "/v1/messages", {"m": 1}, {**dummy_headers(), "x-fake-status": str(status)})
    assert answer.status == status  # the CLI sees the provider's own answer
    assert answer.json()["error"]["type"] == "overloaded_error"
    usage = proxy.usage("ep1")
    assert [(e.kind, e.status) for e in usage.errors] == [(kind, status)]
    assert "overloaded_error" in usage.errors[0].message


def test_not_found_is_not_an_infrastructure_error(episode):
    proxy, sock, _ = episode
    assert request(sock, "POST", "/v1/messages", {}, {**dummy_headers(), "x-fake-status": "404"}).status == 404
    assert proxy.usage("ep1").errors == []


def test_stream_cut_midway_is_an_upstream_error(episode):
    proxy, sock, log = episode
    with pytest.raises((IncompleteRead, ConnectionError)):
        stream_answer(sock, "POST", "/cut", {"stream": True}, dummy_headers())
    usage = _settled(lambda: proxy.usage("ep1"), lambda u: u.errors)
    assert [e.kind for e in usage.errors] == ["upstream_error"]
    assert "stream interrupted" in usage.errors[0].message
    assert usage.prompt_tokens == 9  # what message_start reported is still counted


def test_sse_relayed_without_buffering(episode):
    proxy, sock, log = episode
    t0 = time.monotonic()
    status, headers, pieces = stream_answer(sock, "POST", "/v1/messages",
                                            {"stream": True, "n": 5, "delay": 0.3}, dummy_headers())
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    first, last = pieces[0][0], pieces[-1][0]
    # the upstream spends 5 x 0.3 s producing the stream; the client must see the start long before the end
    # (a buffering proxy would hand over every piece at once, at the end)
    assert first - t0 < last - t0 - 1.2
    assert last - first > 1.2
    assert len({round(t, 1) for t, _ in pieces}) >= 5
    body = b"".join(p for _, p in pieces).decode()
    proxy.close_episode("ep1")
    response = read_log(log)[-1]
    assert response["stream"] is True
    assert response["body"] == body  # the full event text, assembled after the stream ended
    assert response["last_byte_ts"] - response["first_byte_ts"] > 1.2
    # usage split over message_start / message_delta: prompt 1000+3000+500, cached 3000, completion 800
    assert response["usage"] == {"prompt_tokens": 4500, "cached_tokens": 3000, "completion_tokens": 800,
                                 "reasoning_tokens": 0, "total_tokens": 5300}
    assert response["cost_usd"] == pytest.approx(0.029)  # (1500*5 + 3000*0.5 + 800*25)/1e6


def test_log_lines_and_episode_totals(provider, tmp_path):
    upstream = HttpUpstream(provider.url, auth="bearer", api_key=Secret(CANARY))
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", GPT, Budget())
        body = {"model": "gpt-5.5", "stream": True, "stream_options": {"include_usage": True},
                "messages": [{"role": "user", "content": "6*7?"}]}
        for _ in range(2):
            status, _, pieces = stream_answer(tmp_path / "s", "POST", "/v1/chat/completions", body,
                                              {"authorization": f"Bearer {DUMMY_API_KEY}", "user-agent": "opencode"})
            assert status == 200 and b"[DONE]" in b"".join(p for _, p in pieces)
        usage = proxy.close_episode("e")
    records = read_log(tmp_path / "p.jsonl")
    assert [(r["type"], r["seq"]) for r in records] == [("request", 1), ("response", 1), ("request", 2),
                                                        ("response", 2)]
    req, resp = records[0], records[1]
    assert req["method"] == "POST" and req["path"] == "/v1/chat/completions" and req["wire"] == "openai-chat"
    assert req["body"] == body and req["body_encoding"] == "json"
    assert req["headers"] == {"content-type": "application/json", "user-agent": "opencode"}
    assert isinstance(req["ts"], float) and resp["ts"] >= req["ts"]
    assert resp["status"] == 200 and resp["usage"]["cached_tokens"] == 4096
    # per response: (904*5 + 4096*0.5 + 1200*30)/1e6 = 0.042568; two responses
    assert resp["cost_usd"] == pytest.approx(0.042568)
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.reasoning_tokens) == \
        (10000, 8192, 2400, 1800)
    assert usage.total_tokens == 12400
    assert usage.cost_usd == pytest.approx(2 * 0.042568)
    assert usage.n_requests == 2 and usage.budget_exceeded is None and usage.errors == []


def test_large_image_and_binary_bodies_keep_jsonl_valid(provider, episode):
    proxy, sock, log = episode
    image = "iVBORw0KGgo" + "A" * 3_000_000
    body = {"model": "m", "messages": [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {"type": "text", "text": "line\nbreak \u2028 sep"}]}]}
    assert request(sock, "POST", "/v1/messages", body, dummy_headers()).status == 200
    assert provider.seen[-1]["body"] == body
    binary = bytes(range(256)) * 4
    request(sock, "POST", "/upload", binary, {**dummy_headers(), "content-type": "application/octet-stream"})
    proxy.close_episode("ep1")
    lines = log.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == "" and all(json.loads(line) for line in lines[:-1])
    records = read_log(log)
    assert records[0]["body"] == body  # kept whole, not truncated
    assert base64.b64decode(records[2]["body"]) == binary and records[2]["body_encoding"] == "base64"


def test_two_episodes_are_counted_apart(provider, tmp_path):
    upstream = HttpUpstream(provider.url, auth="x-api-key", api_key=Secret(CANARY))
    with ModelProxy(upstream) as proxy:
        for name in ("a", "b"):
            proxy.open_episode(name, tmp_path / f"{name}.sock", tmp_path / name / "proxy.jsonl", OPUS, Budget())
        request(tmp_path / "a.sock", "POST", "/v1/messages", {"m": 1}, dummy_headers())
        for _ in range(2):
            request(tmp_path / "b.sock", "POST", "/v1/messages", {"m": 2}, dummy_headers())
        a, b = proxy.close_episode("a"), proxy.close_episode("b")
    # each non-stream answer: input 100 + cache_read 300 = 400 prompt, 300 cached, 20 completion
    assert (a.n_requests, a.prompt_tokens, a.cached_tokens, a.completion_tokens) == (1, 400, 300, 20)
    assert (b.n_requests, b.prompt_tokens, b.cached_tokens, b.completion_tokens) == (2, 800, 600, 40)
    assert len(read_log(tmp_path / "a" / "proxy.jsonl")) == 2 and len(read_log(tmp_path / "b" / "proxy.jsonl")) == 4
    assert not (tmp_path / "a.sock").exists()


def test_closing_cuts_off_a_stream_in_flight(provider, tmp_path):
    upstream = HttpUpstream(provider.url, auth="x-api-key", api_key=Secret(CANARY))
    with ModelProxy(upstream, shutdown_timeout=0.3) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", OPUS, Budget())
        started = threading.Event()

        def client():  # reads the 10 s stream until it breaks; ``started`` once message_start came through
            raw = json.dumps({"stream": True, "n": 50, "delay": 0.2}).encode()
            got = b""
            try:
                with socket.socket(socket.AF_UNIX) as conn:
                    conn.connect(str(tmp_path / "s"))
                    conn.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(raw)).encode() + b"\r\n\r\n" + raw)
                    while chunk := conn.recv(65536):
                        got += chunk
                        if b"message_start" in got:
                            started.set()
            except OSError:  # the client sees a broken stream
                pass

        thread = threading.Thread(target=client)
        thread.start()
        assert started.wait(15)  # message_start has reached the client, so the proxy has counted it
        t0 = time.monotonic()
        usage = proxy.close_episode("e")
        assert time.monotonic() - t0 < 5
        thread.join(10)
    records = read_log(tmp_path / "p.jsonl")
    assert records[-1]["type"] == "response" and "cut_off" in records[-1]
    assert usage.prompt_tokens == 4500  # message_start had arrived
    assert usage.errors == []  # closing the episode is not an upstream failure


def test_open_episode_validation(tmp_path):
    upstream = HttpUpstream("http://127.0.0.1:9", auth="none")
    with ModelProxy(upstream) as proxy:
        with pytest.raises(ValueError, match="107-byte limit"):
            proxy.open_episode("e", tmp_path / ("x" * 120), tmp_path / "p.jsonl", OPUS, Budget())
        (tmp_path / "file").write_text("x")
        with pytest.raises(ValueError, match="not a socket"):
            proxy.open_episode("e", tmp_path / "file", tmp_path / "p.jsonl", OPUS, Budget())
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", OPUS, Budget())
        with pytest.raises(ValueError, match="already open"):
            proxy.open_episode("e", tmp_path / "s2", tmp_path / "p2.jsonl", OPUS, Budget())
        assert oct((tmp_path / "s").stat().st_mode & 0o777) == oct(0o666)
        proxy.close_episode("e")
        with pytest.raises(KeyError, match="not open"):
            proxy.close_episode("e")
    with pytest.raises(RuntimeError, match="not running"):
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", OPUS, Budget())


def test_join_url():
    assert join_url("https://api.anthropic.com", "/v1/messages", "beta=true") == \
        "https://api.anthropic.com/v1/messages?beta=true"
    assert join_url("https://openrouter.ai/api", "/v1/chat/completions") == \
        "https://openrouter.ai/api/v1/chat/completions"
    assert join_url("https://host/v1/", "/v1/chat/completions") == "https://host/v1/chat/completions"
    assert join_url("https://g.example", "/v1beta/models/m:streamGenerateContent", "alt=sse&key=abc") == \
        "https://g.example/v1beta/models/m:streamGenerateContent?alt=sse"
    assert join_url("https://g.example/v1beta", "/v1beta/models/m:generateContent", "key=abc") == \
        "https://g.example/v1beta/models/m:generateContent"


def test_client_going_away_mid_stream_is_not_an_upstream_error(episode):
    proxy, sock, log = episode
    raw = json.dumps({"stream": True, "n": 100, "delay": 0.1}).encode()  # 10 s, if read to the end
    with socket.socket(socket.AF_UNIX) as client:
        client.connect(str(sock))
        client.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       b"Content-Length: " + str(len(raw)).encode() + b"\r\n\r\n" + raw)
        got = b""
        while b"message_start" not in got:
            got += client.recv(65536)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and len(read_log(log)) < 2:
        time.sleep(0.1)
    response = read_log(log)[-1]
    assert response["type"] == "response" and response["client_disconnected"] is True
    assert response["last_byte_ts"] - response["first_byte_ts"] < 5  # stopped reading the upstream early
    usage = proxy.usage("ep1")
    assert usage.errors == [] and usage.prompt_tokens == 4500


def _settled(read, done, seconds: float = 15.0):
    """``read()`` once ``done(read())`` holds (polled; the proxy records asynchronously), else its last value."""
    deadline = time.monotonic() + seconds
    value = read()
    while not done(value) and time.monotonic() < deadline:
        time.sleep(0.05)
        value = read()
    return value

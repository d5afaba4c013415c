"""A real API key on the host reaches the provider and nothing else.

The Claude Code agent runs in the Docker sandbox against the ``custom`` provider
backend, pointed at a local fake provider (the scripted model behind a real HTTP
server on the host's loopback), so the proxy injects the host's key on the way
out exactly as with a real provider.  Positive control: the fake provider sees
the canary key.  Then: the CLI, scanning its own environment and every readable
file, finds it nowhere; and it appears in no file of the run directory
(proxy.jsonl, run.json, results, trajectory, logs).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

from tests.support.terminal_e2e import e2e_marks, task_file
from aiohttp import web

from harness.config import RunSettings
from harness.proxy import UpstreamRequest, detect_wire
from harness.experiment import Unit
from harness.profiles import resolve_profile
from harness.run import execute, load_task
from harness.store import RunStore
from tsagent_plugins.models.scripted import ScriptedUpstream
from tests.support.paths import TESTS

pytestmark = e2e_marks

CANARY = "sk-ant-canary-" + "5f3c9e0a7d1b4c2e8f6a"
SCRIPT = TESTS / "fixtures" / "scripts" / "secrets" / "claude-scan.yaml"


class FakeProvider:
    """The scripted model behind a loopback HTTP server; records the keys it was sent."""

    def __init__(self, script: Path):
        self.upstream = ScriptedUpstream(script)
        self.keys: list[str] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.keys.append(request.headers.get("x-api-key", ""))
        req = UpstreamRequest("fake", request.method, request.path, request.query_string,
                              {k.lower(): v for k, v in request.headers.items()}, await request.read(),
                              detect_wire(request.path))
        answer = await self.upstream.handle(req)
        response = web.StreamResponse(status=answer.status, headers=answer.headers)
        await response.prepare(request)
        async for chunk in answer.chunks:
            await response.write(chunk)
        await response.write_eof()
        return response

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]
        self._ready.set()
        self._loop.run_forever()

    def __enter__(self):
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def test_host_key_reaches_the_provider_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    with FakeProvider(SCRIPT) as provider:
        profile = resolve_profile("claude-opus-4.6").model_copy(update={
            "provider": "custom", "base_url": f"http://127.0.0.1:{provider.port}"})
        task = load_task(task_file(tmp_path, "direct"))
        store = RunStore.create(tmp_path / "run")
        settings = RunSettings(sandbox="docker", episode_timeout=240, infra_retries=0)
        rows = execute([Unit(task, profile, None)], store, settings, model_backend="custom",
                       model_options={"auth": "x-api-key", "api_key_env": "ANTHROPIC_API_KEY"})
    (row,) = rows
    assert provider.keys and set(provider.keys) == {CANARY}, "positive control: the provider gets the real key"
    assert row["status"] == "ok", row
    stdout = (store.root / "episodes" / row["episode"] / "agent.stdout").read_text()
    assert "SCAN-DONE" in stdout
    hits = {m.group(1): int(m.group(2)) for m in re.finditer(r"(ENV|FILE)-HITS (\d+)", stdout)}
    assert hits == {"ENV": 0, "FILE": 0}, "the key is readable inside the sandbox"
    run = json.loads((store.root / "run.json").read_text())
    assert run["agents"] == {"claude-code": "2.1.96"}
    details = run["sandbox_details"]["docker"]
    assert details["image"].startswith("harness-agent:") and details["image_id"]
    leaked = [p for p in store.root.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    assert leaked == [], f"the key was written to {leaked}"

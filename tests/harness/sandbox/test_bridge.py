"""The proxy bridge: TCP on the sandbox's loopback -> the model proxy's Unix socket.

A small aiohttp server on a host Unix socket stands in for the model proxy.
Its ``/stream`` response sends ``first``, then waits until ``/release`` is
requested before sending ``last``: a client only gets ``last`` if it saw
``first`` before the response ended, i.e. if nothing on the way buffered the
stream (the server gives up after 10 s and sends ``late`` instead).
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
from pathlib import Path

import pytest
from tests.support.sandbox import get_backend
from aiohttp import web

from harness.contracts.sandbox import SandboxSpec
from harness.sandbox import bridge

CLIENT = textwrap.dedent(r'''
    import concurrent.futures, json, socket, sys
    port = int(sys.argv[1])

    def get(path):
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(f"GET {path} HTTP/1.0\r\nHost: proxy\r\n\r\n".encode())
        return s

    def body(s):
        data = b""
        while chunk := s.recv(4096):
            data += chunk
        return data.split(b"\r\n\r\n", 1)[1].decode()

    stream, seen = get("/stream"), b""
    while b"first" not in seen:
        chunk = stream.recv(100)
        if not chunk:
            break
        seen += chunk
    first_early = b"first" in seen and b"last" not in seen and b"late" not in seen
    released = body(get("/release"))
    while chunk := stream.recv(4096):
        seen += chunk
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        echoes = list(pool.map(lambda i: body(get(f"/echo?i={i}")), range(40)))
    print(json.dumps({"first_early": first_early, "stream": seen.split(b"\r\n\r\n", 1)[1].decode(),
                      "released": released, "echo_ok": echoes == [f"echo:{i}" for i in range(40)]}))
''')


class FakeProxy:
    """aiohttp app on a Unix socket, run on its own thread."""

    def __init__(self, path: Path):
        self.path = path
        self.loop = asyncio.new_event_loop()
        self.release: asyncio.Event | None = None
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    async def _stream(self, request):
        resp = web.StreamResponse()
        await resp.prepare(request)
        await resp.write(b"first\n")
        try:
            await asyncio.wait_for(self.release.wait(), 10)
            await resp.write(b"last\n")
        except TimeoutError:
            await resp.write(b"late\n")
        self.release.clear()
        await resp.write_eof()
        return resp

    async def _release(self, request):
        self.release.set()
        return web.Response(text="released")

    async def _echo(self, request):
        return web.Response(text=f"echo:{request.query.get('i', '')}")

    async def _upload(self, request):
        return web.Response(text=str(len(await request.read())))

    def _run(self):
        asyncio.set_event_loop(self.loop)
        self.release = asyncio.Event()
        app = web.Application(client_max_size=64 << 20)
        app.router.add_get("/stream", self._stream)
        app.router.add_get("/release", self._release)
        app.router.add_get("/echo", self._echo)
        app.router.add_post("/upload", self._upload)
        self.runner = web.AppRunner(app)
        self.loop.run_until_complete(self.runner.setup())
        self.loop.run_until_complete(web.UnixSite(self.runner, str(self.path)).start())
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self):
        self.thread.start()
        assert self.ready.wait(10)
        return self

    def __exit__(self, *exc):
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def proxy():
    d = Path(tempfile.mkdtemp(prefix="hpx-", dir="/tmp"))  # short path: Unix socket names are limited
    with FakeProxy(d / "proxy.sock") as p:
        yield p
    shutil.rmtree(d, ignore_errors=True)


def _client(port: int) -> dict:
    r = subprocess.run([sys.executable, "-c", CLIENT, str(port)], check=False, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


EXPECTED = {"first_early": True, "stream": "first\nlast\n", "released": "released", "echo_ok": True}


def test_bridge_thread_streams_and_serves_concurrent_connections(proxy):
    b = bridge.BridgeThread(str(proxy.path), bridge.listen_socket("127.0.0.1", 0)).start(wait=10)
    try:
        assert _client(b.port) == EXPECTED
        # a large request body goes through intact (back-pressure, no truncation)
        body = b"x" * (8 << 20)
        with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
            s.sendall(b"POST /upload HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
        assert reply.endswith(str(len(body)).encode())
    finally:
        b.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", b.port), timeout=2)


def test_bridge_passes_a_half_close_on_and_imports_no_asyncio(tmp_path):
    path = Path(tempfile.mkdtemp(prefix="hpx-", dir="/tmp")) / "echo.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)

    def answer_after_eof():  # reads until the client half-closes, then answers with what it got, reversed
        conn, _ = server.accept()
        with conn:
            got = b""
            while chunk := conn.recv(4096):
                got += chunk
            conn.sendall(got[::-1])

    thread = threading.Thread(target=answer_after_eof, daemon=True)
    thread.start()
    b = bridge.BridgeThread(str(path), bridge.listen_socket("127.0.0.1", 0)).start(wait=10)
    try:
        with socket.create_connection(("127.0.0.1", b.port), timeout=30) as s:
            s.sendall(b"x" * 100_000 + b"end")
            s.shutdown(socket.SHUT_WR)  # the client is done sending: the answer still comes back whole
            reply = b""
            while chunk := s.recv(65536):
                reply += chunk
        assert reply == b"dne" + b"x" * 100_000
    finally:
        b.stop()
        server.close()
        shutil.rmtree(path.parent, ignore_errors=True)
    # one selector thread, no asyncio: its import cost 80 ms of CPU at the start of every sandbox
    probe = subprocess.run([sys.executable, "-S", "-c", "import sys; import harness.sandbox.bridge; "
                            "print('asyncio' in sys.modules)"], capture_output=True, text=True, check=True,
                           cwd=Path(bridge.__file__).parents[2])
    assert probe.stdout.strip() == "False"


def test_bridge_closes_client_when_proxy_is_down(tmp_path):
    missing = tmp_path / "nobody.sock"
    b = bridge.BridgeThread(str(missing), bridge.listen_socket("127.0.0.1", 0)).start(wait=10)
    try:
        try:  # the bridge resets the connection: seen at the connect, the send or the read, as timing has it
            with socket.create_connection(("127.0.0.1", b.port), timeout=5) as s:
                s.sendall(b"GET / HTTP/1.0\r\n\r\n")
                assert s.recv(10) == b""
        except ConnectionResetError:
            pass
    finally:
        b.stop()


def test_bridge_command_line(proxy):
    p = subprocess.Popen([sys.executable, "-m", "harness.sandbox.bridge", "--listen", "127.0.0.1:0",
                          "--unix", str(proxy.path)], stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()
        port = int(re.search(r"127\.0\.0\.1:(\d+) ->", line).group(1))
        assert _client(port) == EXPECTED
    finally:
        p.kill()
        p.wait()
    bad = subprocess.run([sys.executable, "-m", "harness.sandbox.bridge", "--listen", "nonsense",
                          "--unix", str(proxy.path)], check=False, capture_output=True, text=True)
    assert bad.returncode == 2 and "HOST:PORT" in bad.stderr


@pytest.mark.parametrize("name", ["bubblewrap", "unshare", "none"])
def test_sandboxed_command_reaches_proxy_only_through_bridge(name, proxy, tmp_path):
    backend = get_backend(name)
    ws = tmp_path / "ws"
    ws.mkdir()
    port = 18765 if name == "none" else 8765  # the none backend binds on the host's loopback
    with backend.create(SandboxSpec(workspace=ws, proxy_socket=proxy.path, proxy_port=port)) as sb:
        r = sb.exec(["python", "-c", CLIENT, str(port)], timeout=60)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout) == EXPECTED
        if name != "none":
            seen = sb.exec(["sh", "-c", "ls -l /run/harness/proxy.sock && test -S /run/harness/proxy.sock"])
            assert seen.returncode == 0, seen.stderr
    if name != "none":  # without a proxy socket nothing listens inside
        with backend.create(SandboxSpec(workspace=ws)) as sb:
            r = sb.exec(["python", "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}))"])
        assert r.returncode == 1 and "ConnectionRefusedError" in r.stderr

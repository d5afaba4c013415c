"""Shared pieces of the Docker tests: engine probe, the small test image, a Unix-socket HTTP proxy."""

from __future__ import annotations

import json
import os
import socketserver
import textwrap
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from harness.contracts.sandbox import SandboxSpec
from harness.sandbox.docker import DockerBackend
from harness.sandbox.docker_engine import LABEL_EPISODE, LABEL_RUN, DockerSandboxError, connect, no_engine_reason


def engine_client():
    """A client for the engine, or None when no engine answers."""
    try:
        return connect(timeout=10)
    except DockerSandboxError:
        return None


_probe = engine_client()
ENGINE = _probe is not None
if _probe is not None:
    _probe.close()

#: Apply to every Docker test module: marked ``docker``, skipped with the reason when no engine answers.
docker_marks = [pytest.mark.docker, pytest.mark.skipif(not ENGINE, reason=no_engine_reason())]


@pytest.fixture(scope="session")
def client():
    c = engine_client()
    if c is None:
        pytest.skip(no_engine_reason())
    yield c
    c.close()


@pytest.fixture(scope="session")
def test_image(client):
    """The bootstrapped Debian trixie base (python3, procps, tmux, ...): built once, cached by hash."""
    from harness.image.bootstrap import ensure_base_image

    return ensure_base_image(client, log=lambda line: None)


class UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class ProxyHandler(BaseHTTPRequestHandler):
    """Answers every request with JSON describing it (method, path, body, one header)."""

    def _answer(self):
        size = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(size).decode() if size else ""
        payload = json.dumps({"method": self.command, "path": self.path, "body": body,
                              "x_test": self.headers.get("X-Test"), "via": "unix-proxy"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = _answer

    def address_string(self):  # Unix peers have no host/port
        return "unix"

    def log_message(self, *args):
        pass


class UnixProxy:
    """A tiny HTTP server on a host Unix socket (stand-in for the model proxy)."""

    def __init__(self, folder: Path):
        self.path = folder / "proxy.sock"
        self.server = UnixHTTPServer(str(self.path), ProxyHandler)
        os.chmod(self.path, 0o600)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


@pytest.fixture
def run_id():
    return f"test-{uuid.uuid4().hex[:10]}"


@pytest.fixture
def dirs(tmp_path):
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws, home


@pytest.fixture
def make_sandbox(test_image, dirs, run_id):
    made = []

    def make(**kw):
        ws, home = dirs
        kw.setdefault("workspace", ws)
        kw.setdefault("home", home)
        kw.setdefault("labels", {LABEL_RUN: run_id, LABEL_EPISODE: f"ep-{len(made)}"})
        box = DockerBackend(image=test_image).create(SandboxSpec(**kw))
        made.append(box)
        return box

    yield make
    for box in made:
        box.destroy()


def py(code: str) -> list[str]:
    return ["python3", "-c", textwrap.dedent(code)]

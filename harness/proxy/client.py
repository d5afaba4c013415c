"""A small synchronous HTTP client over a Unix socket (health checks, tests, tools).

:func:`request` returns the whole answer; :func:`stream_answer` records each
piece of the body with its arrival time, which is how "no buffering" is checked.  Standard library only.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class UnixHTTPConnection(http.client.HTTPConnection):
    """``http.client`` connection to the HTTP server listening on ``socket_path``."""

    def __init__(self, socket_path: Path | str, timeout: float = 30.0):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = str(socket_path)

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


@dataclass
class ProxyReply:
    """A complete HTTP answer."""

    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def _send(socket_path: Path | str, method: str, path: str, body: Any, headers: dict[str, str] | None,
          timeout: float) -> tuple[UnixHTTPConnection, http.client.HTTPResponse]:
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    hdrs = {"content-type": "application/json", **(headers or {})}
    conn = UnixHTTPConnection(socket_path, timeout=timeout)
    conn.request(method, path, body=data, headers=hdrs)
    return conn, conn.getresponse()


def request(socket_path: Path | str, method: str, path: str, body: Any = None,
            headers: dict[str, str] | None = None, timeout: float = 30.0) -> ProxyReply:
    """Send one request (a dict/list ``body`` is sent as JSON) and read the whole answer."""
    conn, resp = _send(socket_path, method, path, body, headers, timeout)
    try:
        return ProxyReply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def stream_answer(socket_path: Path | str, method: str, path: str, body: Any = None,
                  headers: dict[str, str] | None = None,
                  timeout: float = 30.0) -> tuple[int, dict[str, str], list[tuple[float, bytes]]]:
    """``(status, headers, [(arrival_time, piece), ...])`` of a streamed answer (monotonic times)."""
    conn, resp = _send(socket_path, method, path, body, headers, timeout)
    pieces: list[tuple[float, bytes]] = []
    try:
        while True:
            piece = resp.read1(65536)
            if not piece:
                break
            pieces.append((time.monotonic(), piece))
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, pieces
    finally:
        conn.close()

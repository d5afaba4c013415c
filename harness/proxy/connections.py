"""Bounded connections at the model proxy, and the harness's own open-file limit.

An agent can open connections to its episode's proxy socket as fast as it likes (10,000 is a loop of five
lines).  Each connection the proxy accepts is an open file of the harness process, and a harness out of
open files can no longer write results.  So:

* each episode's socket serves at most :data:`DEFAULT_PER_EPISODE` connections at once
  (``RunSettings.proxy_connections``); a connection over the cap is answered ``503`` with a one-line JSON
  error and closed at once, so it holds no file for longer than the answer takes;
* all the proxies of the process together hold at most the soft ``RLIMIT_NOFILE`` minus
  :data:`RESERVE_FILES` connections: the reserve stays for the run's own files (rows, ``results.parquet``,
  sandboxes, logs), whatever the agents do;
* :func:`raise_open_files` raises the soft open-file limit to the hard one when a run starts (the common
  default soft limit is 1,024 while the hard one is often far higher).
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable

#: Connections one episode's proxy socket serves at once.  A CLI agent keeps a handful (a model stream, a
#: title or token-count call, sub-agents); 64 leaves room for parallel tool-driven sub-agents.
DEFAULT_PER_EPISODE = 64
#: Open files the harness keeps for itself below the soft limit: never given to proxied connections.
RESERVE_FILES = 256

_open_total = 0
_total_lock = threading.Lock()


def raise_open_files() -> tuple[int, int]:
    """Raise the soft ``RLIMIT_NOFILE`` to the hard limit (idempotent); returns ``(soft, hard)`` after."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):  # a kernel cap (nr_open) under the hard limit: keep what we have
            pass
    return soft, hard


def process_budget() -> int:
    """Connections all proxies of this process may hold at once: the soft open-file limit minus
    :data:`RESERVE_FILES` (at least 16)."""
    import resource

    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if soft == resource.RLIM_INFINITY:
        soft = 1 << 20
    return max(16, soft - RESERVE_FILES)


class ConnectionCap:
    """A protocol factory wrapper (for ``loop.create_unix_server``) serving at most ``limit`` connections at
    once and, with the other caps of the process, at most :func:`process_budget`; ``refused`` counts the
    connections turned away."""

    def __init__(self, factory: Callable[[], asyncio.BaseProtocol], limit: int = DEFAULT_PER_EPISODE):
        self.factory, self.limit = factory, limit
        self.open = self.refused = 0

    def __call__(self) -> asyncio.BaseProtocol:
        global _open_total
        with _total_lock:
            full = self.open >= self.limit or _open_total >= process_budget()
            if not full:
                self.open += 1
                _open_total += 1
        if full:
            self.refused += 1
            return _Refuse(self.limit)
        return _Counted(self.factory(), self._release)

    def _release(self) -> None:
        global _open_total
        with _total_lock:
            self.open -= 1
            _open_total -= 1


class _Counted(asyncio.Protocol):
    """The server's protocol, telling the cap when its connection ends."""

    def __init__(self, inner: Any, release: Callable[[], None]):
        self._inner, self._release, self._released = inner, release, False

    def connection_made(self, transport: Any) -> None:
        self._inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self._inner.connection_lost(exc)
        finally:
            if not self._released:
                self._released = True
                self._release()

    def data_received(self, data: bytes) -> None:
        self._inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self._inner.eof_received()

    def pause_writing(self) -> None:
        self._inner.pause_writing()

    def resume_writing(self) -> None:
        self._inner.resume_writing()


class _Refuse(asyncio.Protocol):
    """Answer 503 (one line of JSON) and close: a connection over the cap."""

    def __init__(self, limit: int):
        self.limit = limit

    def connection_made(self, transport: Any) -> None:
        body = json.dumps({"error": {"type": "too_many_connections", "message": (
            f"model proxy: this episode already has {self.limit} open connections (the cap); close one "
            "and retry")}}).encode()
        transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
                        b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        transport.close()

"""The upstream interface: what a :class:`harness.contracts.ModelBackend` builds.

``ModelBackend.upstream(options)`` returns an :class:`Upstream`.  The proxy
calls :meth:`Upstream.handle` on its event loop for every request of every
episode, with the request exactly as the sandbox sent it (dummy key included);
the upstream answers with a status, headers and an async iterator of body
chunks, which the proxy passes to the sandbox as they come.

Two kinds exist: :class:`harness.proxy.http.HttpUpstream` forwards to a
provider and injects the host's key; a script backend answers in-process.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from harness.errors import HarnessError

if TYPE_CHECKING:  # the wire formats load with the first request: a plugin reading DUMMY_API_KEY needs none
    from harness.proxy.wire import Wire

#: Key given to agents inside the sandbox; the proxy replaces it upstream.
DUMMY_API_KEY = "sk-harness-dummy"

#: Host environment variables that may hold real provider keys.
KEY_ENV_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")

#: Request headers that carry credentials (never logged, replaced upstream).
AUTH_HEADERS = ("authorization", "x-api-key", "x-goog-api-key", "api-key", "proxy-authorization", "cookie")


class UpstreamUnreachable(ConnectionError):
    """The upstream could not be reached (refused, DNS, connect timeout, reset before a status)."""


class UpstreamConfigError(HarnessError, ValueError):
    """A model backend's options are unusable; the message names the option."""


class MissingApiKey(UpstreamConfigError):
    """No key for a provider in the host environment; names the variables, never a value."""


class Secret:
    """A credential whose ``str``/``repr`` never show the value; :meth:`reveal` does."""

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str = ""):
        if not value:
            raise ValueError("empty secret")
        self._value = value
        self.source = source

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Secret(source={self.source!r})"

    __str__ = __repr__

    def __reduce__(self):
        raise TypeError("a Secret cannot be pickled")


@dataclass
class UpstreamRequest:
    """One request from the sandbox.

    ``path``: URL path (e.g. ``/v1/messages``); ``query``: raw query string
    without ``?``; ``headers``: as sent (names lower-cased); ``body``: raw bytes;
    ``wire``: see :mod:`harness.proxy.wire`.  ``body_file``: a large body spooled to disk
    (:mod:`harness.proxy.spool`; ``body`` is then empty), a binary file at its start, valid during
    ``handle``: stream it, or take the bytes with :meth:`read_body` / :meth:`json`.
    """

    episode_id: str
    method: str
    path: str
    query: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    body: bytes = field(default=b"", repr=False)
    wire: Wire | None = None
    body_file: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.headers = {k.lower(): v for k, v in self.headers.items()}
        if self.wire is None:
            from harness.proxy.wire import detect_wire

            self.wire = detect_wire(self.path)
        self._json: Any = ...

    def json(self) -> Any:
        """The body parsed as JSON (None when empty or not JSON)."""
        if self._json is ...:
            try:
                body = self.read_body()
                self._json = json.loads(body) if body else None
            except ValueError:
                self._json = None
        return self._json

    def read_body(self) -> bytes:
        """The body's bytes, read from ``body_file`` when it was spooled (all of it in memory)."""
        if self.body_file is None:
            return self.body
        self.body_file.seek(0)
        data = self.body_file.read()
        self.body_file.seek(0)
        return data

    def body_size(self) -> int:
        """The body's length in bytes, spooled or not."""
        if self.body_file is None:
            return len(self.body)
        return os.fstat(self.body_file.fileno()).st_size

    def query_params(self) -> dict[str, str]:
        return dict(parse_qsl(self.query, keep_blank_values=True))

    def credential(self) -> str | None:
        """The API key the client sent (any of the usual headers, or ``?key=``)."""
        for name in ("x-api-key", "x-goog-api-key", "api-key", "authorization"):
            value = self.headers.get(name)
            if value:
                return value[7:].strip() if value.lower().startswith("bearer ") else value.strip()
        return self.query_params().get("key")


async def _once(data: bytes) -> AsyncIterator[bytes]:
    if data:
        yield data


@dataclass
class UpstreamResponse:
    """An upstream's answer.  ``chunks`` yields the body as it is produced.

    ``release`` (optional) is awaited once the proxy is done with the body,
    even when the client went away.  ``assertion_failure`` is set by script
    upstreams when a script's expectation about the request failed.
    """

    status: int
    headers: dict[str, str]
    chunks: AsyncIterator[bytes]
    release: Callable[[], Awaitable[None]] | None = None
    assertion_failure: str | None = None

    @classmethod
    def json(cls, status: int, body: Any, headers: Mapping[str, str] | None = None,
             assertion_failure: str | None = None) -> UpstreamResponse:
        data = json.dumps(body, ensure_ascii=False).encode()
        return cls(status, {"content-type": "application/json", **(headers or {})}, _once(data),
                   assertion_failure=assertion_failure)

    @classmethod
    def sse(cls, frames: AsyncIterator[bytes] | Iterable[bytes], status: int = 200) -> UpstreamResponse:
        """A ``text/event-stream`` answer from encoded frames (see :func:`harness.proxy.sse.encode_event`)."""
        if not hasattr(frames, "__aiter__"):
            frames = _aiter(list(frames))  # type: ignore[arg-type]
        return cls(status, {"content-type": "text/event-stream", "cache-control": "no-cache"}, frames)  # type: ignore[arg-type]


async def _aiter(items: list[bytes]) -> AsyncIterator[bytes]:
    for item in items:
        yield item


class Upstream(ABC):
    """Where one run's requests go.  All methods run on the proxy's event loop.

    Subclasses implement :meth:`handle`; the rest are optional hooks.
    """

    name: str = "upstream"

    def secrets(self) -> list[str]:
        """Strings the proxy must scrub from everything it writes (e.g. the API key)."""
        return []

    async def startup(self) -> None:  # noqa: B027 - optional hook
        """Called once on the proxy loop before the first request (open client sessions here)."""

    async def shutdown(self) -> None:  # noqa: B027 - optional hook
        """Called once when the proxy stops."""

    def open_episode(self, episode_id: str) -> None:  # noqa: B027 - optional hook
        """An episode starts (script upstreams reset their turn counter)."""

    def close_episode(self, episode_id: str) -> None:  # noqa: B027 - optional hook
        """An episode ends."""

    @abstractmethod
    async def handle(self, request: UpstreamRequest) -> UpstreamResponse:
        """Answer one request; raise :class:`UpstreamUnreachable` when the upstream cannot be reached."""


__all__ = [
    "AUTH_HEADERS", "DUMMY_API_KEY", "KEY_ENV_VARS", "MissingApiKey", "Secret", "Upstream",
    "UpstreamConfigError", "UpstreamRequest", "UpstreamResponse", "UpstreamUnreachable",
]

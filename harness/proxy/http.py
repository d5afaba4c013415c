"""Forwarding upstream: sends each request to a provider's base URL with the host's key.

The sandbox's own credential headers (its dummy key) and any ``key=`` query
parameter are dropped; the real key, read from the host environment when the
upstream is built, is added in the provider's scheme:

==================  =========================================
``x-api-key``       Anthropic (``ANTHROPIC_API_KEY``)
``bearer``          OpenAI, OpenRouter, most compatible servers
``x-goog-api-key``  Gemini (``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``)
``none``            local servers that want no key
==================  =========================================

The key is held in a :class:`~harness.proxy.upstream.Secret` and listed in
:meth:`HttpUpstream.secrets` so the proxy scrubs it from anything it writes.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Sequence
from typing import Literal
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from harness.proxy.upstream import (
    AUTH_HEADERS,
    MissingApiKey,
    Secret,
    Upstream,
    UpstreamConfigError,
    UpstreamRequest,
    UpstreamResponse,
    UpstreamUnreachable,
)

AuthScheme = Literal["x-api-key", "bearer", "x-goog-api-key", "none"]
AUTH_SCHEMES: dict[str, tuple[str, str]] = {
    "x-api-key": ("x-api-key", ""),
    "bearer": ("authorization", "Bearer "),
    "x-goog-api-key": ("x-goog-api-key", ""),
}

#: Hop-by-hop and framing headers never copied between the two connections.
HOP_HEADERS = frozenset({
    "host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
    "upgrade", "content-length", "content-encoding", "accept-encoding",
})

_VERSION_SEGMENT = re.compile(r"^v\d+((alpha|beta)\d*)?$")


def key_from_env(names: Sequence[str], provider: str) -> Secret:
    """The first non-empty host variable among ``names``; :class:`MissingApiKey` naming them otherwise."""
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return Secret(value, source=name)
    raise MissingApiKey(f"model backend {provider!r} needs an API key: set {' or '.join(names)} "
                        "in the host environment (it stays on the host; the sandbox gets a dummy key)")


def join_url(base_url: str, path: str, query: str = "") -> str:
    """``base_url`` + request ``path`` (+ query, with any ``key=`` parameter removed).

    A version segment present at both ends is kept once, so a base URL given
    as ``https://host/v1`` and a request for ``/v1/chat/completions`` meet at
    ``https://host/v1/chat/completions``.
    """
    base = base_url.rstrip("/")
    base_last = base.rsplit("/", 1)[-1]
    first = path.lstrip("/").split("/", 1)[0]
    if urlsplit(base).path and base_last == first and _VERSION_SEGMENT.match(first):
        path = path[len(first) + 1:]
    kept = [p for p in query.split("&") if p and not p.startswith("key=")]
    return base + path + ("?" + "&".join(kept) if kept else "")


class HttpUpstream(Upstream):
    """Forward to ``base_url`` (scheme + host [+ path prefix]) with ``auth`` and ``api_key``.

    ``connect_timeout``/``read_timeout`` are seconds (the read timeout is per
    chunk, so long streams are fine as long as bytes keep coming).
    Raises :class:`UpstreamConfigError` for a malformed URL or a missing key.
    """

    def __init__(self, base_url: str, *, auth: AuthScheme = "bearer", api_key: Secret | None = None,
                 name: str = "http", connect_timeout: float = 30.0, read_timeout: float = 900.0):
        parts = urlsplit(base_url or "")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UpstreamConfigError(f"model backend {name!r}: options.base_url must be an http(s) URL, "
                                      f"got {base_url!r}")
        if auth not in (*AUTH_SCHEMES, "none"):
            raise UpstreamConfigError(f"model backend {name!r}: options.auth must be one of "
                                      f"{', '.join([*AUTH_SCHEMES, 'none'])}, got {auth!r}")
        if auth != "none" and api_key is None:
            raise UpstreamConfigError(f"model backend {name!r}: auth {auth!r} needs an API key")
        self.name = name
        self.base_url = base_url
        self.auth = auth
        self._key = api_key
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=connect_timeout, sock_read=read_timeout)
        self._session: aiohttp.ClientSession | None = None

    def __repr__(self) -> str:
        return f"HttpUpstream(name={self.name!r}, base_url={self.base_url!r}, auth={self.auth!r})"

    def secrets(self) -> list[str]:
        return [self._key.reveal()] if self._key else []

    async def startup(self) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self._timeout, auto_decompress=True)

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def outgoing_headers(self, request: UpstreamRequest) -> dict[str, str]:
        """The sandbox's headers minus hop-by-hop and credential headers, plus the real key."""
        headers = {k: v for k, v in request.headers.items() if k not in HOP_HEADERS and k not in AUTH_HEADERS}
        if self._key is not None:
            name, prefix = AUTH_SCHEMES[self.auth]
            headers[name] = prefix + self._key.reveal()
        return headers

    async def handle(self, request: UpstreamRequest) -> UpstreamResponse:
        await self.startup()
        assert self._session is not None
        url = URL(join_url(self.base_url, request.path, request.query), encoded=True)
        try:
            body = request.body_file if request.body_file is not None else (request.body or None)  # a spooled
            # body is streamed from its file (harness.proxy.spool)
            resp = await self._session.request(request.method, url, headers=self.outgoing_headers(request),
                                               data=body, allow_redirects=False)
        except (TimeoutError, aiohttp.ClientConnectionError, OSError) as exc:
            raise UpstreamUnreachable(f"{type(exc).__name__}: {exc or 'timed out'} ({self.name} at "
                                      f"{url.scheme}://{url.host}:{url.port})") from None
        headers = {k.lower(): v for k, v in resp.headers.items() if k.lower() not in HOP_HEADERS
                   and k.lower() != "set-cookie"}

        async def chunks() -> AsyncIterator[bytes]:
            async for data in resp.content.iter_any():
                yield data

        async def release() -> None:
            resp.release()

        return UpstreamResponse(resp.status, headers, chunks(), release=release)

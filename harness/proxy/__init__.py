"""The model proxy: the sandbox's only way out (README.md, "What it is": loopback only, no API key inside).

One proxy per run, running a background thread with its own asyncio loop;
each episode is served on its own Unix socket (bind-mounted into the sandbox,
where a bridge exposes it as ``http://127.0.0.1:<port>``)::

    from harness.proxy import ModelProxy
    from harness.config import Prices, Budget

    upstream = plugins.get("model_backend", "anthropic").upstream({})
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("ep-1", run_dir / "ep-1/proxy.sock", run_dir / "ep-1/proxy.jsonl.zst",
                           Prices(input=5, cached=0.5, output=25), Budget(max_cost_usd=2.0))
        ...  # run the agent; its CLI talks to the socket
        usage = proxy.close_episode("ep-1")    # EpisodeUsage

API
---
``ModelProxy(upstream: Upstream, *, shutdown_timeout=2.0)``
    ``start() -> ModelProxy``, ``stop()``, context manager.
``ModelProxy.open_episode(episode_id, socket_path, log_path, prices, budget, upstream=None) -> None``
    Listen on ``socket_path`` (mode 0666, at most 107 bytes), log to
    ``log_path``; ``upstream`` overrides the run's upstream for this episode.
``ModelProxy.close_episode(episode_id) -> EpisodeUsage``
    Stop serving; normalised token totals, ``cost_usd`` (the token-cost formula),
    ``n_requests``, ``n_refused``, ``budget_exceeded`` (cap name or None),
    ``errors`` (:class:`ProxyError`: ``upstream_unreachable`` | ``rate_limited``
    | ``upstream_error``) and ``assertion_failures`` (script backends).
``ModelProxy.usage(episode_id) -> EpisodeUsage``
    Live snapshot of an open episode.

Every request, on any path, is forwarded to the upstream and the answer is
relayed chunk by chunk (SSE is never buffered).  Each request and response
body is appended to the episode's log (``proxy.jsonl.zst``, compressed; see :mod:`harness.proxy.log`), usage is
normalised per wire format (:mod:`harness.proxy.wire`) and priced, and the
episode's :class:`harness.config.Budget` caps are enforced
(:mod:`harness.proxy.accounting`): a request after a cap is answered with HTTP
400 in the provider's error format (never 429/5xx, which CLIs retry).  An
unreachable upstream is answered with 502 and recorded.

Upstreams
---------
``ModelBackend.upstream(options)`` (:mod:`harness.contracts.model`) returns an
:class:`Upstream` — an object with ``async handle(UpstreamRequest) ->
UpstreamResponse`` plus optional ``startup``/``shutdown``/``open_episode``/
``close_episode``/``secrets`` hooks (:mod:`harness.proxy.upstream`).
:class:`HttpUpstream` forwards to a provider base URL and injects the host's
key (``x-api-key``, ``Authorization: Bearer`` or ``x-goog-api-key``),
replacing the sandbox's dummy key (:data:`DUMMY_API_KEY`); the key is held in
a :class:`Secret` and scrubbed from everything the proxy writes.  A
script backend answers offline from a script.
"""

from __future__ import annotations

import importlib

#: name -> module; resolved on first access (PEP 562) so that importing one part of the proxy
#: (say, its usage arithmetic) does not load the server and aiohttp.
_EXPORTS = {
    'EpisodeUsage': 'harness.proxy.accounting',
    'ProxyError': 'harness.proxy.accounting',
    'HttpUpstream': 'harness.proxy.http',
    'join_url': 'harness.proxy.http',
    'key_from_env': 'harness.proxy.http',
    'ProxyLogWriter': 'harness.proxy.log',
    'ProxyRecords': 'harness.proxy_records',
    'load_log': 'harness.proxy_records',
    'read_log': 'harness.proxy_records',
    'ModelProxy': 'harness.proxy.server',
    'SSEEvent': 'harness.proxy.sse',
    'SSEParser': 'harness.proxy.sse',
    'encode_event': 'harness.proxy.sse',
    'parse_sse': 'harness.proxy.sse',
    'DUMMY_API_KEY': 'harness.proxy.upstream',
    'KEY_ENV_VARS': 'harness.proxy.upstream',
    'MissingApiKey': 'harness.proxy.upstream',
    'Secret': 'harness.proxy.upstream',
    'Upstream': 'harness.proxy.upstream',
    'UpstreamConfigError': 'harness.proxy.upstream',
    'UpstreamRequest': 'harness.proxy.upstream',
    'UpstreamResponse': 'harness.proxy.upstream',
    'UpstreamUnreachable': 'harness.proxy.upstream',
    'Usage': 'harness.proxy.usage',
    'StreamUsage': 'harness.proxy.wire',
    'usage_from_body': 'harness.proxy.wire',
    'usage_from_sse': 'harness.proxy.wire',
    'Wire': 'harness.proxy.wire',
    'WireFormat': 'harness.proxy.wire',
    'detect_wire': 'harness.proxy.wire',
    'error_body': 'harness.proxy.wire',
    'register_wire_format': 'harness.proxy.wire',
}

__all__ = [
    "DUMMY_API_KEY", "KEY_ENV_VARS", "EpisodeUsage", "HttpUpstream", "MissingApiKey", "ModelProxy", "ProxyError",
    "ProxyLogWriter", "ProxyRecords", "SSEEvent", "SSEParser", "Secret", "StreamUsage", "Upstream", "UpstreamConfigError",
    "UpstreamRequest", "UpstreamResponse", "UpstreamUnreachable", "Usage", "Wire", "WireFormat",
    "detect_wire",
    "encode_event", "error_body", "join_url", "key_from_env", "parse_sse", "load_log", "read_log", "usage_from_body",
    "usage_from_sse", "register_wire_format",
]


def __getattr__(name: str):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'harness.proxy' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

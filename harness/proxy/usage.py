"""Token usage normalised across providers (prompt incl. cached, completion incl. reasoning).

Every response's usage becomes one :class:`Usage` with

* ``prompt_tokens``: all input tokens, cached ones included;
* ``cached_tokens``: input tokens served from the provider's prompt cache;
* ``completion_tokens``: all output tokens, reasoning ones included;
* ``reasoning_tokens``: the reasoning ("thinking") share of ``completion_tokens``,
  0 where the provider does not report it separately.

Providers count differently; each rule below is tested:

=====================  =====================================================================
Anthropic Messages     ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and
                       ``cache_creation_input_tokens``: prompt = input + cache_read +
                       cache_creation, cached = cache_read; thinking is inside
                       ``output_tokens`` and not broken out (reasoning = 0).  Streaming:
                       ``message_start`` then ``message_delta`` carry cumulative counts.
OpenAI Chat            ``prompt_tokens`` includes ``prompt_tokens_details.cached_tokens``;
                       ``completion_tokens`` includes
                       ``completion_tokens_details.reasoning_tokens``.  Streaming: the
                       last chunk (``stream_options.include_usage``).
OpenAI Responses       ``input_tokens`` includes ``input_tokens_details.cached_tokens``;
                       ``output_tokens`` includes ``output_tokens_details.reasoning_tokens``.
                       Streaming: ``response.completed`` (or ``.incomplete``/``.failed``).
Gemini                 ``promptTokenCount`` includes ``cachedContentTokenCount``;
                       ``candidatesTokenCount`` EXCLUDES ``thoughtsTokenCount``: completion =
                       candidates + thoughts; ``toolUsePromptTokenCount`` (input read by
                       built-in tools) is added to the prompt.  Streaming: the last chunk
                       with ``usageMetadata``.
=====================  =====================================================================

Cost per response is :meth:`harness.config.Prices.cost` (the token-cost formula).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from harness.proxy.sse import SSEEvent, parse_sse
from harness.proxy.wire import Wire


@dataclass(frozen=True)
class Usage:
    """Normalised token counts of one response (or a sum of responses)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens (G.3 "Total tokens")."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.cached_tokens + other.cached_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.reasoning_tokens + other.reasoning_tokens)

    def cost(self, prices: Any) -> float:
        """USD by the token-cost formula at ``prices`` (a :class:`harness.config.Prices`)."""
        return prices.cost(self.prompt_tokens, self.cached_tokens, self.completion_tokens)

    def to_dict(self) -> dict[str, int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


def _n(mapping: Any, *keys: str) -> int:
    """Integer at a nested key path; 0 when absent, null or not a number."""
    cur = mapping
    for key in keys:
        if not isinstance(cur, dict):
            return 0
        cur = cur.get(key)
    if isinstance(cur, bool) or not isinstance(cur, (int, float)):
        return 0
    return int(cur)


def from_anthropic(u: dict) -> Usage:
    """Anthropic ``usage``: prompt = input + cache_read + cache_creation."""
    cached = _n(u, "cache_read_input_tokens")
    prompt = _n(u, "input_tokens") + cached + _n(u, "cache_creation_input_tokens")
    return Usage(prompt, cached, _n(u, "output_tokens"), 0)


def from_openai_chat(u: dict) -> Usage:
    """Chat Completions ``usage`` (OpenAI, OpenRouter and compatible servers)."""
    cached = _n(u, "prompt_tokens_details", "cached_tokens") or _n(u, "prompt_cache_hit_tokens")
    return Usage(_n(u, "prompt_tokens"), cached, _n(u, "completion_tokens"),
                 _n(u, "completion_tokens_details", "reasoning_tokens"))


def from_openai_responses(u: dict) -> Usage:
    """Responses API ``usage``."""
    return Usage(_n(u, "input_tokens"), _n(u, "input_tokens_details", "cached_tokens"),
                 _n(u, "output_tokens"), _n(u, "output_tokens_details", "reasoning_tokens"))


def from_gemini(u: dict) -> Usage:
    """Gemini ``usageMetadata``: completion = candidates + thoughts."""
    thoughts = _n(u, "thoughtsTokenCount")
    return Usage(_n(u, "promptTokenCount") + _n(u, "toolUsePromptTokenCount"), _n(u, "cachedContentTokenCount"),
                 _n(u, "candidatesTokenCount") + thoughts, thoughts)


def _shape(obj: Any) -> Wire:
    """Guess the wire format of one response object or stream event."""
    if not isinstance(obj, dict):
        return "unknown"
    kind = obj.get("type")
    if isinstance(kind, str):
        if kind.startswith("message") or kind.startswith("content_block") or kind == "ping":
            return "anthropic"
        if kind.startswith("response."):
            return "openai-responses"
    if "usageMetadata" in obj or "candidates" in obj:
        return "gemini"
    if obj.get("object") == "response":
        return "openai-responses"
    if "choices" in obj or str(obj.get("object", "")).startswith("chat.completion"):
        return "openai-chat"
    if obj.get("object") == "list" and isinstance(obj.get("usage"), dict) and "prompt_tokens" in obj["usage"]:
        return "openai-chat"  # OpenAI-compatible embeddings: usage {prompt_tokens, total_tokens}
    if isinstance(obj.get("usage"), dict) and "input_tokens" in obj["usage"]:
        return "openai-responses" if "input_tokens_details" in obj["usage"] else "anthropic"
    return "unknown"


def usage_from_body(body: Any, wire: Wire = "unknown") -> Usage | None:
    """Usage of a non-streamed response body (parsed JSON), or None when it has none.

    A Gemini ``streamGenerateContent`` answer without ``alt=sse`` is a JSON array
    of chunks: its last ``usageMetadata`` counts.
    """
    if isinstance(body, list):
        acc = StreamUsage(wire if wire != "unknown" else "gemini")
        for item in body:
            acc.feed_object(item)
        return acc.result()
    if not isinstance(body, dict):
        return None
    if wire == "unknown":
        wire = _shape(body)
    if wire == "gemini":
        meta = body.get("usageMetadata")
        return from_gemini(meta) if isinstance(meta, dict) else None
    usage = body.get("usage")
    if wire == "openai-responses" and not isinstance(usage, dict) and isinstance(body.get("response"), dict):
        usage = body["response"].get("usage")
    if not isinstance(usage, dict):
        return None
    return {"anthropic": from_anthropic, "openai-chat": from_openai_chat,
            "openai-responses": from_openai_responses}.get(wire, lambda _u: None)(usage)


class StreamUsage:
    """Accumulates usage over a streamed response's events; :meth:`result` at the end."""

    def __init__(self, wire: Wire = "unknown"):
        self.wire: Wire = wire
        self._anthropic: dict[str, int] = {}
        self._last: Usage | None = None

    def feed(self, event: SSEEvent) -> None:
        """One SSE event (non-JSON data such as ``[DONE]`` is ignored)."""
        obj = event.json()
        if obj is not None:
            self.feed_object(obj)

    def feed_object(self, obj: Any) -> None:
        """One parsed event payload / stream chunk."""
        if not isinstance(obj, dict):
            return
        wire = self.wire if self.wire != "unknown" else _shape(obj)
        if wire == "unknown":
            return
        if self.wire == "unknown":
            self.wire = wire
        if wire == "anthropic":
            kind = obj.get("type")
            usage = (obj.get("message") or {}).get("usage") if kind == "message_start" else obj.get("usage")
            if isinstance(usage, dict):
                # counts are cumulative: keep the largest value seen per field
                for key, value in usage.items():
                    if isinstance(value, (int, float)) and not isinstance(value, bool):
                        self._anthropic[key] = max(self._anthropic.get(key, 0), int(value))
                self._last = from_anthropic(self._anthropic)
        elif wire == "openai-chat":
            if isinstance(obj.get("usage"), dict):
                self._last = from_openai_chat(obj["usage"])
        elif wire == "openai-responses":
            response = obj.get("response")
            if isinstance(response, dict) and isinstance(response.get("usage"), dict):
                self._last = from_openai_responses(response["usage"])
        elif wire == "gemini":
            if isinstance(obj.get("usageMetadata"), dict):
                self._last = from_gemini(obj["usageMetadata"])

    def result(self) -> Usage | None:
        """The response's usage, or None when no event carried any."""
        return self._last


def usage_from_sse(payload: bytes | str, wire: Wire = "unknown") -> Usage | None:
    """Usage of a complete SSE stream."""
    acc = StreamUsage(wire)
    for event in parse_sse(payload):
        acc.feed(event)
    return acc.result()


def usage_from_text(payload: bytes | str, wire: Wire = "unknown", stream: bool = False) -> Usage | None:
    """Usage of a raw response body: SSE when ``stream``, else JSON."""
    if stream:
        return usage_from_sse(payload, wire)
    try:
        return usage_from_body(json.loads(payload), wire)
    except ValueError:
        return None

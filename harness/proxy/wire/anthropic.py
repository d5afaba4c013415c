"""Anthropic Messages: ``POST /v1/messages`` (``?beta=true`` too).

=================  ======================================================================================
request            ``system`` + ``messages[].content`` blocks; console output: ``tool_result`` blocks
usage              ``input_tokens`` EXCLUDES ``cache_read_input_tokens`` and ``cache_creation_input_tokens``:
                   prompt = input + cache_read + cache_creation, cached = cache_read; thinking is inside
                   ``output_tokens`` and not broken out (reasoning = 0)
stream             ``message_start`` then ``message_delta`` carry cumulative counts (the largest value seen
                   per field counts)
error              ``{"type": "error", "error": {"type": <status's error type>, "message"}}``
=================  ======================================================================================
"""

from __future__ import annotations

from typing import Any

from harness.proxy.usage import Usage, count
from harness.proxy.wire.base import Block, ToolSpec, UsageStream, WireFormat, string_leaves
from harness.proxy.wire.messages import messages_blocks, messages_user_texts

_ERROR_TYPE = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
               404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
               500: "api_error", 502: "api_error", 503: "api_error", 529: "overloaded_error"}


def from_anthropic(u: dict) -> Usage:
    """Anthropic ``usage``: prompt = input + cache_read + cache_creation."""
    cached = count(u, "cache_read_input_tokens")
    prompt = count(u, "input_tokens") + cached + count(u, "cache_creation_input_tokens")
    return Usage(prompt, cached, count(u, "output_tokens"), 0)


class _CumulativeUsage(UsageStream):
    """Counts are cumulative over ``message_start`` and ``message_delta``: the largest value per field."""

    def __init__(self, fmt: WireFormat):
        super().__init__(fmt)
        self._fields: dict[str, int] = {}

    def feed(self, obj: dict) -> None:
        kind = obj.get("type")
        usage = (obj.get("message") or {}).get("usage") if kind == "message_start" else obj.get("usage")
        if isinstance(usage, dict):
            for key, value in usage.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    self._fields[key] = max(self._fields.get(key, 0), int(value))
            self._last = from_anthropic(self._fields)


class AnthropicMessages(WireFormat):
    name = "anthropic"
    completion_keys = ("messages",)
    side_paths = ("/count_tokens",)

    def matches_path(self, path: str) -> bool:
        return path.endswith("/messages") and "/models/" not in path

    def request_rank(self, body: Any) -> int | None:
        return 2 if isinstance(body, dict) and "messages" in body and "system" in body else None

    def response_rank(self, obj: Any) -> int | None:
        if not isinstance(obj, dict):
            return None
        kind = obj.get("type")
        if isinstance(kind, str) and (kind.startswith("message") or kind.startswith("content_block")
                                      or kind == "ping"):
            return 0
        usage = obj.get("usage")
        if isinstance(usage, dict) and "input_tokens" in usage and "input_tokens_details" not in usage:
            return 4
        return None

    def context_blocks(self, body: dict, memo: dict) -> list[Block]:
        return list(messages_blocks(body, memo))

    def user_messages(self, body: dict) -> list[str]:
        return messages_user_texts(body)

    def conversation(self, body: dict) -> list[Any]:
        return [body.get("system"), body.get("messages")]

    def tool_results(self, body: dict) -> list[str]:
        out: list[str] = []
        for m in body.get("messages") or []:
            content = m.get("content") if isinstance(m, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append("\n".join(string_leaves(block.get("content"))))
        return out

    def tools(self, body: dict) -> list[ToolSpec]:
        return [ToolSpec(t["name"], t.get("input_schema")) for t in body.get("tools") or []
                if isinstance(t, dict) and isinstance(t.get("name"), str)]

    def reasoning_effort(self, body: dict) -> str | None:
        for holder in (body.get("output_config"), body.get("thinking"), body):
            if isinstance(holder, dict) and isinstance(holder.get("effort"), str):
                return holder["effort"].lower()
        return None

    def usage(self, body: dict) -> Usage | None:
        usage = body.get("usage")
        return from_anthropic(usage) if isinstance(usage, dict) else None

    def stream_usage(self) -> UsageStream:
        return _CumulativeUsage(self)

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        return {"input_tokens": usage.prompt_tokens - usage.cached_tokens, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": usage.cached_tokens, "output_tokens": usage.completion_tokens}

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return {"type": "error", "error": {"type": _ERROR_TYPE.get(status, "api_error"), "message": message}}

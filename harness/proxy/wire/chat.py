"""OpenAI Chat Completions: ``POST /v1/chat/completions`` (also OpenRouter and compatible servers).

=================  ======================================================================================
request            ``messages``; console output: ``role: "tool"`` (and legacy ``"function"``) messages
usage              ``prompt_tokens`` includes ``prompt_tokens_details.cached_tokens`` (or DeepSeek's
                   ``prompt_cache_hit_tokens``); ``completion_tokens`` includes
                   ``completion_tokens_details.reasoning_tokens``
stream             the last chunk carrying ``usage`` (``stream_options.include_usage``)
error              ``{"error": {message, type, param, code}}``
=================  ======================================================================================
"""

from __future__ import annotations

from typing import Any

from harness.proxy.usage import Usage, count
from harness.proxy.wire.base import Block, ToolSpec, WireFormat, string_leaves
from harness.proxy.wire.messages import messages_blocks, messages_user_texts


def from_openai_chat(u: dict) -> Usage:
    """Chat Completions ``usage`` (OpenAI, OpenRouter and compatible servers)."""
    cached = count(u, "prompt_tokens_details", "cached_tokens") or count(u, "prompt_cache_hit_tokens")
    return Usage(count(u, "prompt_tokens"), cached, count(u, "completion_tokens"),
                 count(u, "completion_tokens_details", "reasoning_tokens"))


class OpenAIChat(WireFormat):
    name = "openai-chat"
    completion_keys = ("messages",)

    def matches_path(self, path: str) -> bool:
        return path.endswith("/chat/completions")

    def request_rank(self, body: Any) -> int | None:
        return 3 if isinstance(body, dict) and "messages" in body else None

    def response_rank(self, obj: Any) -> int | None:
        if not isinstance(obj, dict):
            return None
        if "choices" in obj or str(obj.get("object", "")).startswith("chat.completion"):
            return 3
        if obj.get("object") == "list" and isinstance(obj.get("usage"), dict) and "prompt_tokens" in obj["usage"]:
            return 3  # OpenAI-compatible embeddings: usage {prompt_tokens, total_tokens}
        return None

    def context_blocks(self, body: dict, memo: dict) -> list[Block]:
        return list(messages_blocks(body, memo))

    def user_messages(self, body: dict) -> list[str]:
        return messages_user_texts(body)

    def conversation(self, body: dict) -> list[Any]:
        return [body.get("messages")]

    def tool_results(self, body: dict) -> list[str]:
        return ["\n".join(string_leaves(m.get("content"))) for m in body.get("messages") or []
                if isinstance(m, dict) and m.get("role") == "tool"]

    def tools(self, body: dict) -> list[ToolSpec]:
        out = []
        for tool in body.get("tools") or []:
            fn = tool.get("function") if isinstance(tool, dict) else None
            if isinstance(fn, dict) and isinstance(fn.get("name"), str):
                out.append(ToolSpec(fn["name"], fn.get("parameters")))
        return out

    def reasoning_effort(self, body: dict) -> str | None:
        value = body.get("reasoning_effort")
        if not isinstance(value, str) and isinstance(body.get("reasoning"), dict):
            value = body["reasoning"].get("effort")
        return value.lower() if isinstance(value, str) else None

    def response_schema(self, body: dict) -> tuple[bool, dict | None]:
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
            spec = fmt.get("json_schema")
            return True, spec.get("schema") if isinstance(spec, dict) else None
        return False, None

    def usage(self, body: dict) -> Usage | None:
        usage = body.get("usage")
        return from_openai_chat(usage) if isinstance(usage, dict) else None

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.total_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens}}

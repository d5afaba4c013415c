"""OpenAI Responses: ``POST /v1/responses``.

=================  ======================================================================================
request            ``instructions`` + ``input`` items; console output: ``function_call_output`` /
                   ``custom_tool_call_output`` / ``local_shell_call_output`` items
usage              ``input_tokens`` includes ``input_tokens_details.cached_tokens``; ``output_tokens``
                   includes ``output_tokens_details.reasoning_tokens``
stream             ``response.completed`` (or ``.incomplete``/``.failed``): the event's ``response.usage``
error              ``{"error": {message, type, param, code}}``
=================  ======================================================================================
"""

from __future__ import annotations

from typing import Any, Iterator

from harness.proxy.usage import Usage, count
from harness.proxy.wire.base import Block, ToolSpec, WireFormat, json_text, message_text, parts_text, string_leaves

_OUTPUTS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")


def from_openai_responses(u: dict) -> Usage:
    """Responses API ``usage``."""
    return Usage(count(u, "input_tokens"), count(u, "input_tokens_details", "cached_tokens"),
                 count(u, "output_tokens"), count(u, "output_tokens_details", "reasoning_tokens"))


def _blocks(body: dict) -> Iterator[Block]:
    for text in parts_text(body.get("instructions")):
        yield text, False
    items = body.get("input")
    if isinstance(items, str):
        yield items, False
        return
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind in _OUTPUTS:
            output = item.get("output")
            for text in parts_text(output) if not isinstance(output, dict) else [json_text(output)]:
                yield text, True
        elif kind == "message":
            for text in parts_text(item.get("content")):
                yield text, False
        elif kind == "function_call":
            yield str(item.get("name", "")) + str(item.get("arguments", "")), False
        elif kind == "custom_tool_call":
            yield str(item.get("name", "")) + str(item.get("input", "")), False
        elif kind == "local_shell_call":
            yield json_text(item.get("action", {})), False
        elif kind == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"], False


class OpenAIResponses(WireFormat):
    name = "openai-responses"
    completion_keys = ("input",)

    def matches_path(self, path: str) -> bool:
        return path.endswith("/responses")

    def request_rank(self, body: Any) -> int | None:
        return 1 if isinstance(body, dict) and "input" in body else None

    def response_rank(self, obj: Any) -> int | None:
        if not isinstance(obj, dict):
            return None
        kind = obj.get("type")
        if isinstance(kind, str) and kind.startswith("response."):
            return 0
        if obj.get("object") == "response":
            return 2
        usage = obj.get("usage")
        if isinstance(usage, dict) and "input_tokens" in usage and "input_tokens_details" in usage:
            return 4
        return None

    def context_blocks(self, body: dict, memo: dict) -> list[Block]:
        return list(_blocks(body))

    def user_messages(self, body: dict) -> list[str]:
        items = body.get("input")
        if isinstance(items, str):
            return [items]
        out: list[str] = []
        for item in items or []:
            if isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message":
                text = message_text(item.get("content"))
                if text:
                    out.append(text)
        return out

    def conversation(self, body: dict) -> list[Any]:
        return [body.get("instructions"), body.get("input")]

    def tool_results(self, body: dict) -> list[str]:
        items = body.get("input")
        return ["\n".join(string_leaves(item.get("output"))) for item in (items if isinstance(items, list) else [])
                if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output")]

    def tools(self, body: dict) -> list[ToolSpec]:
        out = []
        for tool in body.get("tools") or []:
            if not isinstance(tool, dict):
                continue
            kind = tool.get("type")
            if kind == "local_shell":
                out.append(ToolSpec("local_shell", None, "local_shell"))
            elif kind == "custom" and isinstance(tool.get("name"), str):
                out.append(ToolSpec(tool["name"], None, "custom"))
            elif isinstance(tool.get("name"), str):
                out.append(ToolSpec(tool["name"], tool.get("parameters")))
        return out

    def reasoning_effort(self, body: dict) -> str | None:
        reasoning = body.get("reasoning")
        value = reasoning.get("effort") if isinstance(reasoning, dict) else None
        return value.lower() if isinstance(value, str) else None

    def response_schema(self, body: dict) -> tuple[bool, dict | None]:
        fmt = (body.get("text") or {}).get("format") if isinstance(body.get("text"), dict) else None
        if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
            return True, fmt.get("schema")
        return False, None

    def usage(self, body: dict) -> Usage | None:
        usage = body.get("usage")
        if not isinstance(usage, dict) and isinstance(body.get("response"), dict):
            usage = body["response"].get("usage")
        return from_openai_responses(usage) if isinstance(usage, dict) else None

    def event_usage(self, obj: dict) -> Usage | None:
        response = obj.get("response")
        if isinstance(response, dict) and isinstance(response.get("usage"), dict):
            return from_openai_responses(response["usage"])
        return None

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        return {"input_tokens": usage.prompt_tokens, "input_tokens_details": {"cached_tokens": usage.cached_tokens},
                "output_tokens": usage.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                "total_tokens": usage.total_tokens}

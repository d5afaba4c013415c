"""Gemini: ``/v1beta/models/{model}:generateContent`` and ``:streamGenerateContent`` (``?alt=sse`` or a JSON
array of chunks).

=================  ======================================================================================
request            ``systemInstruction`` + ``contents[].parts``; console output: ``functionResponse`` parts
                   (the ``output``/``result``/``content`` string, else the JSON response); the model is in
                   the path
usage              ``promptTokenCount`` includes ``cachedContentTokenCount``; ``candidatesTokenCount``
                   EXCLUDES ``thoughtsTokenCount``: completion = candidates + thoughts;
                   ``toolUsePromptTokenCount`` (input read by built-in tools) is added to the prompt
stream             the last chunk with ``usageMetadata``
error              ``{"error": {code, message, status: <Google status name>}}``
=================  ======================================================================================
"""

from __future__ import annotations

import re
from typing import Any, Iterator

from harness.proxy.usage import Usage, count
from harness.proxy.wire.base import Block, ToolSpec, WireFormat, json_text, string_leaves

_PATH = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")

_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
           404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE",
           503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def gemini_target(path: str) -> tuple[str, bool] | None:
    """``(model, streaming)`` of a Gemini generate path, or None."""
    m = _PATH.search(path.rstrip("/"))
    if not m:
        return None
    return m.group("model"), m.group("method") == "streamGenerateContent"


def from_gemini(u: dict) -> Usage:
    """Gemini ``usageMetadata``: completion = candidates + thoughts."""
    thoughts = count(u, "thoughtsTokenCount")
    return Usage(count(u, "promptTokenCount") + count(u, "toolUsePromptTokenCount"),
                 count(u, "cachedContentTokenCount"), count(u, "candidatesTokenCount") + thoughts, thoughts)


def _blocks(body: dict) -> Iterator[Block]:
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        for part in system.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"], False
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                yield part["text"], False
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                yield str(call.get("name", "")) + json_text(call.get("args", {})), False
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                text = None
                if isinstance(response, dict):
                    for key in ("output", "result", "content"):
                        if isinstance(response.get(key), str):
                            text = response[key]
                            break
                yield (text if text is not None else json_text(response)), True


class Gemini(WireFormat):
    name = "gemini"
    completion_keys = ("contents",)
    side_paths = (":countTokens",)
    array_stream = True

    def matches_path(self, path: str) -> bool:
        return _PATH.search(path) is not None

    def request_rank(self, body: Any) -> int | None:
        return 0 if isinstance(body, dict) and "contents" in body else None

    def response_rank(self, obj: Any) -> int | None:
        return 1 if isinstance(obj, dict) and ("usageMetadata" in obj or "candidates" in obj) else None

    def model(self, path: str, body: Any) -> str | None:
        target = gemini_target(path)
        return super().model(path, body) or (target[0] if target else None)

    def is_stream(self, path: str, body: Any) -> bool:
        target = gemini_target(path)
        return bool(target and target[1])

    def context_blocks(self, body: dict, memo: dict) -> list[Block]:
        return list(_blocks(body))

    def user_messages(self, body: dict) -> list[str]:
        out: list[str] = []
        for content in body.get("contents") or []:
            if isinstance(content, dict) and content.get("role") == "user":
                parts = content.get("parts") or []
                text = "\n".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
                if text:
                    out.append(text)
        return out

    def conversation(self, body: dict) -> list[Any]:
        return [body.get("systemInstruction") or body.get("system_instruction"), body.get("contents")]

    def tool_results(self, body: dict) -> list[str]:
        out: list[str] = []
        for content in body.get("contents") or []:
            for part in (content.get("parts") or [] if isinstance(content, dict) else []):
                if isinstance(part, dict) and "functionResponse" in part:
                    out.append("\n".join(string_leaves(part["functionResponse"].get("response"))))
        return out

    def tools(self, body: dict) -> list[ToolSpec]:
        out = []
        for tool in body.get("tools") or []:
            for decl in (tool.get("functionDeclarations") or tool.get("function_declarations") or []
                         if isinstance(tool, dict) else []):
                if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                    schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                    out.append(ToolSpec(decl["name"], _lower_types(schema)))
        return out

    def reasoning_effort(self, body: dict) -> str | None:
        config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
        value = config.get("thinkingLevel")
        return value.lower() if isinstance(value, str) else None

    def forced_tool(self, body: dict) -> tuple[bool, str | None]:
        config = ((body.get("toolConfig") or body.get("tool_config") or {}).get("functionCallingConfig") or {})
        if str(config.get("mode", "")).upper() == "ANY":
            names = config.get("allowedFunctionNames") or []
            return True, names[0] if len(names) == 1 else None
        return False, None

    def response_schema(self, body: dict) -> tuple[bool, dict | None]:
        config = body.get("generationConfig") or {}
        schema = config.get("responseJsonSchema") or config.get("responseSchema")
        if config.get("responseMimeType") == "application/json" or schema:
            return True, schema
        return False, None

    def usage(self, body: dict) -> Usage | None:
        meta = body.get("usageMetadata")
        return from_gemini(meta) if isinstance(meta, dict) else None

    def reasoning_text(self, events: list[Any]) -> str:
        """The text of the ``thought: true`` parts of every candidate."""
        out = []
        for event in events:
            for candidate in (event.get("candidates") or []) if isinstance(event, dict) else []:
                for part in ((candidate or {}).get("content") or {}).get("parts") or []:
                    if isinstance(part, dict) and part.get("thought") and isinstance(part.get("text"), str):
                        out.append(part["text"])
        return "".join(out)

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        meta = {"promptTokenCount": usage.prompt_tokens,
                "candidatesTokenCount": usage.completion_tokens - usage.reasoning_tokens,
                "totalTokenCount": usage.total_tokens}
        if usage.cached_tokens:
            meta["cachedContentTokenCount"] = usage.cached_tokens
        if usage.reasoning_tokens:
            meta["thoughtsTokenCount"] = usage.reasoning_tokens
        return meta

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": _STATUS.get(status, "UNKNOWN")}}


def _lower_types(schema: Any) -> Any:
    """Gemini schemas may spell types in upper case (``STRING``); normalise for argument building."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema

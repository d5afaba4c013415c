"""Gemini ``generateContent`` / ``streamGenerateContent`` (``?alt=sse`` or a JSON array).

The model comes from the path (``/v1beta/models/{model}:...``).  Thoughts are
parts with ``thought: true``; tool calls are ``functionCall`` parts.  The last
(or only) chunk carries ``finishReason`` (Gemini CLI loops asking the model to
continue without one) and ``usageMetadata`` written the Gemini way:
``candidatesTokenCount`` excludes ``thoughtsTokenCount``.
"""

from __future__ import annotations

from typing import Any

from harness import UpstreamRequest, Usage, encode_event
from harness import gemini_target
from tsagent_plugins.models.wire.base import Reply, ToolSpec, WireFormat, pieces, string_leaves


class GeminiWire(WireFormat):
    name = "gemini"

    def is_stream(self, request: UpstreamRequest, body: dict) -> bool:
        target = gemini_target(request.path)
        return bool(target and target[1])

    def is_sse(self, request: UpstreamRequest) -> bool:
        return request.query_params().get("alt") == "sse"

    def model(self, request: UpstreamRequest, body: dict) -> str | None:
        target = gemini_target(request.path)
        return target[0] if target else None

    def tools(self, body: dict) -> list[ToolSpec]:
        out = []
        for tool in body.get("tools") or []:
            for decl in (tool.get("functionDeclarations") or tool.get("function_declarations") or []
                         if isinstance(tool, dict) else []):
                if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                    schema = decl.get("parametersJsonSchema") or decl.get("parameters")
                    out.append(ToolSpec(decl["name"], _lower_types(schema)))
        return out

    def conversation(self, body: dict) -> list[Any]:
        return [body.get("systemInstruction") or body.get("system_instruction"), body.get("contents")]

    def last_tool_result(self, body: dict) -> str | None:
        for content in reversed(body.get("contents") or []):
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in reversed(parts or []):
                if isinstance(part, dict) and "functionResponse" in part:
                    return "\n".join(string_leaves(part["functionResponse"].get("response")))
        return None

    def reasoning_effort(self, body: dict) -> str | None:
        config = (body.get("generationConfig") or {}).get("thinkingConfig") or {}
        value = config.get("thinkingLevel")
        return value.lower() if isinstance(value, str) else None

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        meta = {"promptTokenCount": usage.prompt_tokens,
                "candidatesTokenCount": usage.completion_tokens - usage.reasoning_tokens,
                "totalTokenCount": usage.total_tokens}
        if usage.cached_tokens:
            meta["cachedContentTokenCount"] = usage.cached_tokens
        if usage.reasoning_tokens:
            meta["thoughtsTokenCount"] = usage.reasoning_tokens
        return meta

    def _parts(self, reply: Reply) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if reply.reasoning:
            parts.append({"text": reply.reasoning, "thought": True})
        if reply.text or not reply.calls:
            parts.append({"text": reply.text or ""})
        for call in reply.calls:
            fc: dict[str, Any] = {"name": call.name, "args": call.arguments}
            parts.append({"functionCall": fc})
        return parts

    def _chunk(self, reply: Reply, parts: list, final: bool) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        out: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply.model, "responseId": reply.id}
        if final:
            candidate["finishReason"] = reply.stop_reason or "STOP"
            out["usageMetadata"] = self.native_usage(reply.usage)
        return out

    def render_json(self, reply: Reply) -> Any:
        return self._chunk(reply, self._parts(reply), final=True)

    def stream_chunks(self, reply: Reply) -> list[dict[str, Any]]:
        """The chunks of a streamed answer; the last one carries finishReason and usage."""
        groups: list[list[dict[str, Any]]] = []
        if reply.reasoning:
            groups += [[{"text": p, "thought": True}] for p in pieces(reply.reasoning, reply.chunk_size)]
        if reply.text:
            groups += [[{"text": p}] for p in pieces(reply.text, reply.chunk_size)]
        calls = [part for part in self._parts(reply) if "functionCall" in part]
        if calls:
            groups.append(calls)
        if not groups:
            groups.append([{"text": ""}])
        return [self._chunk(reply, g, final=i == len(groups) - 1) for i, g in enumerate(groups)]

    def render_stream(self, reply: Reply, request: UpstreamRequest, body: dict) -> list[bytes]:
        return [encode_event(chunk) for chunk in self.stream_chunks(reply)]


def _lower_types(schema: Any) -> Any:
    """Gemini schemas may spell types in upper case (``STRING``); normalise for argument building."""
    if isinstance(schema, dict):
        return {k: (v.lower() if k == "type" and isinstance(v, str) else _lower_types(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_lower_types(v) for v in schema]
    return schema

"""Gemini ``generateContent`` / ``streamGenerateContent`` (``?alt=sse`` or a JSON array).

The model comes from the path (``/v1beta/models/{model}:...``).  Thoughts are
parts with ``thought: true``; tool calls are ``functionCall`` parts.  The last
(or only) chunk carries ``finishReason`` (Gemini CLI loops asking the model to
continue without one) and ``usageMetadata`` written the Gemini way:
``candidatesTokenCount`` excludes ``thoughtsTokenCount``.
"""

from __future__ import annotations

from typing import Any

from harness.wire import UpstreamRequest, encode_event
from harness.wire import gemini_target
from tsagent_plugins.models.wire.base import Reply, ReplyFormat, pieces


class GeminiWire(ReplyFormat):
    name = "gemini"

    def is_sse(self, request: UpstreamRequest) -> bool:
        return request.query_params().get("alt") == "sse"

    def model(self, request: UpstreamRequest, body: dict) -> str | None:
        target = gemini_target(request.path)
        return target[0] if target else None

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

"""OpenAI Chat Completions (``POST /v1/chat/completions``), as OpenCode uses it.

Stream: ``chat.completion.chunk`` data lines (role, ``reasoning_content``,
``content`` and ``tool_calls`` deltas), a chunk with ``finish_reason``, a usage
chunk with empty ``choices`` (always sent: OpenCode reads tokens only from it),
then ``data: [DONE]``.
"""

from __future__ import annotations

from typing import Any

from harness.wire import UpstreamRequest, encode_event
from tsagent_plugins.models.wire.base import Reply, ReplyFormat, pieces


class ChatWire(ReplyFormat):
    name = "openai-chat"

    def render_json(self, reply: Reply) -> Any:
        content = reply.text if reply.text or not reply.calls else None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments_json()}}
                                     for c in reply.calls]
        return {"id": reply.id, "object": "chat.completion", "created": 0, "model": reply.model,
                "choices": [{"index": 0, "message": message, "logprobs": None,
                             "finish_reason": self.stop_reason(reply, "tool_calls", "stop")}],
                "usage": self.native_usage(reply.usage)}

    def render_stream(self, reply: Reply, request: UpstreamRequest, body: dict) -> list[bytes]:
        def chunk(delta: dict | None, finish: str | None = None, **extra: Any) -> bytes:
            choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
            return encode_event({"id": reply.id, "object": "chat.completion.chunk", "created": 0,
                                 "model": reply.model, "choices": choices, **extra})

        frames = [chunk({"role": "assistant", "content": ""})]
        if reply.reasoning:
            frames += [chunk({"reasoning_content": p}) for p in pieces(reply.reasoning, reply.chunk_size)]
        if reply.text:
            frames += [chunk({"content": p}) for p in pieces(reply.text, reply.chunk_size)]
        for index, call in enumerate(reply.calls):
            frames.append(chunk({"tool_calls": [{"index": index, "id": call.id, "type": "function",
                                                 "function": {"name": call.name, "arguments": ""}}]}))
            frames += [chunk({"tool_calls": [{"index": index, "function": {"arguments": p}}]})
                       for p in pieces(call.arguments_json(), reply.chunk_size)]
        frames.append(chunk({}, self.stop_reason(reply, "tool_calls", "stop")))
        frames.append(chunk(None, usage=self.native_usage(reply.usage)))
        frames.append(encode_event("[DONE]"))
        return frames

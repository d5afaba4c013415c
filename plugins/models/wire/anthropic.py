"""Anthropic Messages (``POST /v1/messages``), as Claude Code uses it.

Stream: ``message_start``, per content block ``content_block_start`` /
``content_block_delta`` (``thinking_delta`` + ``signature_delta``, ``text_delta``,
``input_json_delta``) / ``content_block_stop``, then ``message_delta`` (stop
reason, output tokens) and ``message_stop``.  Usage is written the Anthropic
way: ``input_tokens`` excludes ``cache_read_input_tokens``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from harness.wire import UpstreamRequest, encode_event
from tsagent_plugins.models.wire.base import Reply, ReplyFormat, pieces


class AnthropicWire(ReplyFormat):
    name = "anthropic"

    def _blocks(self, reply: Reply) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.reasoning:
            blocks.append({"type": "thinking", "thinking": reply.reasoning, "signature": _signature(reply.reasoning)})
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.calls:
            blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments})
        if not blocks:
            blocks.append({"type": "text", "text": ""})
        return blocks

    def _message(self, reply: Reply, content: list, stop: str | None, usage: dict) -> dict[str, Any]:
        return {"id": reply.id, "type": "message", "role": "assistant", "model": reply.model, "content": content,
                "stop_reason": stop, "stop_sequence": None, "usage": usage}

    def render_json(self, reply: Reply) -> Any:
        stop = self.stop_reason(reply, "tool_use", "end_turn")
        return self._message(reply, self._blocks(reply), stop, self.native_usage(reply.usage))

    def render_stream(self, reply: Reply, request: UpstreamRequest, body: dict) -> list[bytes]:
        start_usage = {**self.native_usage(reply.usage), "output_tokens": 1}
        frames = [encode_event({"type": "message_start", "message": self._message(reply, [], None, start_usage)},
                               "message_start"),
                  encode_event({"type": "ping"}, "ping")]
        for index, block in enumerate(self._blocks(reply)):
            kind = block["type"]
            if kind == "thinking":
                opening = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [{"type": "thinking_delta", "thinking": p}
                          for p in pieces(block["thinking"], reply.chunk_size)]
                deltas.append({"type": "signature_delta", "signature": block["signature"]})
            elif kind == "text":
                opening = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": p} for p in pieces(block["text"], reply.chunk_size)]
            else:
                opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                deltas = [{"type": "input_json_delta", "partial_json": p}
                          for p in pieces(json.dumps(block["input"]), reply.chunk_size)]
            frames.append(encode_event({"type": "content_block_start", "index": index, "content_block": opening},
                                       "content_block_start"))
            frames += [encode_event({"type": "content_block_delta", "index": index, "delta": d}, "content_block_delta")
                       for d in deltas]
            frames.append(encode_event({"type": "content_block_stop", "index": index}, "content_block_stop"))
        stop = self.stop_reason(reply, "tool_use", "end_turn")
        frames.append(encode_event({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                    "usage": self.native_usage(reply.usage)}, "message_delta"))
        frames.append(encode_event({"type": "message_stop"}, "message_stop"))
        return frames


def _signature(text: str) -> str:
    return "scripted-" + hashlib.sha256(text.encode()).hexdigest()[:32]

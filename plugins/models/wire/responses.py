"""OpenAI Responses (``POST /v1/responses``), as Codex uses it.

Stream: ``response.created``, ``response.in_progress``, per output item
``response.output_item.added`` + the item's deltas (reasoning summary text,
output text, function-call arguments) + ``response.output_item.done``, and
``response.completed`` carrying ``response.id`` and usage (Codex needs the
``output_item.done`` events and a ``response.completed`` with an id).  A
scripted ``stop_reason`` other than ``completed`` ends with
``response.incomplete`` and ``incomplete_details.reason``.
"""

from __future__ import annotations

from typing import Any

from harness.wire import UpstreamRequest, encode_event
from tsagent_plugins.models.wire.base import Call, Reply, ReplyFormat, pieces


class ResponsesWire(ReplyFormat):
    name = "openai-responses"

    # -- items ------------------------------------------------------------------
    def _items(self, reply: Reply) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        if reply.reasoning:
            items.append({"type": "reasoning", "id": f"rs_{reply.id}",
                          "summary": [{"type": "summary_text", "text": reply.reasoning}]})
        if reply.text or not reply.calls:
            items.append({"type": "message", "id": f"msg_{reply.id}", "status": "completed", "role": "assistant",
                          "content": [{"type": "output_text", "text": reply.text or "", "annotations": []}]})
        for call in reply.calls:
            items.append(_call_item(call))
        return items

    def _response(self, reply: Reply, status: str, output: list, usage: dict | None) -> dict[str, Any]:
        incomplete = None
        if status == "incomplete":
            incomplete = {"reason": reply.stop_reason}
        return {"id": reply.id, "object": "response", "created_at": 0, "status": status, "model": reply.model,
                "output": output, "usage": usage, "error": None, "incomplete_details": incomplete,
                "parallel_tool_calls": True, "tool_choice": "auto"}

    def _status(self, reply: Reply) -> str:
        return "incomplete" if reply.stop_reason and reply.stop_reason != "completed" else "completed"

    def render_json(self, reply: Reply) -> Any:
        return self._response(reply, self._status(reply), self._items(reply), self.native_usage(reply.usage))

    def render_stream(self, reply: Reply, request: UpstreamRequest, body: dict) -> list[bytes]:
        seq = iter(range(1_000_000))
        frames: list[bytes] = []

        def emit(kind: str, **payload: Any) -> None:
            frames.append(encode_event({"type": kind, "sequence_number": next(seq), **payload}, kind))

        emit("response.created", response=self._response(reply, "in_progress", [], None))
        emit("response.in_progress", response=self._response(reply, "in_progress", [], None))
        items = self._items(reply)
        for index, item in enumerate(items):
            ref = {"item_id": item["id"], "output_index": index}
            kind = item["type"]
            if kind == "message":
                emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress",
                                                                              "content": []})
                part = item["content"][0]
                emit("response.content_part.added", **ref, content_index=0,
                     part={"type": "output_text", "text": "", "annotations": []})
                for p in pieces(part["text"], reply.chunk_size):
                    emit("response.output_text.delta", **ref, content_index=0, delta=p)
                emit("response.output_text.done", **ref, content_index=0, text=part["text"])
                emit("response.content_part.done", **ref, content_index=0, part=part)
            elif kind == "reasoning":
                emit("response.output_item.added", output_index=index, item={**item, "summary": []})
                text = item["summary"][0]["text"]
                emit("response.reasoning_summary_part.added", **ref, summary_index=0,
                     part={"type": "summary_text", "text": ""})
                for p in pieces(text, reply.chunk_size):
                    emit("response.reasoning_summary_text.delta", **ref, summary_index=0, delta=p)
                emit("response.reasoning_summary_text.done", **ref, summary_index=0, text=text)
                emit("response.reasoning_summary_part.done", **ref, summary_index=0, part=item["summary"][0])
            elif kind == "function_call":
                emit("response.output_item.added", output_index=index,
                     item={**item, "arguments": "", "status": "in_progress"})
                for p in pieces(item["arguments"], reply.chunk_size):
                    emit("response.function_call_arguments.delta", **ref, delta=p)
                emit("response.function_call_arguments.done", **ref, arguments=item["arguments"])
            else:
                emit("response.output_item.added", output_index=index, item={**item, "status": "in_progress"})
            emit("response.output_item.done", output_index=index, item=item)
        status = self._status(reply)
        emit(f"response.{status}", response=self._response(reply, status, items, self.native_usage(reply.usage)))
        return frames


def _call_item(call: Call) -> dict[str, Any]:
    if call.kind == "local_shell":
        return {"type": "local_shell_call", "id": f"lsh_{call.id}", "call_id": call.id, "status": "completed",
                "action": {"type": "exec", "command": call.arguments, "env": {}, "timeout_ms": None,
                           "user": None, "working_directory": None}}
    if call.kind == "custom":
        return {"type": "custom_tool_call", "id": f"ctc_{call.id}", "call_id": call.id, "name": call.name,
                "input": call.arguments if isinstance(call.arguments, str) else str(call.arguments),
                "status": "completed"}
    return {"type": "function_call", "id": f"fc_{call.id}", "call_id": call.id, "name": call.name,
            "arguments": call.arguments_json(), "status": "completed"}

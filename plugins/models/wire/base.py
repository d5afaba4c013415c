"""What every scripted wire format shares: the reply model, and the request readers, which are the wire
format's own (:class:`harness.WireFormat`)."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from harness.wire import ToolSpec, UpstreamRequest, Usage
from harness.wire import Wire, error_body, string_leaves, wire_format

__all__ = ["Call", "Reply", "ReplyFormat", "ToolSpec", "pieces", "string_leaves"]


@dataclass
class Call:
    """A tool call in a reply.  ``arguments`` is a dict (``function``), the argv list
    (``local_shell``) or a string (``custom``)."""

    id: str
    name: str
    arguments: Any
    kind: str = "function"

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass
class Reply:
    """One scripted answer, resolved against the request (tool names, usage, ids)."""

    id: str
    model: str
    text: str | None = None
    reasoning: str | None = None
    calls: list[Call] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    stop_reason: str | None = None
    chunk_size: int = 16


def pieces(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters (at least one piece)."""
    size = max(1, size)
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class ReplyFormat(ABC):
    """Renders scripted replies in one wire format; reads its requests with the format's own readers."""

    name: Wire

    def is_stream(self, request: UpstreamRequest, body: dict) -> bool:
        return wire_format(self.name).is_stream(request.path, body)

    def model(self, request: UpstreamRequest, body: dict) -> str | None:
        value = body.get("model")
        return value if isinstance(value, str) else None

    # -- reading a request: the wire format's own readers (harness.WireFormat) --------------------------
    def tools(self, body: dict) -> list[ToolSpec]:
        """The tools the request offers."""
        return wire_format(self.name).tools(body)

    def conversation(self, body: dict) -> list[Any]:
        """The parts of the body that hold the conversation (system prompt, messages)."""
        return wire_format(self.name).conversation(body)

    def last_tool_result(self, body: dict) -> str | None:
        """Text of the most recent tool result in the conversation, or None."""
        results = wire_format(self.name).tool_results(body)
        return results[-1] if results else None

    def reasoning_effort(self, body: dict) -> str | None:
        """The requested reasoning effort, lower-cased, or None."""
        return wire_format(self.name).reasoning_effort(body)

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        """``usage`` in this format's own fields (the proxy normalises it back): the wire format's own
        writer (:meth:`harness.WireFormat.native_usage`)."""
        return wire_format(self.name).native_usage(usage)

    @abstractmethod
    def render_json(self, reply: Reply) -> Any:
        """The non-streamed response body."""

    @abstractmethod
    def render_stream(self, reply: Reply, request: UpstreamRequest, body: dict) -> list[bytes]:
        """The streamed response as encoded SSE frames."""

    def error(self, status: int, message: str) -> dict[str, Any]:
        return error_body(self.name, status, message)

    def stop_reason(self, reply: Reply, tool: str, end: str) -> str:
        """The scripted stop reason, else ``tool`` when the reply calls tools, else ``end``."""
        if reply.stop_reason:
            return reply.stop_reason
        return tool if reply.calls else end

"""What every scripted wire format shares: the reply model and request readers' interface."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from harness import UpstreamRequest, Usage
from harness import Wire, error_body

#: Keys whose values are payloads, not conversation text (base64 images, signatures).
_SKIP_KEYS = frozenset({"data", "signature", "encrypted_content", "image_url", "inlineData", "inline_data",
                        "thoughtSignature"})


@dataclass(frozen=True)
class ToolSpec:
    """A tool the request offers: ``kind`` is ``function`` (JSON-schema arguments),
    ``local_shell`` (Responses built-in) or ``custom`` (Responses free-form input)."""

    name: str
    schema: dict[str, Any] | None = None
    kind: str = "function"


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


def string_leaves(node: Any, out: list[str] | None = None) -> list[str]:
    """Every string inside ``node`` (dict values, list items), skipping payload keys."""
    out = [] if out is None else out
    if isinstance(node, str):
        out.append(node)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key not in _SKIP_KEYS:
                string_leaves(value, out)
    elif isinstance(node, list):
        for item in node:
            string_leaves(item, out)
    return out


def pieces(text: str, size: int) -> list[str]:
    """``text`` cut into pieces of at most ``size`` characters (at least one piece)."""
    size = max(1, size)
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


class WireFormat(ABC):
    """Reads one wire format's requests and renders scripted replies in it."""

    name: Wire

    def is_stream(self, request: UpstreamRequest, body: dict) -> bool:
        return bool(body.get("stream"))

    def model(self, request: UpstreamRequest, body: dict) -> str | None:
        value = body.get("model")
        return value if isinstance(value, str) else None

    @abstractmethod
    def tools(self, body: dict) -> list[ToolSpec]:
        """The tools the request offers."""

    @abstractmethod
    def conversation(self, body: dict) -> list[Any]:
        """The parts of the body that hold the conversation (system prompt, messages)."""

    @abstractmethod
    def last_tool_result(self, body: dict) -> str | None:
        """Text of the most recent tool result in the conversation, or None."""

    @abstractmethod
    def reasoning_effort(self, body: dict) -> str | None:
        """The requested reasoning effort, lower-cased, or None."""

    @abstractmethod
    def native_usage(self, usage: Usage) -> dict[str, Any]:
        """``usage`` in this format's own fields (the proxy normalises it back)."""

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

"""The contract of a wire format, and the text readers several formats share.

A :class:`WireFormat` is everything the harness knows about one provider API's wire format: how to recognise a
request (its path, or its body's shape when no path was recorded) and a response (the shape of a body or stream
event), what a request says (model, streaming, the input context split into console output and the rest, the
user's messages) and what a response says (its token usage, streamed or not), and the error body the provider
sends.  Registered once (:func:`harness.proxy.wire.register_wire_format`), a format is decoded by the model
proxy (usage and cost), the metric extractors (input context) and the trajectory converters (the prompt, the
model).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from harness.proxy.usage import Usage

Block = tuple[str, bool]  # (text, is_console)

#: Keys whose values are payloads, not conversation text (base64 images, signatures).
_SKIP_KEYS = frozenset({"data", "signature", "encrypted_content", "image_url", "inlineData", "inline_data",
                        "thoughtSignature"})


@dataclass(frozen=True)
class ToolSpec:
    """A tool a request offers: ``kind`` is ``function`` (JSON-schema arguments),
    ``local_shell`` (Responses built-in) or ``custom`` (Responses free-form input)."""

    name: str
    schema: dict[str, Any] | None = None
    kind: str = "function"


def string_leaves(node: Any, out: list[str] | None = None) -> list[str]:
    """Every string inside ``node`` (dict values, list items), skipping payload keys (images, signatures)."""
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


def forced_by_tool_choice(body: dict) -> tuple[bool, str | None]:
    """``tool_choice`` read the OpenAI/Anthropic way: ``required``/``any`` (any tool), or
    ``{"type": "function"|"tool", "function": {"name"}}`` / ``{"type": ..., "name"}`` (that tool)."""
    choice = body.get("tool_choice")
    if choice in ("required", "any"):
        return True, None
    if isinstance(choice, dict):
        kind = choice.get("type")
        if kind == "any":
            return True, None
        if kind in ("function", "tool"):
            fn = choice.get("function")
            return True, (fn if isinstance(fn, dict) else choice).get("name")
    return False, None

#: Content-part types that carry no text a tokenizer can price (images, documents, files).
_PAYLOAD_PARTS = ("image", "image_url", "input_image", "document", "input_file", "file")


def json_text(value: Any) -> str:
    """``value`` as JSON text (non-ASCII kept)."""
    return json.dumps(value, ensure_ascii=False)


def parts_text(content: Any) -> Iterator[str]:
    """Text of a content value: a string, or a list of text-like parts (images and documents skipped)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                yield part
            elif isinstance(part, dict):
                if part.get("type") in _PAYLOAD_PARTS:
                    continue
                for key in ("text", "content"):
                    value = part.get(key)
                    if isinstance(value, str):
                        yield value
                        break
                    if isinstance(value, list):
                        yield from parts_text(value)
                        break
    elif isinstance(content, dict):
        yield from parts_text([content])


def message_text(content: Any, part_types: tuple[str, ...] = ("text", "input_text")) -> str:
    """The text parts of a message content, without a CLI's own ``<system-reminder>`` blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif (isinstance(part, dict) and part.get("type", "text") in part_types
                  and isinstance(part.get("text"), str) and not part["text"].lstrip().startswith("<system-reminder>")):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def default_error_body(status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The OpenAI-style error body (``{"error": {message, type, param, code}}``), also used for a request of
    no known wire format."""
    kind = "invalid_request_error" if 400 <= status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class UsageStream:
    """The usage of one streamed response, fed event by event (:meth:`feed`); :meth:`result` at the end.

    The default keeps the last usage an event carries (:meth:`WireFormat.event_usage`); a format whose events
    carry partial counts overrides it.
    """

    def __init__(self, fmt: WireFormat):
        self.fmt = fmt
        self._last: Usage | None = None

    def feed(self, obj: dict) -> None:
        """One parsed stream event (a JSON object)."""
        usage = self.fmt.event_usage(obj)
        if usage is not None:
            self._last = usage

    def result(self) -> Usage | None:
        """The response's usage, or None when no event carried any."""
        return self._last


class WireFormat:
    """One provider API's wire format.

    Subclasses set ``name`` (the ``wire`` of a ``proxy.jsonl`` record) and implement :meth:`matches_path` and
    :meth:`usage`; the other methods have defaults that read nothing.  Detection ranks (:meth:`request_rank`,
    :meth:`response_rank`): the lowest rank of any registered format wins, a tie goes to the format registered
    first; None means "not mine".
    """

    name: str = ""
    #: request body keys that hold a conversation (a request with one of them asks for a completion)
    completion_keys: tuple[str, ...] = ()
    #: path suffixes of endpoints that are not completions (token counting)
    side_paths: tuple[str, ...] = ()
    #: a non-SSE streamed answer may be a JSON array of chunks (decoded like a stream)
    array_stream: bool = False

    # -- detection -----------------------------------------------------------------------------
    def matches_path(self, path: str) -> bool:
        """The request path (no query string, no trailing ``/``) is one of this format's endpoints."""
        raise NotImplementedError

    def request_rank(self, body: Any) -> int | None:
        """How surely a request ``body`` (parsed JSON) is of this format when its path says nothing."""
        return None

    def response_rank(self, obj: Any) -> int | None:
        """How surely a response body or stream event (parsed JSON) is of this format."""
        return None

    # -- requests --------------------------------------------------------------------------------
    def model(self, path: str, body: Any) -> str | None:
        """The model a request asks for (``body["model"]`` by default)."""
        value = body.get("model") if isinstance(body, dict) else None
        return value if isinstance(value, str) else None

    def is_stream(self, path: str, body: Any) -> bool:
        """The request asks for a streamed answer (``body["stream"]`` by default)."""
        return isinstance(body, dict) and bool(body.get("stream"))

    def context_blocks(self, body: dict, memo: dict) -> list[Block]:
        """``(text, is_console)`` blocks of a request's input context: console output (what tools returned)
        and everything else the model reads (tool definitions excepted: the caller adds ``tools``).  ``memo``:
        shared by the requests of one episode (a format may keep serialized tool calls by id in it)."""
        return []

    def user_messages(self, body: dict) -> list[str]:
        """The texts of a request's user messages, in order (tool results and CLI reminders left out)."""
        return []

    def conversation(self, body: dict) -> list[Any]:
        """The parts of a request body that hold the conversation (system prompt, messages)."""
        return []

    def tool_results(self, body: dict) -> list[str]:
        """The texts of every tool result in a request's conversation, oldest first."""
        return []

    def tools(self, body: dict) -> list[ToolSpec]:
        """The tools a request offers."""
        return []

    def reasoning_effort(self, body: dict) -> str | None:
        """The reasoning effort a request asks for, lower-cased, or None."""
        return None

    def forced_tool(self, body: dict) -> tuple[bool, str | None]:
        """(the request forces a tool call, the forced tool's name or None for any tool); by default read from
        ``tool_choice`` (:func:`forced_by_tool_choice`)."""
        return forced_by_tool_choice(body)

    def response_schema(self, body: dict) -> tuple[bool, dict | None]:
        """(the request demands a JSON answer, its JSON schema or None)."""
        return False, None

    # -- responses -------------------------------------------------------------------------------
    def usage(self, body: dict) -> Usage | None:
        """The usage of a non-streamed response body (a JSON object), or None when it has none."""
        raise NotImplementedError

    def event_usage(self, obj: dict) -> Usage | None:
        """The usage one stream event carries (by default: read like a whole body)."""
        return self.usage(obj)

    def stream_usage(self) -> UsageStream:
        """A fresh accumulator of one streamed response's usage."""
        return UsageStream(self)

    def reasoning_text(self, events: list[Any]) -> str:
        """The reasoning ("thinking") text of a response, from its payload objects (each stream event, or the
        body), fragments joined exactly as sent; "" where the format sends none or this reader knows none."""
        return ""

    def native_usage(self, usage: Usage) -> dict[str, Any]:
        """``usage`` written in this format's own fields (the inverse of :meth:`usage`'s reading)."""
        raise NotImplementedError(f"wire format {self.name!r} does not write usage")

    def error_body(self, status: int, message: str, code: str | None = None) -> dict[str, Any]:
        """The JSON error body this provider sends with HTTP ``status`` (``code``: a machine-readable reason,
        where the format has a slot for it)."""
        return default_error_body(status, message, code)

"""A response's token usage, whatever its wire format: a whole body, a stream event by event, raw text."""

from __future__ import annotations

import json
from typing import Any

from harness.proxy.sse import SSEEvent, parse_sse
from harness.proxy.usage import Usage
from harness.proxy.wire.base import UsageStream
from harness.proxy.wire.registry import UNKNOWN, Wire, detect_response, wire_format, wire_formats


def usage_from_body(body: Any, wire: Wire = UNKNOWN) -> Usage | None:
    """Usage of a non-streamed response body (parsed JSON), or None when it has none.

    ``wire`` ``"unknown"``: the format is read from the body's shape.  A JSON array is a stream answered
    without SSE (Gemini's ``streamGenerateContent`` without ``alt=sse``): its chunks are read as stream events.
    """
    if isinstance(body, list):
        if wire == UNKNOWN:
            wire = next((f.name for f in wire_formats() if f.array_stream), UNKNOWN)
        acc = StreamUsage(wire)
        for item in body:
            acc.feed_object(item)
        return acc.result()
    if not isinstance(body, dict):
        return None
    fmt = detect_response(body) if wire == UNKNOWN else wire_format(wire)
    return fmt.usage(body) if fmt is not None else None


class StreamUsage:
    """Accumulates usage over a streamed response's events; :meth:`result` at the end.

    ``wire`` ``"unknown"``: the first event whose shape a format recognises fixes the format.
    """

    def __init__(self, wire: Wire = UNKNOWN):
        self.wire: Wire = wire
        fmt = wire_format(wire)
        self._acc: UsageStream | None = fmt.stream_usage() if fmt is not None else None

    def feed(self, event: SSEEvent) -> None:
        """One SSE event (non-JSON data such as ``[DONE]`` is ignored)."""
        obj = event.json()
        if obj is not None:
            self.feed_object(obj)

    def feed_object(self, obj: Any) -> None:
        """One parsed event payload / stream chunk."""
        if not isinstance(obj, dict):
            return
        if self._acc is None:
            if self.wire != UNKNOWN:
                return  # a wire no registered format decodes
            fmt = detect_response(obj)
            if fmt is None:
                return
            self.wire, self._acc = fmt.name, fmt.stream_usage()
        self._acc.feed(obj)

    def result(self) -> Usage | None:
        """The response's usage, or None when no event carried any."""
        return self._acc.result() if self._acc is not None else None


def usage_from_sse(payload: bytes | str, wire: Wire = UNKNOWN) -> Usage | None:
    """Usage of a complete SSE stream."""
    acc = StreamUsage(wire)
    for event in parse_sse(payload):
        acc.feed(event)
    return acc.result()


def usage_from_text(payload: bytes | str, wire: Wire = UNKNOWN, stream: bool = False) -> Usage | None:
    """Usage of a raw response body: SSE when ``stream``, else JSON."""
    if stream:
        return usage_from_sse(payload, wire)
    try:
        return usage_from_body(json.loads(payload), wire)
    except ValueError:
        return None

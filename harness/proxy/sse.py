"""Server-sent events: an incremental parser and an encoder.

The parser follows the WHATWG event-stream rules: lines end with ``\\r\\n``,
``\\n`` or ``\\r``; a blank line dispatches the pending event; ``:`` starts a
comment; ``data`` lines are joined with ``\\n``; one space after the colon is
dropped.  It accepts bytes in arbitrary pieces (a line, a terminator or a
UTF-8 sequence may be split across chunks), so the model proxy can watch a
stream while passing it through unchanged.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event: ``event`` name (None when absent), ``data`` text, ``id``."""

    event: str | None
    data: str
    id: str | None = None

    def json(self) -> Any:
        """``data`` parsed as JSON, or None when it is not JSON (e.g. ``[DONE]``)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None


class SSEParser:
    """Feed bytes with :meth:`feed`; each call returns the events completed so far."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buf = ""
        self._event: str | None = None
        self._data: list[str] = []
        self._id: str | None = None

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """Parse ``chunk``; returns the events whose terminating blank line arrived."""
        self._buf += self._decoder.decode(chunk)
        return self._drain(final=False)

    def close(self) -> list[SSEEvent]:
        """End of stream: a last event without its blank line is still dispatched."""
        self._buf += self._decoder.decode(b"", final=True)
        events = self._drain(final=True)
        if self._buf:
            self._line(self._buf, events)
            self._buf = ""
        self._dispatch(events)
        return events

    def _drain(self, final: bool) -> list[SSEEvent]:
        events: list[SSEEvent] = []
        buf = self._buf
        start = 0
        n = len(buf)
        i = 0
        while i < n:
            ch = buf[i]
            if ch == "\n" or ch == "\r":
                if ch == "\r" and i + 1 == n and not final:
                    break  # may be the first half of \r\n: wait for more
                self._line(buf[start:i], events)
                i += 2 if ch == "\r" and i + 1 < n and buf[i + 1] == "\n" else 1
                start = i
                continue
            i += 1
        self._buf = buf[start:]
        return events

    def _line(self, line: str, events: list[SSEEvent]) -> None:
        if line == "":
            self._dispatch(events)
            return
        if line.startswith(":"):
            return
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        elif field == "id" and "\0" not in value:
            self._id = value

    def _dispatch(self, events: list[SSEEvent]) -> None:
        if self._data:
            events.append(SSEEvent(self._event, "\n".join(self._data), self._id))
        self._event = None
        self._data = []


def parse_sse(payload: bytes | str) -> list[SSEEvent]:
    """All events in a complete stream."""
    parser = SSEParser()
    raw = payload.encode() if isinstance(payload, str) else payload
    return parser.feed(raw) + parser.close()


def encode_event(data: Any, event: str | None = None) -> bytes:
    """One event as bytes: ``event: <name>`` (if given), ``data: <json or text>``, blank line.

    A dict/list is serialized as compact JSON; a str is sent as is (one ``data``
    line per line of text).
    """
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    lines = [f"event: {event}"] if event else []
    lines += [f"data: {part}" for part in text.split("\n")]
    return ("\n".join(lines) + "\n\n").encode()

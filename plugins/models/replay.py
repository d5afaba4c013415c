"""Replay a recorded ``proxy.jsonl``: each request gets the next recorded response, in ``seq`` order.

Requests are not compared with the recording; status, content type and body
are reproduced (a streamed body is sent again event by event).  Once the
recording is exhausted, requests are answered with HTTP 400 and recorded as
failures.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

from harness.wire import Upstream, UpstreamConfigError, UpstreamRequest, UpstreamResponse, read_log
from harness.wire import decode_body
from harness.wire import error_body


class ReplayUpstream(Upstream):
    """Answer every episode with the responses recorded in ``path``."""

    name = "replay"

    def __init__(self, path: Path | str):
        self.path = Path(path)
        try:
            records = read_log(self.path)
        except OSError as exc:
            raise UpstreamConfigError(f"model backend 'scripted': options.replay: cannot read "
                                      f"{self.path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise UpstreamConfigError(f"model backend 'scripted': options.replay: {exc}") from None
        self.responses = sorted((r for r in records if r.get("type") == "response"), key=lambda r: r.get("seq", 0))
        self._next: dict[str, int] = {}
        self._failures: dict[str, list[str]] = {}

    def open_episode(self, episode_id: str) -> None:
        self._next[episode_id] = 0
        self._failures[episode_id] = []

    def failures(self, episode_id: str) -> list[str]:
        return list(self._failures.get(episode_id, []))

    async def handle(self, request: UpstreamRequest) -> UpstreamResponse:
        index = self._next.setdefault(request.episode_id, 0)
        if index >= len(self.responses):
            message = f"replay of {self.path.name} exhausted after {len(self.responses)} responses"
            self._failures.setdefault(request.episode_id, []).append(message)
            return UpstreamResponse.json(400, error_body(request.wire or "unknown", 400, message),
                                         assertion_failure=message)
        self._next[request.episode_id] = index + 1
        record = self.responses[index]
        raw = decode_body(record.get("body"), record.get("body_encoding"))
        headers = {"content-type": record.get("content_type") or "application/json"}
        return UpstreamResponse(int(record.get("status", 200)), headers, _frames(raw, bool(record.get("stream"))))


async def _frames(raw: bytes, stream: bool) -> AsyncIterator[bytes]:
    if not stream:
        if raw:
            yield raw
        return
    for part in _split_events(raw):
        yield part


def _split_events(raw: bytes) -> list[bytes]:
    """Cut an SSE body after each blank line (``\\n\\n`` or ``\\r\\n\\r\\n``)."""
    out = [m.group(0) for m in _EVENT.finditer(raw)]
    rest = raw[sum(len(p) for p in out):]
    return out + ([rest] if rest else [])


_EVENT = re.compile(rb".*?(?:\r\n\r\n|\n\n)", re.S)

"""The model proxy's ``proxy.jsonl`` seen as a list of model calls (the trajectory's second source).

Each request record is paired with its response record (same ``seq``) into a
:class:`ProxyCall` carrying the normalised usage and cost the proxy measured
(:mod:`harness.proxy.usage`, TraceBench Appendix G.3).  The converters use
these calls to cross-check the token totals a CLI reports about itself, to
fill per-step metrics a native log lacks, and to recover what a native log
omits (e.g. the task prompt, absent from OpenCode's JSON events).
"""

from __future__ import annotations

import math

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.wire import Usage


@dataclass
class ProxyCall:
    """One request forwarded by the proxy and what came back.

    ``ts``/``end_ts``: Unix seconds of the request and of the response's last
    byte.  ``usage``: normalised counts (prompt includes cached, completion
    includes reasoning) or None when the response carried none.  ``cost_usd``:
    equation (1) at the profile's prices.  ``has_tools``: the request offered
    tools (the agent's conversation, as opposed to side calls such as session
    titles or routing).  ``error``: the recorded upstream error, if any.
    ``truncated``: ``{"request"|"response": {"size": bytes, "sha256": hex}}`` for a body the proxy log
    stores truncated (past the episode's log budget): ``body``/``response`` then hold only a text prefix,
    never decoded as the provider's format.
    """

    seq: int
    ts: float
    method: str
    path: str
    wire: str
    model: str | None
    has_tools: bool
    body: Any
    status: int | None = None
    end_ts: float | None = None
    usage: Usage | None = None
    cost_usd: float = 0.0
    error: dict | None = None
    refused: str | None = None
    assertion_failure: str | None = None
    response: Any = None
    extra: dict = field(default_factory=dict)
    truncated: dict = field(default_factory=dict)

    def events(self) -> list[Any]:
        """The response's payload objects: each SSE event's JSON, or the JSON body (a list's items)."""
        if "response" in self.truncated:
            return []  # a prefix of a body: never decoded as the provider's format
        if isinstance(self.response, str):
            from harness.wire import parse_sse  # the proxy's readers load with the first log read

            return [obj for obj in (e.json() for e in parse_sse(self.response)) if obj is not None]
        if isinstance(self.response, list):
            return list(self.response)
        return [self.response] if self.response is not None else []

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def conversational(self) -> bool:
        """A successful model call of the agent's own conversation (tools offered)."""
        return self.method == "POST" and self.has_tools and self.ok


def _model(record: dict) -> str | None:
    """The model the request asks for, read by its wire format (the body's ``model``, else the path's)."""
    body = record.get("body")
    if isinstance(body, dict) and isinstance(body.get("model"), str):
        return body["model"]
    from harness.wire import wire_format, wire_of_record

    fmt = wire_format(wire_of_record(record, body))
    return fmt.model(str(record.get("path") or ""), body) if fmt is not None else None


def _has_tools(body: Any) -> bool:
    if not isinstance(body, dict):
        return False
    tools = body.get("tools")
    return isinstance(tools, list) and len(tools) > 0


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and math.isfinite(value) else 0


def _usage(value: Any) -> Usage | None:
    if not isinstance(value, dict):
        return None
    return Usage(_int(value.get("prompt_tokens")), _int(value.get("cached_tokens")),
                 _int(value.get("completion_tokens")), _int(value.get("reasoning_tokens")))


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 0.0


def _truncation(record: dict) -> dict:
    size, digest = record.get("size"), record.get("sha256")
    return {"size": size if isinstance(size, int) else None, "sha256": digest if isinstance(digest, str) else None}


def read_calls(path: Path | str) -> list[ProxyCall]:
    """The calls of a ``proxy.jsonl`` in request order.

    Raises ``ValueError`` naming the file and line when a line is not JSON
    (see :func:`harness.proxy.read_log`); odd field types are read as absent.
    """
    from harness.wire import read_log

    calls: dict[int, ProxyCall] = {}
    for record in read_log(path):
        seq = record.get("seq")
        if not isinstance(seq, int):
            continue
        if record.get("type") == "request":
            calls[seq] = ProxyCall(
                seq=seq, ts=_float(record.get("ts")), method=str(record.get("method") or ""),
                path=str(record.get("path") or ""), wire=str(record.get("wire") or "unknown"),
                model=_model(record), has_tools=_has_tools(record.get("body")), body=record.get("body"),
            )
            if record.get("truncated") is True:
                calls[seq].truncated["request"] = _truncation(record)
        elif record.get("type") == "response" and seq in calls:
            call = calls[seq]
            call.status = record.get("status")
            call.end_ts = record.get("last_byte_ts") or record.get("ts")
            call.usage = _usage(record.get("usage"))
            call.cost_usd = _float(record.get("cost_usd"))
            call.error = record.get("error") if isinstance(record.get("error"), dict) else None
            call.refused = record.get("refused")
            call.assertion_failure = record.get("assertion_failure")
            call.response = record.get("body")
            if record.get("truncated") is True:
                call.truncated["response"] = _truncation(record)
    return [calls[k] for k in sorted(calls)]


def total_usage(calls: list[ProxyCall]) -> tuple[Usage, float]:
    """Sum of the usage and cost of every call (side calls included: all were billed)."""
    total, cost = Usage(), 0.0
    for call in calls:
        if call.usage is not None:
            total = total + call.usage
        cost += call.cost_usd
    return total, cost


def user_messages(call: ProxyCall) -> list[str]:
    """The texts of the user messages of a request, in order, read by its wire format
    (:meth:`harness.WireFormat.user_messages`); none for an unknown wire."""
    from harness.wire import wire_format

    fmt = wire_format(call.wire)
    return fmt.user_messages(call.body if isinstance(call.body, dict) else {}) if fmt is not None else []


def first_prompt(calls: list[ProxyCall]) -> str | None:
    """The task prompt: the last user message of the first conversational request, or None.

    (CLIs put context of their own, e.g. an environment description, in
    user messages before the task.)
    """
    for call in calls:
        if call.method == "POST" and call.has_tools:
            messages = user_messages(call)
            if messages:
                return messages[-1]
    return None

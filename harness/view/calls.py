"""Raw model calls of an episode, read on demand from its proxy logs (``proxy.jsonl.zst``, or an older run's
``proxy.jsonl``).

An episode folder holds a proxy log (an agent's sandbox) and/or ``proxy/<session>/`` logs (one per
model session of a forecaster); the format is :mod:`harness.proxy.log`'s, the bytes are read through
:mod:`harness.logfile`.  A log can be tens of megabytes uncompressed, so the viewer reads it only when a
page asks for its calls: :func:`call_index` scans the lines once (their offsets in the decompressed stream
and a summary per call, request and response paired by ``seq``) and :func:`call_detail` reads the two lines
of one call back (a compressed log is decompressed up to them again).  Headers are shown through the proxy's
own allowlist (:func:`harness.proxy.log.logged_headers`): a credential never reaches a page even
from a log written by hand.

Choice written down here: a trajectory step is linked to a call by order (the k-th agent step to the
k-th call of the episode's logs, in time order); agents make one model call per step, and the
trajectory carries no request id to match on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import logfile
from harness.proxy_records import LOG_BOUNDS, LOG_NAME, PLAIN_LOG_NAME
from harness.view.data import regular_file

#: Characters of one body shown; the rest is cut with a note.
BODY_CLIP = 200_000


@dataclass(frozen=True)
class CallSummary:
    """One model call: ``n`` (1-based, time order over the episode's logs), the log, the line offsets
    of its request and response (in the decompressed stream), and what a list shows (path, model, status, tokens, cost, latency s)."""

    n: int
    log: Path
    seq: Any
    request_at: int | None
    response_at: int | None
    ts: float | None
    path: str
    model: str
    status: Any
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    latency: float | None


def proxy_logs(folder: Path | None) -> list[Path]:
    """The proxy logs of an episode folder: its own, then ``proxy/*/``'s sorted by folder (each
    ``proxy.jsonl.zst``, else an older run's ``proxy.jsonl``)."""
    if folder is None:
        return []

    def one(relative: str) -> Path | None:
        return regular_file(folder, f"{relative}{LOG_NAME}") or regular_file(folder, f"{relative}{PLAIN_LOG_NAME}")

    found = [one("")]
    session_dir = Path(folder) / "proxy"
    if session_dir.is_dir() and not session_dir.is_symlink():
        found += [one(f"proxy/{p.name}/") for p in sorted(session_dir.iterdir()) if p.is_dir()]
    return [p for p in found if p is not None]


def _number(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def call_index(folder: Path | None) -> list[CallSummary]:
    """Every call of the episode's logs, in time order (a malformed line is skipped)."""
    calls: list[tuple[Path, Any, dict, dict]] = []
    for log in proxy_logs(folder):
        pending: dict[Any, dict] = {}
        order: list[Any] = []
        for at, line, _ in logfile.read_lines(log, LOG_BOUNDS.max_bytes):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if not isinstance(record, dict) or record.get("type") not in ("request", "response"):
                continue
            seq = record.get("seq")
            if seq not in pending:
                pending[seq] = {}
                order.append(seq)
            body = record.get("body") if isinstance(record.get("body"), dict) else {}
            if record["type"] == "request":
                pending[seq]["request"] = {"at": at, "ts": _number(record.get("ts")),
                                           "path": str(record.get("path") or ""),
                                           "model": str(body.get("model") or "")}
            else:
                usage = record.get("usage") if isinstance(record.get("usage"), dict) else {}
                end = _number(record.get("last_byte_ts")) or _number(record.get("ts"))
                pending[seq]["response"] = {"at": at, "end": end, "status": record.get("status"),
                                            "prompt_tokens": _number(usage.get("prompt_tokens")),
                                            "completion_tokens": _number(usage.get("completion_tokens")),
                                            "cost_usd": _number(record.get("cost_usd"))}
        calls += [(log, seq, pending[seq].get("request", {}), pending[seq].get("response", {})) for seq in order]
    calls.sort(key=lambda c: (c[2].get("ts") is None, c[2].get("ts") or 0.0))
    out = []
    for n, (log, seq, request, response) in enumerate(calls, start=1):
        start, end = request.get("ts"), response.get("end")
        out.append(CallSummary(
            n=n, log=log, seq=seq, request_at=request.get("at"), response_at=response.get("at"), ts=start,
            path=request.get("path", ""), model=request.get("model", ""), status=response.get("status"),
            prompt_tokens=response.get("prompt_tokens"), completion_tokens=response.get("completion_tokens"),
            cost_usd=response.get("cost_usd"),
            latency=(end - start) if start is not None and end is not None else None))
    return out


def _line(log: Path, at: int | None) -> dict | None:
    line = logfile.line_at(log, at, LOG_BOUNDS.max_bytes) if at is not None else None
    try:
        record = json.loads(line) if line is not None else None
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


def _body_text(record: dict | None) -> str:
    if record is None or record.get("body") is None:
        return ""
    body = record["body"]
    text = json.dumps(body, indent=1, ensure_ascii=False) if not isinstance(body, str) else body
    if record.get("body_encoding") == "base64":
        text = f"({len(body):,} base64 characters, binary body not shown)"
    if record.get("truncated"):  # past the episode's log budget: a prefix, its size and hash (harness.proxy.log)
        size = record.get("size")
        text = (f"(truncated in the log: {size:,} bytes in all, sha256 {record.get('sha256')}; "
                f"the first {len(text):,} characters follow)\n" if isinstance(size, int) else
                "(truncated in the log; its prefix follows)\n") + text
    return text if len(text) <= BODY_CLIP else text[:BODY_CLIP] + f"\n… ({len(text) - BODY_CLIP:,} more characters)"


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_content(v.get("text") if isinstance(v, dict) and "text" in v else
                                  f"[{v.get('type', 'part')}]" if isinstance(v, dict) else v) for v in value)
    return json.dumps(value, ensure_ascii=False) if value is not None else ""


def readable(body: Any) -> str:
    """The messages of a chat request or response body as text (``role:`` then content; OpenAI chat,
    Anthropic messages and Responses shapes), or "" when the body has none of them."""
    if not isinstance(body, dict):
        return ""
    parts = []
    if isinstance(body.get("system"), (str, list)):
        parts.append(f"system:\n{_content(body['system'])}")
    for message in body.get("messages") or body.get("input") or []:
        if isinstance(message, dict):
            parts.append(f"{message.get('role', '?')}:\n{_content(message.get('content'))}")
    for choice in body.get("choices") or []:
        if isinstance(choice, dict) and isinstance(choice.get("message"), dict):
            parts.append(f"{choice['message'].get('role', 'assistant')}:\n{_content(choice['message'].get('content'))}")
    if body.get("type") == "message" and isinstance(body.get("content"), list):
        parts.append(f"{body.get('role', 'assistant')}:\n{_content(body['content'])}")
    text = "\n\n".join(parts)
    return text if len(text) <= BODY_CLIP else text[:BODY_CLIP] + f"\n… ({len(text) - BODY_CLIP:,} more characters)"


def call_detail(call: CallSummary) -> dict:
    """One call read back: ``request_headers`` / ``response_headers`` (allowlisted), ``request_body`` /
    ``response_body`` (pretty JSON or text, clipped; a body the proxy stored truncated says so, with its size
    and sha256), ``request_text`` / ``response_text``
    (:func:`readable`), ``usage`` (the proxy's), ``latency``, ``status``,
    ``error`` (the proxy's error record, if any)."""
    from harness.proxy.log import logged_headers

    request, response = _line(call.log, call.request_at), _line(call.log, call.response_at)

    def headers(record: dict | None) -> dict:
        raw = record.get("headers") if record else None
        return logged_headers({str(k): str(v) for k, v in raw.items()}) if isinstance(raw, dict) else {}

    return {"request_headers": headers(request), "response_headers": headers(response),
            "request_text": readable((request or {}).get("body")),
            "response_text": readable((response or {}).get("body")),
            "request_body": _body_text(request), "response_body": _body_text(response),
            "usage": (response or {}).get("usage") if isinstance((response or {}).get("usage"), dict) else None,
            "latency": call.latency, "status": call.status,
            "error": (response or {}).get("error")}

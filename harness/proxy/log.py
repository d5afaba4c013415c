"""An episode's ``proxy.jsonl``: one JSON object per line, request and response records.

Request line::

    {"type": "request", "seq": 3, "ts": 1767000000.123, "method": "POST",
     "path": "/v1/messages", "query": "beta=true", "wire": "anthropic",
     "headers": {...allowlisted...}, "body": {...}, "body_encoding": "json"}

Response line (same ``seq``)::

    {"type": "response", "seq": 3, "ts": ..., "status": 200, "stream": true,
     "content_type": "text/event-stream", "first_byte_ts": ..., "last_byte_ts": ...,
     "body": "event: message_start\\ndata: {...}\\n\\n...", "body_encoding": "text",
     "usage": {"prompt_tokens": ..., "cached_tokens": ..., "completion_tokens": ...,
               "reasoning_tokens": ..., "total_tokens": ...} | null,
     "cost_usd": 0.0123, "refused": "max_tokens" | absent, "error": {...} | absent,
     "assertion_failure": "..." | absent}

``ts`` values are Unix epoch seconds.  Bodies are parsed JSON when the bytes are
strict JSON (``body_encoding: "json"``), else UTF-8 text (``"text"``), else
base64 (``"base64"``), image inputs included, while the episode's body budget
lasts (``RunSettings.proxy_log_mb``); past it, or over :data:`FULL_BODY_MAX`
bytes, a body is stored truncated: its
first :data:`TRUNCATED_PREFIX` bytes as text, with ``"truncated": true``,
``"size"`` (bytes of the whole body) and ``"sha256"`` (hex digest of it).  JSON
string escaping keeps every record on one line.  Headers are logged from an
allowlist only, so credentials never reach the file; every line is also scrubbed
of the upstream's secrets before it is written.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness import untrusted
from harness.proxy.redact import Redactor

#: Request/response headers worth keeping in the log (never credentials).
LOGGED_HEADERS = frozenset({
    "content-type", "accept", "user-agent", "anthropic-version", "anthropic-beta", "openai-beta",
    "x-goog-api-client", "originator", "version", "retry-after", "request-id", "x-request-id",
    "anthropic-request-id", "openai-processing-ms",
})

def _strict(_constant: str) -> Any:
    raise ValueError("non-standard JSON constant")


def encode_body(raw: bytes) -> tuple[Any, str | None]:
    """``(body, encoding)`` for the log: parsed JSON, text, or base64; ``(None, None)`` if empty."""
    if not raw:
        return None, None
    try:
        return json.loads(raw, parse_constant=_strict), "json"
    except (ValueError, UnicodeDecodeError):
        pass
    try:
        return raw.decode("utf-8"), "text"
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii"), "base64"


#: Bytes of a truncated body kept in the log (as text, invalid UTF-8 replaced).
TRUNCATED_PREFIX = 1024
#: Largest body stored in full whatever the budget: writing a body costs several copies of it in memory
#: (decoded, JSON-encoded, written), so a larger one is stored truncated like a body past the budget.
FULL_BODY_MAX = 16 * 1024 * 1024


def truncated_body(raw: bytes) -> dict[str, Any]:
    """The log fields of a body stored truncated: a text prefix, ``truncated``, ``size``, ``sha256``."""
    return {"body": bytes(raw[:TRUNCATED_PREFIX]).decode("utf-8", "replace"), "body_encoding": "text",
            "truncated": True, "size": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}


def decode_body(body: Any, encoding: str | None) -> bytes:
    """Inverse of :func:`encode_body` (JSON is re-serialized, so bytes may differ in spacing)."""
    if body is None:
        return b""
    if encoding == "base64":
        return base64.b64decode(body)
    if encoding == "text":
        return str(body).encode()
    return json.dumps(body, ensure_ascii=False).encode()


def logged_headers(headers: dict[str, str]) -> dict[str, str]:
    """The allowlisted subset of ``headers`` (names lower-cased)."""
    return {k.lower(): v for k, v in headers.items() if k.lower() in LOGGED_HEADERS}


class ProxyLogWriter:
    """Appends records to ``path`` (created with its parent folders); thread-safe.

    ``body_budget``: bytes of bodies stored in full (None: no bound); :meth:`body_fields` spends it."""

    def __init__(self, path: Path | str, redact: Redactor | None = None, body_budget: int | None = None):
        self.body_budget = body_budget
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._redact = redact or Redactor([])
        self._lock = threading.Lock()
        self._file = self.path.open("a", encoding="utf-8")

    def body_fields(self, raw: bytes, parsed: tuple[Any, str | None] | None = None) -> dict[str, Any]:
        """``{"body", "body_encoding"}`` of ``raw`` (``parsed``: its :func:`encode_body`, when already
        computed) while the body budget lasts, else :func:`truncated_body` (the body is never parsed)."""
        with self._lock:
            fits = len(raw) <= FULL_BODY_MAX and (self.body_budget is None or len(raw) <= self.body_budget)
            if fits and self.body_budget is not None:
                self.body_budget -= len(raw)
        if not fits:
            return truncated_body(raw)
        body, encoding = parsed if parsed is not None else encode_body(raw)
        return {"body": body, "body_encoding": encoding}

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, default=str)
        # U+2028/U+2029 are valid inside JSON strings but split lines in some readers
        line = self._redact(line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
        with self._lock:
            if self._file.closed:
                return
            self._file.write(line + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            self._file.close()


#: Bounds of a proxy log read back (the file, and each record; see :mod:`harness.untrusted`).
LOG_BOUNDS = untrusted.Bounds(max_bytes=1 << 30, max_depth=512, max_items=10_000_000, max_string=256 * 2**20)


@dataclass
class ProxyRecords:
    """The records of one ``proxy.jsonl`` in file order, split by ``type``.

    ``broken_lines``: lines that were not JSON objects (always 0 from a strict read).
    """

    requests: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    broken_lines: int = 0


def load_log(path: Path | str, *, lenient: bool = False) -> ProxyRecords:
    """Every record of a ``proxy.jsonl`` within :data:`LOG_BOUNDS` (the one reader of proxy logs;
    invalid UTF-8 replaced).

    Strict (default): a line that is not a JSON object, or a file or record past the bounds, raises
    ``ValueError`` naming the file (and line); nothing else.  ``lenient``: such lines are counted in
    ``broken_lines`` and skipped (for metrics read from whatever an episode left behind).
    Lines end at ``\\n`` only (a record's strings may hold other line separators, e.g. U+0085).
    """
    out = ProxyRecords()
    read = untrusted.read_text(path, LOG_BOUNDS.max_bytes, str(path))
    if not read.ok:
        if lenient:
            return out
        raise ValueError(read.reason)
    for lineno, line in enumerate(read.value.split("\n"), 1):
        if not line.strip():
            continue
        record, reason = _record(line, f"{path}: line {lineno}")
        if reason is not None:
            if lenient:
                out.broken_lines += 1
                continue
            raise ValueError(reason)
        out.records.append(record)
        kind = _kind(record)
        if kind == "request":
            out.requests.append(record)
        elif kind == "response":
            out.responses.append(record)
    return out


def last_request_seq(path: Path | str) -> int | None:
    """The ``seq`` of the last request record (with an integer ``seq``) of a ``proxy.jsonl``; None when there is
    none or the file cannot be read.

    Reads the file backwards from its end and parses lines as a lenient :func:`load_log` does (broken lines
    skipped), so a long log costs only its last records (a 70 MB log: milliseconds, not a full parse).
    """
    for line in _lines_from_end(path):
        if not line.strip():
            continue
        record, _ = _record(line.decode("utf-8", "replace"), f"{path}: a line")
        if record is not None and _kind(record) == "request" and type(record.get("seq")) is int:
            return record["seq"]
    return None


def _record(line: str, name: str) -> tuple[dict[str, Any] | None, str | None]:
    """One log line as ``(record, None)``, or ``(None, reason)`` when it is not a JSON object within bounds."""
    parsed = untrusted.parse_json(line, LOG_BOUNDS, name)
    if not parsed.ok:
        return None, parsed.reason
    if not isinstance(parsed.value, dict):
        return None, f"{name}: not a JSON object"
    return parsed.value, None


def _kind(record: dict[str, Any]) -> Any:
    return record.get("type", record.get("kind"))


def _lines_from_end(path: Path | str, block: int = 1 << 20) -> Iterator[bytes]:
    """The ``\\n``-separated lines of a regular file (links not followed, at most ``LOG_BOUNDS.max_bytes``),
    last line first; nothing when the file cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > LOG_BOUNDS.max_bytes:
            return
        pos, partial = st.st_size, b""
        while pos > 0:
            step = min(block, pos)
            pos -= step
            fh.seek(pos)
            lines = (fh.read(step) + partial).split(b"\n")
            partial = lines.pop(0)  # may continue in the block before
            yield from reversed(lines)
        yield partial


def read_log(path: Path | str) -> list[dict[str, Any]]:
    """All records of a ``proxy.jsonl`` in file order (strict :func:`load_log`)."""
    return load_log(path).records

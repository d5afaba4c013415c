"""An episode's proxy log, ``proxy.jsonl.zst``: one JSON object per line, request and response records, stored
zstd-compressed and flushed record by record (:mod:`harness.logfile`: a killed run loses at most the record in
flight); read back by :mod:`harness.proxy_records`.  A log path not ending in ``.zst`` is written plain.

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
lasts (``RunSettings.proxy_log_mb``, counted in uncompressed bytes); past it, or over :data:`FULL_BODY_MAX`
bytes, a body is stored truncated: its
first :data:`TRUNCATED_PREFIX` bytes as text, with ``"truncated": true``,
``"size"`` (bytes of the whole body) and ``"sha256"`` (hex digest of it).  JSON
string escaping keeps every record on one line.  Headers are logged from an
allowlist only, so credentials never reach the file; every line is also scrubbed
of the upstream's secrets before it is written.  The log stays within the
reader's bound (:data:`harness.logfile.MAX_BYTES` of uncompressed lines, whatever
the budget): a record that would pass it is stored with its body truncated (``size``
and ``sha256`` then those of the body as the log would have held it, JSON
re-serialized), or left out when even that does not fit, so every log reads back whole.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from pathlib import Path
from typing import Any

from harness.logfile import MAX_BYTES, LogWriter
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
    """Appends records to ``path`` (created with its parent folders; compressed when its name ends in ``.zst``);
    thread-safe.

    ``body_budget``: bytes of bodies stored in full (None: no bound); :meth:`body_fields` spends it.
    ``max_bytes``: uncompressed bytes the log holds at most (the reader's bound); ``left_out``: records
    past it that were not written."""

    def __init__(self, path: Path | str, redact: Redactor | None = None, body_budget: int | None = None,
                 max_bytes: int = MAX_BYTES):
        self.body_budget = body_budget
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.left_out = 0
        self._redact = redact or Redactor([])
        self._lock = threading.Lock()
        self._log = LogWriter(self.path)

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

    def _line(self, record: dict[str, Any]) -> bytes:
        line = json.dumps(record, ensure_ascii=False, default=str)
        # U+2028/U+2029 are valid inside JSON strings but split lines in some readers
        return (self._redact(line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")) + "\n").encode()

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line (see the module docstring for what is done past ``max_bytes``)."""
        data = self._line(record)
        with self._lock:
            room = self.max_bytes - self._log.size
        if len(data) > room and record.get("body") is not None and not record.get("truncated"):
            data = self._line({**record, **truncated_body(decode_body(record["body"], record.get("body_encoding")))})
        with self._lock:
            if self._log.closed:
                return
            if len(data) > self.max_bytes - self._log.size:
                self.left_out += 1
                return
            self._log.write(data)

    def close(self) -> None:
        """End the log (its last compressed frame) and close the file."""
        with self._lock:
            self._log.close()

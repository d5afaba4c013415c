"""Reading an episode's ``proxy.jsonl`` back (the format: :mod:`harness.proxy.log`, which writes it).

The one reader of proxy logs, outside the proxy package so that the engine's other parts (the metric
extractors' :class:`harness.contracts.EpisodeArtifacts`, the trajectory floor) read a log without the proxy.
"""

from __future__ import annotations

import os
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness import untrusted

#: Bounds of a proxy log read back (the file, and each record; see :mod:`harness.untrusted`).
LOG_BOUNDS = untrusted.Bounds(max_bytes=1 << 30, max_depth=512, max_items=10_000_000, max_string=256 * 2**20)


@dataclass
class ProxyRecords:
    """The records of one ``proxy.jsonl`` in file order, split by ``type``.

    ``broken_lines``: lines that were not JSON objects (always 0 from a strict read).  Each record is
    validated where it differs from the previous record of its type only (a request repeats the conversation
    so far), so ``values_checked`` and ``chars_checked`` grow with the log's new bytes, not its size.
    """

    requests: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    broken_lines: int = 0
    #: work of the read: JSON values and string characters validated (:class:`harness.untrusted.IncrementalCheck`)
    values_checked: int = 0
    chars_checked: int = 0


def load_log(path: Path | str, *, lenient: bool = False) -> ProxyRecords:
    """Every record of a ``proxy.jsonl`` within :data:`LOG_BOUNDS` (the one reader of proxy logs;
    invalid UTF-8 replaced).

    Strict (default): a line that is not a JSON object, or a file or record past the bounds, raises
    ``ValueError`` naming the file (and line); nothing else.  ``lenient``: such lines are counted in
    ``broken_lines`` and skipped (for metrics read from whatever an episode left behind).
    Lines end at ``\\n`` only (a record's strings may hold other line separators, e.g. U+0085).
    Inside :func:`one_parse_per_episode` a file is parsed once, whoever asks and however strictly; the records
    returned are then shared, and read-only by contract.
    """
    memo = _episode_parses.get()
    key = os.path.abspath(path)
    if memo is not None and key in memo:
        out, reason = memo[key]
    else:
        out, reason = _parse(path)
        if memo is not None:
            memo[key] = (out, reason)
    if reason is not None and not lenient:
        raise ValueError(reason)
    return out


@contextmanager
def one_parse_per_episode() -> Iterator[None]:
    """Within this block (one thread's context), :func:`load_log` and :func:`read_log` parse each file once:
    the episode runner wraps an episode's trajectory conversion, trajectory floor and metric extractors in it,
    so its ``proxy.jsonl`` is parsed once whoever reads it.  Nothing outlives the block."""
    token = _episode_parses.set({})
    try:
        yield
    finally:
        _episode_parses.reset(token)


#: the parses of the current :func:`one_parse_per_episode` block: path -> (records, first problem or None)
_episode_parses: ContextVar[dict[str, tuple[ProxyRecords, str | None]] | None] = ContextVar(
    "proxy_log_parses", default=None)


def _parse(path: Path | str) -> tuple[ProxyRecords, str | None]:
    """The records a lenient read keeps, and the first reason a strict read would raise (None: none)."""
    out = ProxyRecords()
    read = untrusted.read_text(path, LOG_BOUNDS.max_bytes, str(path))
    if not read.ok:
        return out, read.reason
    first: str | None = None
    checker = untrusted.IncrementalCheck(LOG_BOUNDS)
    for lineno, line in enumerate(read.value.split("\n"), 1):
        if not line.strip():
            continue
        record, reason = _record(line, f"{path}: line {lineno}", checker)
        if record is None:
            out.broken_lines += 1
            first = first or reason
            continue
        out.records.append(record)
        kind = _kind(record)
        if kind == "request":
            out.requests.append(record)
        elif kind == "response":
            out.responses.append(record)
    out.values_checked, out.chars_checked = checker.values_checked, checker.chars_checked
    return out, first


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


def _record(line: str, name: str, checker: untrusted.IncrementalCheck | None = None
            ) -> tuple[dict[str, Any] | None, str | None]:
    """One log line as ``(record, None)``, or ``(None, reason)`` when it is not a JSON object within bounds;
    ``checker``: validates the record against the previous record of its type (see :func:`_parse`)."""
    parsed = untrusted.parse_json(line, LOG_BOUNDS, name, checker=checker)
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

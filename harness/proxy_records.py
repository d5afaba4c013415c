"""Reading an episode's proxy log back (``proxy.jsonl.zst``, or an older run's plain ``proxy.jsonl``; the format:
:mod:`harness.proxy.log`, which writes it).

The one reader of proxy log records, outside the proxy package so that the engine's other parts (the metric
extractors' :class:`harness.contracts.EpisodeArtifacts`, the trajectory floor) read a log without the proxy.
Its bytes, compressed or not, are read through :mod:`harness.logfile` (frames, a cut last frame, the bound
in decompressed bytes); :func:`proxy_log` finds an episode folder's log under either name.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from harness import logfile, untrusted

#: Bounds of a proxy log read back (its decompressed bytes, and each record; see :mod:`harness.untrusted`).
LOG_BOUNDS = untrusted.Bounds(max_bytes=logfile.MAX_BYTES, max_depth=512, max_items=10_000_000,
                              max_string=256 * 2**20)
#: The name of the log an episode's proxy writes (compressed, :mod:`harness.logfile`), and an older run's.
LOG_NAME, PLAIN_LOG_NAME = LOG_NAMES = logfile.log_names("proxy.jsonl")


def proxy_log(folder: Path | str) -> Path | None:
    """The proxy log of ``folder`` (an episode's, or one model call's ``proxy/<call>/``): ``proxy.jsonl.zst``,
    else an older run's ``proxy.jsonl``; None when it has neither as a regular file."""
    return logfile.log_file(folder, PLAIN_LOG_NAME)


@dataclass
class ProxyRecords:
    """The records of one proxy log in file order, split by ``type``.

    ``broken_lines``: lines that were not JSON objects (always 0 from a strict read).  ``cut``: the log
    ends cut short -- a compressed frame without its end, or a last line without ``\\n`` that is not a whole
    record: its writer was stopped, and the record it had in flight (if any) is left out, without an error.
    ``unread``: why the log was not read to its end (past :data:`LOG_BOUNDS` in decompressed bytes, corrupt
    compressed data, a file that cannot be read), None when it was; the records before that point are kept
    by a lenient read.  Each record is validated where it differs from the previous record of its type only
    (a request repeats the conversation so far), so ``values_checked`` and ``chars_checked`` grow with the
    log's new bytes, not its size.
    """

    requests: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    records: list[dict[str, Any]] = field(default_factory=list)
    broken_lines: int = 0
    cut: bool = False
    unread: str | None = None
    #: work of the read: JSON values and string characters validated (:class:`harness.untrusted.IncrementalCheck`)
    values_checked: int = 0
    chars_checked: int = 0


def load_log(path: Path | str, *, lenient: bool = False) -> ProxyRecords:
    """Every record of a proxy log (compressed or plain) within :data:`LOG_BOUNDS` (the one reader of proxy logs;
    invalid UTF-8 replaced).

    Strict (default): a line that is not a JSON object, or a file or record past the bounds, raises
    ``ValueError`` naming the file (and line); nothing else.  ``lenient``: such lines are counted in
    ``broken_lines`` and skipped, and a log past the bounds gives its records up to them (``unread`` says
    why it stopped) -- for metrics read from whatever an episode left behind.  Either way a last record cut
    short (a writer stopped mid-record) is left out without an error (``cut``).
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
    lines = logfile.read_lines(path, LOG_BOUNDS.max_bytes, str(path))
    first: str | None = None
    checker = untrusted.IncrementalCheck(LOG_BOUNDS)
    lineno = 0
    for _, raw, terminated in lines:
        lineno += 1
        line = raw.decode("utf-8", "replace")
        if not line.strip():
            continue
        record, reason = _record(line, f"{path}: line {lineno}", checker)
        if record is None:
            if not terminated:  # the record a stopped writer had in flight
                out.cut = True
                continue
            out.broken_lines += 1
            first = first or reason
            continue
        out.records.append(record)
        kind = _kind(record)
        if kind == "request":
            out.requests.append(record)
        elif kind == "response":
            out.responses.append(record)
    out.unread = lines.problem
    out.cut = out.cut or lines.cut
    out.values_checked, out.chars_checked = checker.values_checked, checker.chars_checked
    return out, first or lines.problem


def last_request_seq(path: Path | str) -> int | None:
    """The ``seq`` of the last request record (with an integer ``seq``) of a proxy log; None when there is
    none or the file cannot be read.

    Parses lines as a lenient :func:`load_log` does (broken lines skipped) but only near the log's end
    (:func:`harness.logfile.lines_from_end`), so a long log costs little more than reading its bytes: a plain
    log is read backwards from its end (a 70 MB log: milliseconds); a compressed one is decompressed once,
    keeping only its last lines that may be requests (the full read is the fallback when none of them is).
    """
    last = logfile.lines_from_end(path, LOG_BOUNDS.max_bytes, keep=_may_be_request, hold=_RECENT_BYTES)
    for line in last:
        seq = _request_seq(line)
        if seq is not None:
            return seq
    if last.dropped:  # every line held was another record's: read the whole log
        seqs = [r["seq"] for r in load_log(path, lenient=True).requests if type(r.get("seq")) is int]
        return seqs[-1] if seqs else None
    return None


def _may_be_request(line: bytes) -> bool:
    return b'"request"' in line  # how the proxy (json.dumps) writes a request's type: not escaped


#: Bytes of a compressed log's last candidate request lines :func:`last_request_seq` keeps.
_RECENT_BYTES = 64 << 20


def _request_seq(line: bytes) -> int | None:
    if not line.strip():
        return None
    record, _ = _record(line.decode("utf-8", "replace"), "a line")
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


def first_record(path: Path | str) -> dict[str, Any] | None:
    """The first record of a proxy log (compressed or plain): its first line when that is a JSON object within
    :data:`LOG_BOUNDS`, else None (an empty, unreadable or missing log too).  Reads only as far as that line."""
    for _, line, _ in logfile.read_lines(path, LOG_BOUNDS.max_bytes, str(path)):
        record, _ = _record(line.decode("utf-8", "replace"), f"{path}: line 1")
        return record
    return None


def read_log(path: Path | str) -> list[dict[str, Any]]:
    """All records of a proxy log in file order (strict :func:`load_log`)."""
    return load_log(path).records

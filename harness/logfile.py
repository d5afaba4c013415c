"""Append-only JSON-lines logs on disk, plain or zstd-compressed: the one writer and the one reader of their bytes.

The model proxy's log (``proxy.jsonl.zst``: :mod:`harness.proxy.log` writes its records,
:mod:`harness.proxy_records` parses them) is written and read here, and so is every other reader of it (the
viewer's calls, :func:`harness.proxy_records.last_request_seq`, a plugin through :mod:`harness.wire`).

Format.  A log is a sequence of lines, each ending in ``\\n``.  A file whose name ends in ``.zst``
(:data:`COMPRESSED_SUFFIX`) holds them as zstd frames (RFC 8878) whose decompressed bytes, concatenated, are the
lines; any other name holds them as they are.  Readers tell the two apart by the file's first bytes (the zstd
magic number), not by its name, so an old run's plain ``proxy.jsonl`` reads as before.

Writing (:class:`LogWriter`).  A writer opens one frame and, after every line, flushes a block
(``FLUSH_BLOCK``) and writes it to the file: a killed writer leaves a frame without its end whose flushed
blocks all decode, so it loses at most the line in flight.  :meth:`LogWriter.close` ends the frame (with its
checksum).  A writer that opens an existing log appends a new frame; when the file ends in a cut frame (a killed
writer's), it is first rewritten holding its complete lines (so a frame never follows a cut one it would be
read as part of).

Level (chosen once, here): zstd level 7 (:data:`LEVEL`) with the level's own parameters -- no long-distance
matching, a 2 MiB window.  Measured on the 200k-token stress log (``benchmarks/proxy_log.py``: 556 records,
69.5 MB plain, a block flushed per record): level 1 (512 KiB window) 2.6 MB, level 3 237 kB, level 7 140 kB,
level 9 127 kB; with streamed replies (``text/event-stream`` bodies, one event per word, as real replies
come: ``benchmarks/store.py``) level 3 gives 432 kB, level 5 354 kB, level 7 146 kB, level 9 131 kB, so level
3 sits at the size goal (0.5 MB) and 7 well inside it.  Compressing the whole 70 MB takes 0.07 s of CPU at
level 3, 0.10 s at 7 and 0.18 s at 9 (writing the records, JSON encoding included, about 1.1 s either way); a
writer holds its 2 MiB window and a context zstd estimates at 1.2 MiB (level 3), 5.5 MiB (7) or 10.5 MiB (9),
once per log being written (long-window mode costs about 200 MB).  Level 7 keeps the goal with room at
about 8 MiB per concurrent episode.  Its limit is the window: a request repeats the conversation before it,
which lies inside the window while one request is under 2 MiB (about 500k tokens); a longer one is compressed
mostly against itself (a synthetic conversation of 4.3 MB requests at level 3: 10 MB of 28 MB, against
3.1 MB with an 8 MiB window).

Reading (:func:`read_lines`).  Frames are found from their headers and block headers without decompressing
(:func:`frames`) and decompressed one after the other; a cut last frame yields its complete lines (its last,
partial line is dropped).  Bytes after a cut frame (only a writer other than :class:`LogWriter` leaves any)
are not read, and the read says so.  ``max_bytes`` counts decompressed bytes: past it the
read stops, having yielded the lines before the bound, and says why (``problem``): a small file cannot expand
without bound, and a log over the bound still reads up to it.  Offsets are positions in the decompressed
stream (the frames' output concatenated; the file's bytes for a plain log): :func:`line_at` reads one line back.
:func:`lines_from_end` gives the last lines first (a plain log read backwards; a compressed one decompressed
from its start, keeping only its last lines).

Whole files compressed after the fact, in this format (an older run's plain log, an agent's native logs), are
written and read whole by :mod:`harness.compressed_files` (:func:`content_chunks`, :func:`open_regular`).
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from harness.lazy import lazy_module

if TYPE_CHECKING:
    import zstandard
else:  # loaded with the first log written or read: modules that import these readers at their top pay nothing
    zstandard = lazy_module("zstandard")

#: zstd compression level of every log written (see the module docstring).
LEVEL = 7
#: Name suffix of a compressed log (``proxy.jsonl.zst``).
COMPRESSED_SUFFIX = ".zst"
#: Largest log read or written, in decompressed bytes (the proxy log reader's bound).
MAX_BYTES = 1 << 30
#: Bytes decompressed (or read) at a time.
CHUNK = 1 << 20

_MAGIC = b"\x28\xb5\x2f\xfd"  # 0xFD2FB528 little-endian (RFC 8878 3.1.1): a zstd frame begins with it
_SKIPPABLE = range(0x184D2A50, 0x184D2A60)
_MAX_BLOCK = 128 * 1024
_FCS_SIZES = (0, 2, 4, 8)
_DICT_ID_SIZES = (0, 1, 2, 4)


def _compressobj() -> Any:
    """A streaming compressor of one frame at :data:`LEVEL`, with the frame's checksum."""
    return zstandard.ZstdCompressor(level=LEVEL, write_checksum=True).compressobj()


def writer_memory() -> int:
    """Bytes one writer's compression context holds (zstd's own estimate at :data:`LEVEL`)."""
    return zstandard.ZstdCompressionParameters.from_level(LEVEL).estimated_compression_context_size()


def log_file(folder: Path | str, name: str) -> Path | None:
    """The log ``name`` of ``folder``: ``name + ".zst"`` when that is a regular file, else ``name`` when that is
    one (an older run's plain log), else None.  Links are not followed."""
    for candidate in (Path(folder) / (name + COMPRESSED_SUFFIX), Path(folder) / name):
        try:
            if stat.S_ISREG(os.lstat(candidate).st_mode):
                return candidate
        except OSError:
            continue
    return None


def log_names(name: str) -> tuple[str, str]:
    """The file names log ``name`` may have, the compressed one first: ``("proxy.jsonl.zst", "proxy.jsonl")``."""
    return name + COMPRESSED_SUFFIX, name


# -- the frames of a compressed file ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Frame:
    """One zstd frame of a file: bytes ``start`` to ``end``; ``complete`` False when the file ends inside it
    (``end`` is then the end of its last whole block).  Skippable frames are not listed."""

    start: int
    end: int
    complete: bool


def is_compressed(fh: BinaryIO) -> bool:
    """Whether the open file begins with a zstd frame (or a skippable one); reads from its start."""
    fh.seek(0)
    head = fh.read(4)
    return head == _MAGIC or (len(head) == 4 and int.from_bytes(head, "little") in _SKIPPABLE)


def frames(fh: BinaryIO, size: int) -> tuple[list[Frame], str | None]:
    """The frames of the zstd data in ``fh`` (``size`` bytes), found from frame and block headers without
    decompressing, and the reason the walk stopped before ``size`` (None: it reached the end, or the file ends
    inside its last frame).  Every frame but the last listed is complete; the walk ends at a frame that is not
    (what follows it would be read as its blocks: a frame appended after a cut one is reported corrupt)."""
    out: list[Frame] = []
    pos = 0
    while pos < size:
        fh.seek(pos)
        head = fh.read(18)
        if _MAGIC.startswith(head):  # a frame cut inside its magic number: nothing of it was written
            return out, None
        magic = int.from_bytes(head[:4], "little")
        if len(head) >= 8 and magic in _SKIPPABLE:
            pos += 8 + int.from_bytes(head[4:8], "little")
            continue
        if head[:4] != _MAGIC:
            return out, f"not zstd data at byte {pos}"
        if len(head) < 5:
            return out, None
        fhd = head[4]
        if fhd & 0x08:
            return out, f"a reserved bit is set in the frame header at byte {pos}"
        single = bool(fhd & 0x20)
        fcs = _FCS_SIZES[fhd >> 6] or (1 if single else 0)
        checksum = 4 if fhd & 0x04 else 0
        block = pos + 5 + (0 if single else 1) + _DICT_ID_SIZES[fhd & 0x03] + fcs
        end, complete = (block, False) if block <= size else (pos, False)
        while block + 3 <= size:
            fh.seek(block)
            bh = int.from_bytes(fh.read(3), "little")
            kind, length = (bh >> 1) & 3, bh >> 3
            if kind == 3 or length > _MAX_BLOCK:
                out.append(Frame(pos, end, False))
                return out, f"a corrupt block header at byte {block}"
            following = block + 3 + (1 if kind == 1 else length)
            if following > size:
                break
            block = end = following
            if bh & 1:  # the frame's last block
                if block + checksum <= size:
                    end, complete = block + checksum, True
                break
        out.append(Frame(pos, end, complete))
        if not complete:
            return out, None  # the file ends inside this frame (its writer was stopped)
        pos = end
    return out, None


class _Slice:
    """Bytes ``start`` to ``end`` of ``fh`` as a readable stream (a frame for the decompressor)."""

    def __init__(self, fh: BinaryIO, start: int, end: int):
        self.fh, self.pos, self.end = fh, start, end

    def read(self, n: int = -1) -> bytes:
        n = self.end - self.pos if n is None or n < 0 else min(n, self.end - self.pos)
        if n <= 0:
            return b""
        self.fh.seek(self.pos)
        data = self.fh.read(n)
        self.pos += len(data)
        return data


# -- reading ---------------------------------------------------------------------------------------------------


class LogLines:
    """The lines of one log, read lazily: iterating yields ``(offset, line, terminated)`` -- the line's
    position in the decompressed stream, its bytes without the ``\\n``, and False for a last fragment without
    one (at the file's end, or at the end of a cut frame: the line a stopped writer had in flight, unless it
    is whole).  After the iteration, ``problem`` says why it stopped before the end (None: it read everything),
    ``compressed`` whether the file is zstd data, ``cut`` whether a frame ends cut, and ``size`` the
    (decompressed) bytes read.

    ``max_bytes``: decompressed bytes read at most (the lines before the bound are yielded); ``name``: how
    reasons call the file; ``start``: lines beginning before this offset are skipped (cheaply: not split).  A
    missing, linked or non-regular file yields nothing, with a reason.  Never raises for any file content."""

    def __init__(self, path: Path | str, max_bytes: int = MAX_BYTES, name: str | None = None, start: int = 0):
        self.path, self.max_bytes, self.start = path, max_bytes, start
        self.name = name or str(path)
        self.problem: str | None = None
        self.compressed = False
        self.cut = False
        self.size = 0

    def __iter__(self) -> Iterator[tuple[int, bytes, bool]]:
        fh, self.problem = open_regular(self.path, self.name)
        if fh is None:
            return
        with fh:
            try:
                st = os.fstat(fh.fileno())
                self.compressed = is_compressed(fh)
                if self.compressed:
                    yield from self._split(self._decompressed(fh, st.st_size))
                else:  # a plain log: the offsets are the file's, so reading begins at ``start``
                    fh.seek(self.start)
                    self.size = min(self.start, st.st_size)
                    yield from self._split(iter(lambda: fh.read(CHUNK), b""), self.size)
            except OSError as exc:
                self.problem = f"{self.name} could not be read: {exc.strerror or exc}"

    def _decompressed(self, fh: BinaryIO, size: int) -> Iterator[bytes | None]:
        """The decompressed chunks of every frame; None where a frame ends cut (its last line is partial)."""
        found, problem = frames(fh, size)
        dctx = zstandard.ZstdDecompressor()
        for frame in found:
            source = _Slice(fh, frame.start, frame.end)  # zstandard reads any object with read()
            reader = dctx.stream_reader(source, read_size=CHUNK, read_across_frames=False)  # type: ignore[arg-type]
            try:
                while chunk := reader.read(CHUNK):
                    yield chunk
            except zstandard.ZstdError as exc:
                self.problem = f"{self.name}: corrupt zstd data in the frame at byte {frame.start} ({exc})"
                yield None
                return
            if not frame.complete:
                self.cut = True
                yield None
        if problem:
            self.problem = f"{self.name}: {problem}; the rest was not read"

    def _split(self, chunks: Iterator[bytes | None], pos: int = 0) -> Iterator[tuple[int, bytes, bool]]:
        """Lines of a stream of chunks beginning at offset ``pos`` (None: the line under way ends there,
        unterminated)."""
        parts: list[bytes] = []  # the line under way so far
        at = pos  # its offset
        for chunk in chunks:
            if chunk is None:
                if parts and at >= self.start:
                    yield at, b"".join(parts), False
                parts, at = [], pos
                continue
            over = self.size + len(chunk) > self.max_bytes
            if over:
                chunk = chunk[:self.max_bytes - self.size]
            self.size += len(chunk)
            if self.size <= self.start:  # wholly before the lines wanted: only where the last line begins
                at = pos + chunk.rfind(b"\n") + 1 if b"\n" in chunk else at
                parts = []
            else:
                pieces = chunk.split(b"\n")
                tail = pieces.pop()
                if pieces:
                    first = pieces[0]
                    if at >= self.start:
                        yield at, b"".join(parts) + first if parts else first, True
                    parts, at = [], pos + len(first) + 1
                    for line in pieces[1:]:
                        if at >= self.start:
                            yield at, line, True
                        at += len(line) + 1
                if tail:
                    parts.append(tail)
            pos += len(chunk)
            if over:
                self.problem = (f"{self.name} is larger than the {self.max_bytes}-byte bound"
                                f"{' when decompressed' if self.compressed else ''}; the rest was not read")
                return
        if parts and at >= self.start:
            yield at, b"".join(parts), False


def open_regular(path: Path | str, name: str) -> tuple[BinaryIO | None, str | None]:
    """``(file, None)``: ``path`` opened for binary reading when it is a regular file (links not followed), else
    ``(None, reason)`` naming it as ``name`` (not found, a link, not a regular file, cannot be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, f"{name} not found"
    except OSError as exc:
        return None, (f"{name} is a symbolic link; it was not read" if Path(path).is_symlink()
                      else f"{name} could not be opened: {exc.strerror or exc}")
    fh = os.fdopen(fd, "rb")
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError as exc:
        fh.close()
        return None, f"{name} could not be read: {exc.strerror or exc}"
    if not regular:
        fh.close()
        return None, f"{name} is not a regular file; it was not read"
    return fh, None


def read_lines(path: Path | str, max_bytes: int = MAX_BYTES, name: str | None = None, start: int = 0) -> LogLines:
    """The lines of the log at ``path`` (plain or compressed), read lazily: see :class:`LogLines`."""
    return LogLines(path, max_bytes, name, start)


def line_at(path: Path | str, offset: int, max_bytes: int = MAX_BYTES) -> bytes | None:
    """The line beginning at ``offset`` of the decompressed stream (an offset :func:`read_lines` gave), without its
    ``\\n``; None when there is none or the file cannot be read.  A plain log is read from ``offset`` on; a
    compressed one is decompressed from its start (the bytes before ``offset`` are not split into lines)."""
    for at, line, _ in read_lines(path, max_bytes, start=offset):
        return line if at == offset else None
    return None


class LastLines:
    """The lines of a log that ``keep`` accepts, last first, without their ``\\n`` (iterate; a last fragment
    without one is a line too).  A plain log is read backwards from its end, a block at a time, so a long log
    costs only its last lines; a compressed one is decompressed from its start (frames cannot be read
    backwards), holding the last accepted lines up to ``hold`` bytes -- ``dropped`` (after the iteration)
    says whether earlier accepted lines were let go.  Nothing is yielded when the file cannot be read (links
    not followed), nor for a plain file over ``max_bytes``; a compressed one is read up to ``max_bytes``
    decompressed."""

    def __init__(self, path: Path | str, max_bytes: int = MAX_BYTES, keep: Callable[[bytes], bool] = bool,
                 hold: int = 64 << 20, block: int = CHUNK):
        self.path, self.max_bytes, self.keep, self.hold, self.block = path, max_bytes, keep, hold, block
        self.dropped = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return
            if is_compressed(fh):
                yield from self._held()
                return
            if st.st_size > self.max_bytes:
                return
            pos, partial = st.st_size, b""
            while pos > 0:
                step = min(self.block, pos)
                pos -= step
                fh.seek(pos)
                lines = (fh.read(step) + partial).split(b"\n")
                partial = lines.pop(0)  # may continue in the block before
                yield from (line for line in reversed(lines) if self.keep(line))
            if self.keep(partial):
                yield partial

    def _held(self) -> Iterator[bytes]:
        recent: deque[bytes] = deque()
        held = 0
        for _, line, _ in read_lines(self.path, self.max_bytes):
            if not self.keep(line):
                continue
            recent.append(line)
            held += len(line)
            while held > self.hold and len(recent) > 1:
                held -= len(recent.popleft())
                self.dropped = True
        yield from reversed(recent)


def lines_from_end(path: Path | str, max_bytes: int = MAX_BYTES, keep: Callable[[bytes], bool] = bool,
                   hold: int = 64 << 20) -> LastLines:
    """The lines of the log at ``path`` that ``keep`` accepts, last first: see :class:`LastLines`."""
    return LastLines(path, max_bytes, keep, hold)


# -- a file's whole content (harness.compressed_files reads and writes whole files) -------------------------


def content_chunks(fh: BinaryIO, state: LogLines) -> Iterator[bytes]:
    """The content of the open file ``fh`` in chunks: a plain file's bytes, or a compressed one's frames
    decompressed (a cut last frame: what it holds).  ``state`` (a :class:`LogLines` of the file) takes
    ``compressed`` and the reason a compressed read stopped early (``problem``)."""
    state.compressed = is_compressed(fh)
    if state.compressed:
        yield from (c for c in state._decompressed(fh, os.fstat(fh.fileno()).st_size) if c is not None)
    else:
        fh.seek(0)
        yield from iter(lambda: fh.read(CHUNK), b"")


# -- writing ---------------------------------------------------------------------------------------------------


class LogWriter:
    """Appends lines to the log at ``path`` (created with its parent folders), compressed when its name ends in
    :data:`COMPRESSED_SUFFIX` (an existing file keeps its format); every :meth:`write` reaches the file before it returns.  Not thread-safe: callers
    hold their own lock.

    ``size``: the log's decompressed bytes, those already in an appended file included.  Appending to a file
    that ends in a cut frame rewrites it first with its complete lines (the partial one is dropped); to a plain
    file whose last line has no ``\\n``, a ``\\n`` is written first."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.compressed = self.path.name.endswith(COMPRESSED_SUFFIX)  # an existing file keeps its format
        self.size, unterminated = self._existing()
        self._file = self.path.open("ab")
        self._cobj = _compressobj() if self.compressed else None
        self._started = False
        if unterminated:
            self.write(b"\n")

    def _existing(self) -> tuple[int, bool]:
        """(decompressed bytes already in the file, whether they end inside a line)."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return 0, False
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return 0, False
        with self.path.open("rb") as fh:
            self.compressed = is_compressed(fh)
            if not self.compressed:
                fh.seek(st.st_size - 1)
                return st.st_size, fh.read(1) != b"\n"
            found, problem = frames(fh, st.st_size)
        if problem is None and all(f.complete for f in found):
            lines = read_lines(self.path, max_bytes=1 << 62)
            last = True
            for _, _, last in lines:
                pass
            return lines.size, not last
        return self._rewrite(), False

    def _rewrite(self) -> int:
        """Rewrite the compressed file with its complete lines only, atomically (a crash leaves the old file);
        returns their bytes."""
        tmp = self.path.with_name(self.path.name + ".rewrite")
        size = 0
        cobj = _compressobj()
        with tmp.open("wb") as out:
            for _, line, terminated in read_lines(self.path, max_bytes=1 << 62):
                if terminated:
                    size += len(line) + 1
                    out.write(cobj.compress(line + b"\n"))
            out.write(cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.path)
        return size

    def write(self, data: bytes) -> None:
        """Append ``data`` (whole lines, each ending in ``\\n``) and flush it to the file."""
        self.size += len(data)
        if self._cobj is not None:
            self._started = True
            data = self._cobj.compress(data) + self._cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
        self._file.write(data)
        self._file.flush()

    @property
    def closed(self) -> bool:
        return self._file.closed

    def close(self) -> None:
        """End the frame (when one was begun) and close the file; calling it again does nothing."""
        if self._file.closed:
            return
        try:
            if self._cobj is not None and self._started:
                self._file.write(self._cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
        finally:
            self._file.close()

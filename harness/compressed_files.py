"""Whole files stored zstd-compressed after the fact, and read whole: a log compressed once it is complete (an
older run's ``proxy.jsonl``, an agent's native logs under ``home/``: :mod:`harness.native_logs`).

Same format as :mod:`harness.logfile`'s logs (zstd frames at its level, the ``.zst`` suffix; read by its
readers, which tell a compressed file by its first bytes), written as one frame that declares its size.
:func:`compress_file` is the one writer (atomic, crash-safe, checked; :func:`compressed_size` says what it
would store); :func:`stored_file` the rule every reader follows when a file may be stored either way (the
compressed one first); :func:`read_bytes`, :func:`copy_content`, :func:`content_digest` and
:func:`content_size` read a file's whole content, plain or compressed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from harness import logfile
from harness.lazy import lazy_module

if TYPE_CHECKING:
    import zstandard
else:  # loaded with the first file compressed or read (see harness.logfile)
    zstandard = lazy_module("zstandard")


def stored_file(path: Path | str) -> Path | None:
    """The file holding the text of ``path``: ``path + ".zst"`` when that is a regular file, else ``path`` when
    it is one, else None -- the rule every reader follows (a compressed file is only ever made whole, by a
    rename: :func:`compress_file`), as :func:`harness.logfile.log_file` does for a folder's log.  Links are
    not followed."""
    path = Path(path)
    return logfile.log_file(path.parent, path.name)


def read_bytes(path: Path | str, max_bytes: int = logfile.MAX_BYTES,
               name: str | None = None) -> tuple[bytes | None, str | None]:
    """``(bytes, None)``: the content of the file at ``path`` -- a plain file's bytes, a compressed one's
    decompressed stream (every frame; a cut last frame gives what it holds) -- or ``(None, reason)`` when it
    cannot be read whole: missing, a link or not a regular file, over ``max_bytes`` (decompressed bytes),
    corrupt.  ``name``: how the reason calls the file.  Never raises for any file content."""
    label = name or str(path)
    fh, problem = logfile.open_regular(path, label)
    if fh is None:
        return None, problem
    out = bytearray()
    state = logfile.LogLines(path, max_bytes, label)
    with fh:
        try:
            for chunk in logfile.content_chunks(fh, state):
                if len(out) + len(chunk) > max_bytes:
                    return None, (f"{label} is larger than the {max_bytes}-byte bound"
                                  f"{' when decompressed' if state.compressed else ''}")
                out += chunk
        except OSError as exc:
            return None, f"{label} could not be read: {exc.strerror or exc}"
    if state.problem is not None:
        return None, state.problem
    return bytes(out), None


def content_digest(path: Path | str) -> tuple[str, int] | None:
    """``(SHA-256 hex digest, bytes)`` of the content of the file at ``path`` (decompressed, read a chunk at a
    time); None when it cannot be read whole (see :func:`read_bytes`)."""
    import hashlib

    fh, _ = logfile.open_regular(path, str(path))
    if fh is None:
        return None
    digest, size = hashlib.sha256(), 0
    state = logfile.LogLines(path, 1 << 62)
    with fh:
        try:
            for chunk in logfile.content_chunks(fh, state):
                digest.update(chunk)
                size += len(chunk)
        except OSError:
            return None
    return None if state.problem is not None else (digest.hexdigest(), size)


def content_size(path: Path | str) -> int | None:
    """Bytes of the content of the file at ``path`` (decompressed, for a compressed file: from the frame
    headers when each declares its size, else by decompressing it); None when it cannot be read."""
    fh, _ = logfile.open_regular(path, str(path))
    if fh is None:
        return None
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            if not logfile.is_compressed(fh):
                return size
            found, problem = logfile.frames(fh, size)
            total = 0
            for frame in found:
                fh.seek(frame.start)
                declared = zstandard.frame_content_size(fh.read(18))
                if declared < 0 or not frame.complete:
                    break
                total += declared
            else:
                if problem is None:
                    return total
        except (OSError, zstandard.ZstdError):
            return None
    found = content_digest(path)
    return None if found is None else found[1]


def compressed_size(path: Path | str) -> int | None:
    """Bytes :func:`compress_file` would store the plain file ``path`` in (compressed in memory a chunk at a
    time, nothing written); None when it cannot be read."""
    fh, _ = logfile.open_regular(path, str(path))
    if fh is None:
        return None
    total = 0
    with fh:
        try:
            cobj = zstandard.ZstdCompressor(level=logfile.LEVEL, write_checksum=True).compressobj(
                size=os.fstat(fh.fileno()).st_size)
            while chunk := fh.read(logfile.CHUNK):
                total += len(cobj.compress(chunk))
            total += len(cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
        except OSError:
            return None
    return total


def copy_content(path: Path | str, dest: Path | str) -> str | None:
    """Write the content of the file at ``path`` (plain, or decompressed) to a new file ``dest``, a chunk at a
    time; None when done, else the reason it could not be read whole (``dest`` is then removed)."""
    fh, problem = logfile.open_regular(path, str(path))
    if fh is None:
        return problem
    state = logfile.LogLines(path, 1 << 62)
    with fh, open(dest, "xb") as out:
        try:
            for chunk in logfile.content_chunks(fh, state):
                out.write(chunk)
        except OSError as exc:
            state.problem = f"{path} could not be read: {exc.strerror or exc}"
    if state.problem is not None:
        Path(dest).unlink(missing_ok=True)
    return state.problem


class CompressError(Exception):
    """A file could not be stored compressed; the message names it and says why (it is left as it was)."""


def compress_file(path: Path | str, min_saving: float = 0.0) -> tuple[int, int] | None:
    """Store the plain file ``path`` compressed, as ``path + ".zst"``: one zstd frame at
    :data:`harness.logfile.LEVEL` with its checksum and content size, whose decompressed stream is the file's
    bytes exactly (every reader reads it as it read the plain file: :func:`read_bytes`,
    :func:`harness.logfile.read_lines`, offsets included).  Returns ``(bytes before, bytes after)``; None
    (nothing done) when the file is zstd data already (its readers decompress it as it is), or when the
    compressed file would not be at least ``min_saving`` (a fraction, 0 to 1) smaller than it (data compressed
    already: an image, an archive; never larger, whatever ``min_saving``).

    Crash-safe: the frame is written to ``<name>.zst.tmp``, synced, decompressed again and compared with the
    file (SHA-256), renamed to ``<name>.zst`` -- so a compressed file appears only whole -- and only then is
    the plain file removed.  Stopped anywhere, it leaves the plain file, or both (the compressed one read
    first, :func:`stored_file`: the same bytes), or the compressed one only; called again it finishes (both
    present: checked equal, then the plain one removed).  The file keeps its mode and modification time.
    Raises :class:`CompressError` naming the file (a link or not a regular file, both present and different,
    a copy that does not read back the same) and OSError for a failed read or write; the temporary file is
    removed either way."""
    import hashlib

    path = Path(path)
    target = path.with_name(path.name + logfile.COMPRESSED_SUFFIX)
    tmp = target.with_name(target.name + ".tmp")
    src, problem = logfile.open_regular(path, str(path))
    if src is None:
        raise CompressError(problem)
    with src:
        st = os.fstat(src.fileno())
        try:
            existing = stat.S_ISREG(os.lstat(target).st_mode)
        except FileNotFoundError:
            existing = False
        if existing:  # stopped after its rename: the compressed file is whole; the plain one goes if the same
            if content_digest(target) != _digest_file(src):
                raise CompressError(f"{path}: {target.name} is there too and holds other bytes; neither was changed")
            os.unlink(path)
            return st.st_size, os.lstat(target).st_size
        if logfile.is_compressed(src):
            return None
        src.seek(0)
        digest, before = hashlib.sha256(), 0
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)  # a stopped compression's (never followed: it may be a link)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, stat.S_IMODE(st.st_mode))
        try:
            with os.fdopen(fd, "wb") as out:
                cobj = zstandard.ZstdCompressor(level=logfile.LEVEL, write_checksum=True).compressobj(size=st.st_size)
                while chunk := src.read(logfile.CHUNK):
                    digest.update(chunk)
                    before += len(chunk)
                    out.write(cobj.compress(chunk))
                out.write(cobj.flush(zstandard.COMPRESSOBJ_FLUSH_FINISH))
                out.flush()
                os.fsync(out.fileno())
            if os.lstat(tmp).st_size > before * (1 - min_saving):  # not worth a decompression on every read
                os.unlink(tmp)
                return None
            if before != st.st_size or content_digest(tmp) != (digest.hexdigest(), before):
                raise CompressError(f"{path}: its compressed copy does not read back the same (the file changed "
                                    "while it was read?); it was left as it was")
            os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    _sync_folder(path.parent)
    os.unlink(path)
    return before, os.lstat(target).st_size


def _digest_file(fh: BinaryIO) -> tuple[str, int]:
    """``(SHA-256 hex digest, bytes)`` of an open plain file."""
    import hashlib

    digest, size = hashlib.sha256(), 0
    fh.seek(0)
    while chunk := fh.read(logfile.CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (fsync of the folder; a file system that cannot is left as it is)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

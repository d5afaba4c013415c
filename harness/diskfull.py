"""A full disk is an episode failure, not a crash.

``ENOSPC`` (no space left on device) or ``EDQUOT`` (disk quota exceeded) while an episode's files or the
run's results are written marks the episode ``failed`` with ``error_kind`` ``disk_full`` and an ``error``
starting ``disk full:``, then stops the run with one ``error:`` line and exit code :data:`EXIT_CODE`.  Every
finished episode's ``row.json`` stays; a resume runs the disk-full episode again (the disk was the host's
problem, not the agent's) once there is room.

The agent cannot see the host's ``ENOSPC`` on its own files as the harness does, so after an agent ends the
episode's file system is checked: no byte left (:func:`check_room`) is a full disk too.

So that the failed episode's row can be written on a disk that is full, a run keeps a reserve: a file of
:data:`RESERVE_BYTES` in its folder (``.disk-reserve``, made when the run starts, removed when it ends) that
is given back (:func:`release_reserves`) before the disk-full row is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from pathlib import Path
from typing import Iterator

from harness.errors import EpisodeError, ErrorKind
from harness.untrusted import shown_name

#: ``harness run``'s exit code when a full disk stopped the run (sysexits ``EX_TEMPFAIL``: free space, then
#: run the same command again to resume).
EXIT_CODE = 75
#: The errors that mean the disk (or the user's quota) is full.
ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
#: Bytes a run keeps in its folder for the rows and ``run.json`` written after the disk filled up.
RESERVE_BYTES = 1 << 20
RESERVE_NAME = ".disk-reserve"
_reserves: set[Path] = set()
_reserves_lock = threading.Lock()
_TEXTS = ("no space left on device", "disk quota exceeded")


class DiskFull(EpisodeError):
    """A run stopped by a full disk: the message names the file or folder; exit code :data:`EXIT_CODE`.  An
    :class:`~harness.errors.EpisodeError` of kind ``disk_full``, not retried (not an ``infra`` kind)."""

    exit_code = EXIT_CODE

    def __init__(self, message: str):
        self.kind = ErrorKind.DISK_FULL
        Exception.__init__(self, message)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` is an ``ENOSPC``/``EDQUOT`` (pyarrow's writers raise OSError with the text only)."""
    if not isinstance(exc, OSError):
        return False
    return exc.errno in ERRNOS or any(text in str(exc).lower() for text in _TEXTS)


def reason(exc: OSError) -> str:
    """``disk full: <what the OS said> (<file>)``: the one-line reason of a disk-full failure."""
    what = exc.strerror or str(exc)
    where = f" ({shown_name(os.fsdecode(exc.filename))})" if exc.filename else ""  # an agent's odd name: escaped
    return f"disk full: {what}{where}"


def stopped(where: Path | str, exc: OSError) -> DiskFull:
    """The error that stops a run whose ``where`` (the episode folder, the run folder) hit a full disk."""
    return DiskFull(f"{where}: {reason(exc)}: the run stops here; free space and run the same command again to "
                    "resume (finished episodes are kept)")


def check_room(folder: Path | str) -> None:
    """Raise ``OSError(ENOSPC)`` naming ``folder`` when its file system has no byte left for this process."""
    try:
        stats = os.statvfs(folder)
    except OSError:
        return
    if stats.f_bavail == 0 and stats.f_blocks > 0:
        raise OSError(errno.ENOSPC, "no space left on device after the agent ended", os.fspath(folder))


@contextlib.contextmanager
def reserve(folder: Path | str, size: int = RESERVE_BYTES) -> Iterator[Path]:
    """Keep ``size`` bytes of ``folder``'s file system in a file for as long as the block runs; raise
    :class:`DiskFull` when not even that fits (the run could not record its episodes)."""
    path = Path(folder) / RESERVE_NAME
    try:
        with open(path, "wb") as file:
            try:
                os.posix_fallocate(file.fileno(), 0, size)
            except OSError as exc:
                if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                file.write(bytes(size))  # a file system without fallocate: real blocks all the same
    except OSError as exc:
        path.unlink(missing_ok=True)
        if is_disk_full(exc):
            raise stopped(folder, exc) from None
        raise
    with _reserves_lock:
        _reserves.add(path)
    try:
        yield path
    finally:
        with _reserves_lock:
            _reserves.discard(path)
        path.unlink(missing_ok=True)


def release_reserves() -> None:
    """Give back every reserve this process keeps (the disk is full: the rows must still be written)."""
    with _reserves_lock:
        for path in _reserves:
            with contextlib.suppress(OSError):
                path.unlink()

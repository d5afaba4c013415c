"""One writer per run folder: an exclusive lock a run holds on its folder for as long as it writes.

The lock is ``<run folder>/run.lock``, locked with ``flock(2)`` and holding a JSON line naming its holder
(``pid``, ``host``, ``started`` in ISO 8601, ``command``).  A second ``harness run`` into the same folder
fails at once with :class:`RunLocked` naming the holder, or, with ``wait=True`` (``--wait``), blocks until
the first run is done.

Stale locks.  The kernel releases a ``flock`` when its holder dies, however it dies (``kill -9``, a
crash): a lock file left by a killed run is taken over by the next run at once, which is told whose lock
it took (:attr:`RunLock.took_over`, the dead holder's record).  A holder that ends cleanly removes the file
while it still holds the lock; a run that opened the file before it was removed finds the inode it locked
is no longer the folder's ``run.lock`` and opens the new one (the usual ``flock``-and-unlink protocol), so
two runs never both believe they hold it.  On a network file system ``flock`` is the server's lock
(NFSv4 byte-range locks): a lock of a host that went away is released when its lease expires.

Dask workers never write into the run folder: each episode runs in a worker's own temporary folder and
the client, which holds the lock, unpacks it (:mod:`harness.dask_executor`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from harness.errors import HarnessError

T = TypeVar("T")
#: the lock file's name inside a run folder
LOCK_NAME = "run.lock"


class RunLocked(HarnessError):
    """Another process holds the run folder's lock; the message names it (pid, host, start time)."""


@dataclass
class RunLock:
    """A held lock: its file, the open descriptor and, when it was left by a run that died, that run's
    record (``took_over``)."""

    path: Path
    fd: int
    took_over: dict[str, Any] | None = None

    def release(self) -> None:
        """Remove the lock file (still holding the lock, so no other run can have it) and unlock."""
        if self.fd < 0:
            return
        try:
            if _same_file(self.path, self.fd):
                self.path.unlink()
        except OSError:
            pass
        finally:
            os.close(self.fd)
            self.fd = -1


def require_held(folder: Path | str) -> None:
    """:class:`HarnessError` unless this process holds ``folder``'s lock (what writes episode folders from
    elsewhere, e.g. the Dask client unpacking workers' episodes, checks it first)."""
    record = holder(folder)
    if not record or record.get("pid") != os.getpid() or record.get("host") != socket.gethostname():
        raise HarnessError(f"{folder}: this process does not hold the run folder's lock ({describe(record)} "
                           "does): episodes are written only by the run holding it (harness.runlock)")


def describe(holder: dict[str, Any] | None) -> str:
    """``pid 123 on host h, started 2026-...`` for a holder record (``an unknown process`` when unreadable)."""
    if not holder:
        return "an unknown process (its lock file names no holder yet)"
    return f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, started {holder.get('started', '?')}"


def holder(folder: Path | str) -> dict[str, Any] | None:
    """The record in ``folder``'s lock file (None: no lock file, or none written yet)."""
    try:
        return _parse((Path(folder) / LOCK_NAME).read_bytes())
    except OSError:
        return None


def acquire(folder: Path | str, wait: bool = False,
            on_wait: Callable[[dict[str, Any] | None], None] = lambda holder: None) -> RunLock:
    """Lock ``folder`` (which must exist) for this process.  Raises :class:`RunLocked` naming the holder when
    another process holds it and ``wait`` is False; otherwise calls ``on_wait(holder record)`` once and
    blocks until the lock is free.  Any other failure to lock raises :class:`HarnessError` naming the file."""
    path = Path(folder) / LOCK_NAME
    said = False
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise HarnessError(f"{path}: cannot create the run folder's lock: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                os.close(fd)
                raise RunLocked(f"{folder} is being written by another run ({describe(holder(folder))}): "
                                "wait for it to finish, pass --wait to start when it is done, or choose "
                                "another --out") from None
            if not said:
                said = True
                on_wait(holder(folder))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except BaseException:
                os.close(fd)
                raise
        except OSError as exc:
            os.close(fd)
            raise HarnessError(f"{path}: cannot lock the run folder: {exc.strerror}") from None
        if not _same_file(path, fd):  # the holder removed the file while we waited: lock the new one
            os.close(fd)
            continue
        left = _parse(os.pread(fd, 4096, 0))
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                  "command": " ".join(sys.argv[:1] + sys.argv[1:])[:500]}
        data = (json.dumps(record) + "\n").encode()
        os.ftruncate(fd, 0)
        os.pwrite(fd, data, 0)
        return RunLock(path, fd, took_over=left)


def one_writer(execute: Callable[..., T]) -> Callable[..., T]:
    """Decorate :func:`harness.run.execute` ``(units, store, settings, on_event, ...)`` to run inside
    :func:`writing` on ``store.root``; the keyword ``wait`` (default False) is :func:`acquire`'s."""

    @functools.wraps(execute)
    def run(units: Any, store: Any, settings: Any, on_event: Callable[[str, dict], None] = lambda event, data: None,
            *args: Any, wait: bool = False, **kwargs: Any) -> T:
        with writing(store.root, wait, on_event):
            return execute(units, store, settings, on_event, *args, **kwargs)

    return run


@contextlib.contextmanager
def writing(folder: Path | str, wait: bool = False,
            on_event: Callable[[str, dict], None] = lambda event, data: None) -> Iterator[RunLock]:
    """A run writing into ``folder``: its lock held (:func:`hold`; events ``lock_wait`` while waiting and
    ``lock_taken_over`` after taking over a dead run's lock, each with ``{"holder": record}``), its disk
    reserve kept (:func:`harness.diskfull.reserve`), and a full disk while it writes turned into
    :class:`harness.diskfull.DiskFull` (one ``error:`` line, its own exit code)."""
    from harness.diskfull import is_disk_full, reserve, stopped

    with hold(folder, wait, lambda holder: on_event("lock_wait", {"holder": holder})) as lock, reserve(folder):
        if lock.took_over is not None:
            on_event("lock_taken_over", {"holder": lock.took_over})
        try:
            yield lock
        except OSError as exc:  # run.json or results.parquet on a full disk: every row.json written stays
            if not is_disk_full(exc):
                raise
            raise stopped(folder, exc) from None


@contextlib.contextmanager
def hold(folder: Path | str, wait: bool = False,
         on_wait: Callable[[dict[str, Any] | None], None] = lambda holder: None) -> Iterator[RunLock]:
    """:func:`acquire` ``folder`` for the ``with`` block, released however the block ends."""
    lock = acquire(folder, wait, on_wait)
    try:
        yield lock
    finally:
        lock.release()


def _same_file(path: Path, fd: int) -> bool:
    try:
        now, held = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (now.st_dev, now.st_ino) == (held.st_dev, held.st_ino)


def _parse(data: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(data.decode("utf-8", "replace").strip() or "null")
    except ValueError:
        return None
    return record if isinstance(record, dict) else None

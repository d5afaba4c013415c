"""Stopping a run on SIGINT or SIGTERM, at any phase, leaving nothing behind.

``harness run`` turns SIGTERM into the same interruption as Ctrl-C (:func:`install_handlers`).  The
main thread, on its way out, calls :func:`stop_all`: every sandbox still running a command (an agent's, a
rule worker's) is destroyed at once -- its processes killed, its control group and private folders
removed -- and from then on :func:`check` raises :class:`Interrupted` in the episode threads, so none
starts another sandbox, scores or retries; each thread unwinds through its own clean-up (temporary
folders included) and the run exits as a normal exit would, with 130 (SIGINT) or 143 (SIGTERM).

Code that runs something for a while registers how to stop it with :func:`guard`.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Callable, Iterator

_lock = threading.Lock()
_stoppers: dict[int, Callable[[], None]] = {}
_stopping = threading.Event()
_signalled = threading.Event()
_next = 0


class Interrupted(BaseException):
    """The run is being stopped (SIGINT or SIGTERM).  A BaseException: no ``except Exception`` of an
    episode (scoring, metrics) takes it for a failure of that episode."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt (exit status 143)."""


def stopping() -> bool:
    """Whether :func:`stop_all` was called (and :func:`reset` not since)."""
    return _stopping.is_set()


def check() -> None:
    """Raise :class:`Interrupted` when the run is being stopped."""
    if _stopping.is_set():
        raise Interrupted("the run is being stopped")


@contextlib.contextmanager
def guard(stop: Callable[[], None]) -> Iterator[None]:
    """Within the block, :func:`stop_all` calls ``stop`` (e.g. a sandbox's ``destroy``); raises
    :class:`Interrupted` on entry when the run is already being stopped."""
    global _next
    with _lock:
        check()
        _next += 1
        key = _next
        _stoppers[key] = stop
    try:
        yield
    finally:
        with _lock:
            _stoppers.pop(key, None)


def stop_all() -> None:
    """Mark the run as stopping and call every registered stopper (errors ignored: best effort, each)."""
    _stopping.set()
    with _lock:
        stoppers = list(_stoppers.values())
    for stop in stoppers:
        try:
            stop()
        except Exception:  # noqa: BLE001 - one failing stopper must not keep the others from running
            pass


def reset() -> None:
    """Forget a previous stop (a new run in the same process)."""
    _stopping.clear()
    _signalled.clear()


def install_handlers() -> None:
    """SIGTERM raises :class:`Terminated` in the main thread (SIGINT keeps raising KeyboardInterrupt); a second
    signal while the run is stopping is ignored, so the clean-up finishes."""

    def on_signal(signum, frame):
        if _signalled.is_set():
            return
        _signalled.set()
        if signum == signal.SIGTERM:
            raise Terminated()
        raise KeyboardInterrupt()

    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers belong to the main thread (a run driven from another thread keeps its own)
    _signalled.clear()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)

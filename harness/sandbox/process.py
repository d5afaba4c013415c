"""A process running in a local sandbox: binary pipes, bounded output capture, whole-tree kill."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from typing import BinaryIO

#: Per-stream cap on captured output; the rest is counted and replaced by a marker.
MAX_OUTPUT = 50 * 1024 * 1024


def truncation_marker(dropped: int) -> str:
    return f"\n[output truncated: {dropped} more bytes]\n"



def descendants(root: int) -> list[int]:
    """Host pids of every descendant of ``root`` (from /proc), parents before children."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out

class BoundedCapture(threading.Thread):
    """Drain a pipe on a thread, keeping at most ``limit`` bytes (the rest is counted)."""

    def __init__(self, stream: BinaryIO, limit: int = MAX_OUTPUT):
        super().__init__(name="sandbox-capture", daemon=True)
        self.stream, self.limit = stream, limit
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0

    def run(self) -> None:
        fd = self.stream.fileno()
        try:
            while True:
                data = os.read(fd, 1 << 16)
                if not data:
                    break
                room = self.limit - self.kept
                if room > 0:
                    self.chunks.append(data[:room])
                    self.kept += min(room, len(data))
                self.dropped += max(0, len(data) - max(room, 0))
        except OSError:
            pass
        finally:
            self.stream.close()

    def text(self) -> str:
        out = b"".join(self.chunks).decode("utf-8", errors="replace")
        return out + truncation_marker(self.dropped) if self.dropped else out


def exit_status(returncode: int | None) -> int | None:
    """Shell convention: a command killed by signal N reports 128 + N."""
    if returncode is not None and returncode < 0:
        return 128 - returncode
    return returncode


class SandboxProcess:
    """A command started by ``LocalSandbox.spawn``.

    ``stdin``/``stdout``/``stderr`` are the binary pipes (or None).  The process
    is the leader of its own process group; :meth:`kill` sends SIGKILL to the
    group, which ends the sandbox's PID namespace and so every descendant, even
    ones that ignore SIGTERM or started their own session.
    """

    def __init__(self, popen: subprocess.Popen, on_exit: Callable[[SandboxProcess], None] | None = None):
        self.popen = popen
        self._on_exit = on_exit
        self._done = False
        self._pidfd: int | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def stdin(self):
        return self.popen.stdin

    @property
    def stdout(self):
        return self.popen.stdout

    @property
    def stderr(self):
        return self.popen.stderr

    @property
    def returncode(self) -> int | None:
        return exit_status(self.popen.returncode)

    def poll(self) -> int | None:
        return self.wait(0) if self._exited(0) else None

    def wait(self, timeout: float | None = None) -> int:
        """Exit status (128 + signal when killed); raises subprocess.TimeoutExpired."""
        if not self._exited(timeout):
            raise subprocess.TimeoutExpired(self.popen.args, timeout)
        self._finish()
        return exit_status(self.popen.returncode)

    def _exited(self, timeout: float | None) -> bool:
        """Block until the command exits (without reaping it), at most ``timeout`` seconds."""
        if self.popen.returncode is not None:
            return True
        try:
            if self._pidfd is None:
                self._pidfd = os.pidfd_open(self.popen.pid)
            ready, _, _ = select.select([self._pidfd], [], [], timeout)
            return bool(ready)
        except (AttributeError, OSError):  # no pidfd: poll without reaping
            deadline = None if timeout is None else time.monotonic() + timeout
            delay = 0.0005
            while True:
                try:
                    if os.waitid(os.P_PID, self.popen.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                        return True
                except ChildProcessError:
                    return True
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                time.sleep(delay if deadline is None else min(delay, max(0.0, deadline - time.monotonic())))
                delay = min(delay * 2, 0.05)

    def kill(self) -> None:
        """SIGKILL the whole process tree (and so the sandbox's PID namespace); idempotent.

        Descendants are killed by pid first: a sandboxed process that changed its uid no
        longer receives the parent-death signal of bwrap/unshare (the kernel's permission
        check fails across uids), so killing the process group alone could orphan it.
        """
        if self.popen.returncode is None:
            for pid in descendants(self.popen.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        self._killpg()
        self._exited(None)
        self._finish()

    def _killpg(self) -> None:
        if self.popen.returncode is None:  # leader not reaped: its group id cannot have been reused
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def _finish(self) -> None:
        """After exit: kill what is left of the group (``none`` backend), reap, run the exit hook."""
        if self._done:
            return
        self._done = True
        self._killpg()
        self.popen.wait()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        if self._on_exit is not None:
            self._on_exit(self)

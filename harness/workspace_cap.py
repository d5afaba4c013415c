"""``workspace_mb``: the most an agent may write into its workspace before it is stopped.

``tmp_mb`` bounds the sandbox's private ``/tmp`` (a size-limited tmpfs); the workspace, though, is a host
folder bind-mounted read-write (so that what the agent leaves is kept and scored), and nothing bounded it:
an agent could fill the host's disk.  The harness watches the workspace (and the agent's per-episode home,
the other host folder it writes) while the agent runs: every :data:`EVERY` seconds it adds up the disk space
their files take (allocated blocks, so a sparse file counts what it really uses), and once that passes
``workspace_mb`` it stops the sandbox at once.  The
episode then fails with ``error_kind`` ``workspace_limit``.

Why a watch and not a size-limited mount or a quota: the workspace must stay an ordinary host folder (the
viewer, the scorer and a resume read it after the sandbox is gone), a tmpfs would hold up to
``workspace_mb`` of RAM per episode, and project quotas need a file system set up for them.  The watch works
the same on every backend (bubblewrap, unshare, docker, none) since every backend binds the same host folder.
What it cannot do: stop an agent within the interval; an agent writing faster than the disk's free space
per :data:`EVERY` seconds can still fill a disk nearly full, which :mod:`harness.diskfull` then handles.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Callable

#: seconds between two measurements of the workspace
EVERY = 0.25
#: directory entries one measurement looks at, at most (a tree larger than this is measured in part)
MAX_ENTRIES = 200_000


def used_bytes(folder: Path | str, max_entries: int = MAX_ENTRIES) -> int:
    """Disk space the files under ``folder`` take (``st_blocks`` × 512, links not followed), iteratively."""
    total, seen, stack = 0, 0, [os.fspath(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > max_entries:
                        return total
                    try:
                        info = entry.stat(follow_symlinks=False)
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                    except OSError:
                        continue
                    total += info.st_blocks * 512
        except OSError:
            continue
    return total


class WorkspaceCap:
    """While the ``with`` block runs, measure ``folders`` (the workspace and the agent's home: both host
    folders the agent writes) every :data:`EVERY` s and call ``stop()`` once when together they take more
    than ``limit_mb`` MiB (``over`` is then the size seen, bytes)."""

    def __init__(self, folders: list[Path], limit_mb: int, stop: Callable[[], None]):
        self.folders, self.limit, self.stop = folders, int(limit_mb) * 1024 * 1024, stop
        self.over: int | None = None
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="workspace-cap", daemon=True)

    def _watch(self) -> None:
        while not self._done.wait(EVERY):
            size = sum(used_bytes(folder) for folder in self.folders)
            if size > self.limit:
                self.over = size
                self.stop()
                return

    def __enter__(self) -> "WorkspaceCap":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def reason(self) -> str:
        """``workspace over workspace_mb (N MiB written, limit M MiB): the agent was stopped``."""
        return (f"workspace over workspace_mb ({(self.over or 0) / 2**20:.0f} MiB written, limit "
                f"{self.limit / 2**20:.0f} MiB): the agent was stopped")

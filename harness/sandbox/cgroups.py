"""Caps on the total memory and process count of every process of one local sandbox (cgroups).

RLIMIT_AS bounds one process; a sandbox that forks many processes, each
under it, is only bounded by a cap on the whole group.  Each local sandbox
(bubblewrap, unshare) gets one control group, a child of the harness's own
group (so it also stays within any cap the harness itself runs under):

* cgroup v2 when the harness's own v2 group delegates ``memory`` and ``pids``
  to its children (``cgroup.subtree_control``): ``memory.max``,
  ``memory.swap.max = 0``, ``pids.max``;
* otherwise the cgroup v1 ``memory`` and ``pids`` hierarchies, where mounted
  read-write for us: ``memory.limit_in_bytes`` (and ``memory.memsw.limit_in_bytes``
  where swap accounting exists, so swap cannot extend it) and ``pids.max``.

Every command of the sandbox joins the group before it starts (the host-side
wrapper writes its pid into ``cgroup.procs`` and execs), so all descendants
are counted.  Pages of the sandbox's tmpfs ``/tmp`` and ``/dev/shm`` are
charged to the group too.  When neither version is writable the caps are
not enforced and :func:`support` says why (recorded in ``run.json``).

Group names carry the owner record (``harness-<pid>-<start>-<id>``) so
``harness sandbox cleanup`` can remove the groups of a killed harness.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from harness.sandbox import owner

PREFIX = "harness-"
_lock = threading.Lock()
_support: tuple[str | None, str, tuple[Path, ...]] | None = None


def _mounts() -> list[tuple[str, str, set[str]]]:
    out = []
    try:
        with open("/proc/self/mounts") as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 4 and parts[2] in ("cgroup", "cgroup2"):
                    out.append((parts[1], parts[2], set(parts[3].split(","))))
    except OSError:
        pass
    return out


def _own_paths() -> dict[str, str]:
    """Controller (``"memory"``, ``"pids"``, ``""`` for v2) -> this process's group path."""
    out: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as fh:
            for line in fh:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for c in controllers.split(",") if controllers else [""]:
                    out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _writable_dir(path: Path) -> bool:
    probe = path / f"{PREFIX}probe-{uuid.uuid4().hex[:8]}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        probe.rmdir()
    except OSError:
        pass
    return True


def _detect() -> tuple[str | None, str, tuple[Path, ...]]:
    mounts, own = _mounts(), _own_paths()
    reasons = []
    for point, fstype, _opts in mounts:
        if fstype != "cgroup2" or "" not in own:
            continue
        parent = Path(point + own[""])
        try:
            delegated = set((parent / "cgroup.subtree_control").read_text().split())
        except OSError:
            delegated = set()
        if {"memory", "pids"} <= delegated and _writable_dir(parent):
            return "v2", f"cgroup v2 at {parent}", (parent,)
        reasons.append(f"cgroup v2 at {parent} does not delegate memory and pids to child groups")
    dirs = []
    for controller in ("memory", "pids"):
        found = [(p, o) for p, t, o in mounts if t == "cgroup" and controller in o]
        if not found or controller not in own:
            reasons.append(f"no cgroup v1 {controller} hierarchy mounted")
            continue
        parent = Path(found[0][0] + own[controller])
        if not _writable_dir(parent):
            reasons.append(f"cgroup v1 {controller} group {parent} is not writable")
            continue
        dirs.append(parent)
    if len(dirs) == 2:
        return "v1", f"cgroup v1 memory + pids under {dirs[0]} and {dirs[1]}", tuple(dirs)
    return None, "; ".join(reasons) or "no cgroup hierarchy found", ()


def support() -> tuple[str | None, str, tuple[Path, ...]]:
    """``(version or None, one-line description or why not, parent folders)``, probed once."""
    global _support
    with _lock:
        if _support is None:
            _support = _detect()
        return _support


@dataclass
class SandboxGroup:
    """The control group(s) of one sandbox: one folder per hierarchy (v2: one)."""

    version: str
    dirs: tuple[Path, ...]

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.dirs]

    def pids(self) -> set[int]:
        out: set[int] = set()
        for f in self.procs_files:
            try:
                out |= {int(x) for x in Path(f).read_text().split()}
            except (OSError, ValueError):
                pass
        return out

    def memory_peak(self) -> int | None:
        """Highest memory use of the group so far, bytes (None where unknown)."""
        name = "memory.peak" if self.version == "v2" else "memory.max_usage_in_bytes"
        try:
            return int((self.dirs[0] / name).read_text())
        except (OSError, ValueError):
            return None

    def oom_kills(self) -> int | None:
        """Processes of the group the kernel killed for passing its memory cap so far (None where unknown):
        ``oom_kill`` of ``memory.events`` (v2) or ``memory.oom_control`` (v1)."""
        name = "memory.events" if self.version == "v2" else "memory.oom_control"
        try:
            for line in (self.dirs[0] / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            return None
        return None

    def kill(self, rounds: int = 50) -> None:
        """SIGKILL every process of the group until none is left (forks racing the kill are caught)."""
        for _ in range(rounds):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            time.sleep(0.01)

    def remove(self) -> None:
        """Kill what is left and delete the group folders (idempotent, best effort)."""
        self.kill()
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def create(memory_mb: int, pids: int) -> SandboxGroup | None:
    """A fresh group capping total memory at ``memory_mb`` MiB and processes at ``pids``; None if unsupported.

    Raises OSError when the hierarchy is writable but the group cannot be set up.
    """
    version, _, parents = support()
    if version is None:
        return None
    name = f"{PREFIX}{owner.tag()}-{uuid.uuid4().hex[:8]}"
    group = SandboxGroup(version, tuple(p / name for p in parents))
    limit = str(int(memory_mb) * 1024 * 1024)
    try:
        for d in group.dirs:
            d.mkdir()
        if version == "v2":
            d = group.dirs[0]
            (d / "memory.max").write_text(limit)
            _try_write(d / "memory.swap.max", "0")
            (d / "pids.max").write_text(str(int(pids)))
        else:
            mem, pid_dir = group.dirs
            (mem / "memory.limit_in_bytes").write_text(limit)
            _try_write(mem / "memory.memsw.limit_in_bytes", limit)
            (pid_dir / "pids.max").write_text(str(int(pids)))
    except OSError:
        group.remove()
        raise
    return group


def _try_write(path: Path, value: str) -> None:
    if path.exists():
        try:
            path.write_text(value)
        except OSError:
            pass


def join_command(group: SandboxGroup, argv: list[str]) -> list[str]:
    """``argv`` wrapped so the process joins ``group`` before it execs (the pid stays the same)."""
    writes = " && ".join(f'echo $$ > "${i + 1}"' for i in range(len(group.procs_files)))
    n = len(group.procs_files)
    return ["/bin/sh", "-c", f'{writes} && shift {n} && exec "$@"', "sh", *group.procs_files, *argv]


def leftovers(include_live: bool = False) -> list[SandboxGroup]:
    """Groups of harness processes that are gone (all harness groups with ``include_live``)."""
    version, _, parents = support()
    if version is None:
        return []
    by_name: dict[str, list[Path]] = {}
    for parent in parents:
        try:
            entries = list(parent.iterdir())
        except OSError:
            continue
        for d in entries:
            if d.is_dir() and d.name.startswith(PREFIX) and not d.name.startswith(PREFIX + "probe-"):
                by_name.setdefault(d.name, []).append(d)
    out = []
    for name, dirs in sorted(by_name.items()):
        tag = name[len(PREFIX):].rsplit("-", 1)[0]
        live = owner.alive_tag(tag)
        if include_live or live is False:
            out.append(SandboxGroup(version, tuple(dirs)))
    return out

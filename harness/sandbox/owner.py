"""Who created a leftover: the owner record (host pid + process start time) of sandbox resources.

Local sandboxes write ``owner.json`` into their private temp folder and name
their cgroups after it; Docker sandboxes carry it as labels.  ``harness
sandbox cleanup`` removes a leftover only when its owner is no longer the
same live process (a pid alone may have been reused; the start time, in
clock ticks since boot from ``/proc/<pid>/stat`` field 22, tells them apart).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

OWNER_FILE = "owner.json"


def start_time(pid: int) -> int | None:
    """Start time of ``pid`` in clock ticks since boot, or None when no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2:].split()[19])


def current() -> dict[str, int | str]:
    """This process's owner record: ``{"pid", "start", "host"}``."""
    pid = os.getpid()
    return {"pid": pid, "start": start_time(pid) or 0, "host": socket.gethostname()}


def tag() -> str:
    """The owner record as a name part: ``<pid>-<start>``."""
    me = current()
    return f"{me['pid']}-{me['start']}"


def alive(pid: int, start: int, host: str | None = None) -> bool:
    """Whether the owner ``pid`` started at ``start`` still runs (on another host: assumed alive)."""
    if host is not None and host != socket.gethostname():
        return True
    return start_time(int(pid)) == int(start)


def alive_tag(text: str) -> bool | None:
    """:func:`alive` for a ``<pid>-<start>`` name part; None when ``text`` is not one."""
    try:
        pid, start = (int(x) for x in text.split("-", 1))
    except ValueError:
        return None
    return alive(pid, start)


def write(folder: Path) -> None:
    """Record the current process as the owner of ``folder`` (mode 0600)."""
    fd = os.open(Path(folder) / OWNER_FILE, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(current(), fh)


def folder_alive(folder: Path) -> bool | None:
    """Whether the recorded owner of ``folder`` still runs; None when there is no readable record."""
    try:
        rec = json.loads((Path(folder) / OWNER_FILE).read_text())
        return alive(rec["pid"], rec["start"], rec.get("host"))
    except (OSError, ValueError, KeyError, TypeError):
        return None

"""What ``harness sandbox cleanup`` removes: leftovers of killed runs, of every backend.

A harness killed with SIGKILL cannot tidy up.  Its sandboxes' processes die
with it (parent-death signals end the PID namespaces), but these may remain:

* local backends: private temp folders (``harness-sbx-*``: launch
  configurations holding argv and environment; ``harness-sub-*``: a copy of a
  submitted rule), and control groups (``harness-<pid>-<start>-*``) with any
  process that escaped the parent-death signal (a rule worker running under
  another uid);
* docker: containers and volumes labelled ``harness.managed=1``.

By default only leftovers whose recorded owner (pid and process start time,
:mod:`harness.sandbox.owner`) is no longer a live process are removed;
``include_live`` removes every one (also those of runs still going, and
folders or containers without an owner record).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from harness.untrusted import remove_tree
from harness.sandbox import cgroups, owner

TEMP_PREFIXES = ("harness-sbx-", "harness-sub-", "harness-probe-")


@dataclass
class Removed:
    """What one cleanup removed (names), and the Docker engine's error when it did not answer."""

    folders: list[str] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)
    volumes: list[str] = field(default_factory=list)
    docker_error: str | None = None


def local_leftovers(include_live: bool = False, temp_dir: Path | None = None) -> tuple[list[Path], list[cgroups.SandboxGroup]]:
    """Temp folders and control groups of local sandboxes whose owner is gone (every one with ``include_live``)."""
    root = Path(temp_dir or tempfile.gettempdir())
    folders = []
    for d in sorted(root.iterdir()):
        if d.is_dir() and not d.is_symlink() and d.name.startswith(TEMP_PREFIXES):
            live = owner.folder_alive(d)
            if include_live or live is False:
                folders.append(d)
    return folders, cgroups.leftovers(include_live)


def cleanup(run_id: str | None = None, include_live: bool = False, docker: bool = True) -> Removed:
    """Remove leftovers (see the module docstring).

    ``run_id``: the Docker part removes every container and volume of that run (also
    those of a live owner or without an owner record); local leftovers as by default.
    """
    out = Removed()
    folders, groups = local_leftovers(include_live)
    for group in groups:  # processes first: they may hold files in the folders
        group.remove()
        out.groups.append(group.dirs[0].name)
    for d in folders:
        remove_tree(d)
        out.folders.append(str(d))
    if docker:
        from harness.sandbox.docker import DockerSandboxError
        from harness.sandbox.docker import cleanup as docker_cleanup

        try:
            # a run named explicitly: everything it created, whatever its owner
            out.containers, out.volumes = docker_cleanup(run_id, include_live=include_live or run_id is not None)
        except DockerSandboxError as exc:
            out.docker_error = str(exc)
    return out

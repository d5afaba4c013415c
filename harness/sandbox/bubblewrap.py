"""Bubblewrap sandbox backend (priority 20): the preferred local isolation.

Each command runs under ``bwrap`` with new user, IPC, PID, network, UTS and
(when possible) cgroup namespaces; the network namespace has only loopback
(bwrap brings ``lo`` up).  The root is a tmpfs holding only the allowlist of
:mod:`harness.sandbox.mounts`, ``/workspace`` (and ``/home/agent``) read-write,
a tmpfs ``/tmp``, fresh ``/proc`` with ``/proc/sys`` read-only and a minimal
``/dev``.  All capabilities are dropped, nested user namespaces are disabled,
the environment is cleared (bwrap itself is started with an empty
environment and reads its options from a memfd, so no process inside can read
the host environment or the bind list), ``--die-with-parent`` and
``--new-session`` are set.

Inside, :mod:`harness.sandbox.launcher` is PID 1 (``--as-pid-1``: it reaps
orphans): it starts the proxy bridge (when the spec has a proxy socket),
switches uid (``run_as``) and runs the command with its environment, so exit
statuses match the unshare backend (127: not found).  Killing bwrap (the
timeout does) kills the launcher through ``--die-with-parent``, and with it
the PID namespace and every process in it.
Note: ``/tmp`` is per command; ``/workspace`` and ``/home/agent`` are what
persists between commands of one sandbox.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import PurePosixPath

from harness.contracts.sandbox import SandboxBackend, SandboxSpec
from harness.sandbox.local import LAUNCH_CONFIG, Launch, LocalSandbox, ProbedBackend, launcher_argv
from harness.sandbox.mounts import Mount

NAMESPACES = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]


def mount_args(m: Mount) -> list[str]:
    """bwrap options for one :class:`Mount`."""
    if m.kind == "ro":
        return ["--ro-bind", m.src, m.dest]
    if m.kind == "rw":
        return ["--bind", m.src, m.dest]
    if m.kind == "symlink":
        return ["--symlink", m.src, m.dest]
    if m.kind == "tmpfs":
        return ((["--perms", f"{m.mode:o}"] if m.mode is not None else [])
                + (["--size", str(m.size)] if m.size is not None else []) + ["--tmpfs", m.dest])
    if m.kind == "proc":
        return ["--proc", m.dest, "--ro-bind", "/proc/sys", f"{m.dest}/sys",
                "--ro-bind-try", "/proc/sysrq-trigger", f"{m.dest}/sysrq-trigger"]
    if m.kind == "dev":
        return ["--dev", m.dest]
    raise ValueError(f"unknown mount kind {m.kind!r}")


def filesystem_args(mounts: list[Mount]) -> list[str]:
    """bwrap options for ``mounts`` (shallow first), creating missing parent folders with mode 0755.

    (bwrap would otherwise create them 0700, unreadable for an unprivileged uid.)
    Parents inside a bound host folder are never created: they must exist there.
    """
    opts: list[str] = []
    made: set[str] = {"/"}
    binds: list[str] = []
    for m in mounts:
        for parent in reversed(PurePosixPath(m.dest).parents):
            p = str(parent)
            if p in made or any(p == b or p.startswith(b + "/") for b in binds):
                continue
            opts += ["--perms", "0755", "--dir", p]
            made.add(p)
        opts += mount_args(m)
        made.add(m.dest)
        if m.kind in ("ro", "rw", "symlink", "proc", "dev"):
            binds.append(m.dest)
    return opts


class BubblewrapSandbox(LocalSandbox):
    """A sandbox whose commands run under bwrap (see the module docstring)."""

    backend: BubblewrapBackend

    def _command(self, argv: list[str], env: dict[str, str], cwd: str) -> Launch:
        if self.run_as is None:
            opts = ["--unshare-user", *NAMESPACES, "--cap-drop", "ALL"]
            if self.backend.disable_userns:
                opts.append("--disable-userns")
        else:  # real root, so the command can switch to the unprivileged uid
            opts = [*NAMESPACES, "--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        opts += ["--die-with-parent", "--new-session", "--as-pid-1", "--hostname", "sandbox", "--clearenv"]
        config = self.write_launch_config(self.launch_config(argv, env, cwd, setup=None))
        opts += filesystem_args([*self.mounts(), Mount("ro", LAUNCH_CONFIG, src=str(config))])
        opts += ["--chdir", "/"]
        fd = os.memfd_create("bwrap-args", os.MFD_CLOEXEC)
        os.write(fd, b"".join(os.fsencode(o) + b"\0" for o in opts))
        os.lseek(fd, 0, os.SEEK_SET)
        command = [self.backend.binary, "--args", str(fd), "--", *launcher_argv(LAUNCH_CONFIG)]
        return Launch(command, {}, (config,), pass_fds=(fd,))


class BubblewrapBackend(ProbedBackend, SandboxBackend):
    """``bubblewrap``: namespaces + allowlisted read-only binds, via /usr/bin/bwrap."""

    name = "bubblewrap"
    runs_rule_workers = True
    priority = 20

    def __init__(self, binary: str | None = None):
        self._binary = binary
        self._init_probe()
        self.disable_userns = True

    @property
    def binary(self) -> str:
        return self._binary or shutil.which("bwrap") or "bwrap"

    def _run_probe(self) -> tuple[bool, str]:
        if shutil.which(self.binary) is None:
            return False, "bwrap (bubblewrap) is not installed or not on PATH"
        base = [self.binary, "--unshare-user", *NAMESPACES, "--cap-drop", "ALL",
                "--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev"]
        last = ""
        for disable in (True, False):
            argv = base + (["--disable-userns"] if disable else []) + ["--", "true"]
            try:
                r = subprocess.run(argv, check=False, capture_output=True, text=True, timeout=20, env={})
            except (OSError, subprocess.TimeoutExpired) as exc:
                return False, f"bwrap could not be run: {exc}"
            if r.returncode == 0:
                self.disable_userns = disable
                return True, "ok"
            last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        return False, f"bwrap cannot create user/network namespaces here: {last}"

    def create(self, spec: SandboxSpec, *, mounts: tuple[Mount, ...] = (), run_as: int | None = None) -> BubblewrapSandbox:
        """A sandbox for ``spec``; ``mounts`` and ``run_as`` as in :class:`LocalSandbox`."""
        return BubblewrapSandbox(self, spec, mounts=mounts, run_as=run_as)

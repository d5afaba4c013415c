"""util-linux ``unshare`` sandbox backend (priority 10): the same isolation where bubblewrap is absent.

``unshare`` creates new user (root mapped to the caller), mount, PID, network,
IPC, UTS and cgroup namespaces and forks :mod:`harness.sandbox.launcher` as
PID 1 of the new PID namespace.  The launcher mounts a tmpfs root, binds the
same allowlist as bubblewrap read-only (``/workspace`` and ``/home/agent``
read-write), mounts ``/proc`` (``/proc/sys`` read-only), a minimal ``/dev`` and
a tmpfs ``/tmp``, pivot_roots into it, brings loopback up with an ioctl, drops
every capability (bounding set included) and sets no_new_privs, then starts
the bridge (when there is a proxy socket) and the command.  ``--kill-child``
ties the namespace to ``unshare``, which is the leader of the process group
the host kills on timeout, and which util-linux ``setpriv --pdeathsig KILL``
ties to the harness (as bwrap's ``--die-with-parent`` does).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.contracts.sandbox import SandboxBackend, SandboxSpec
from harness.sandbox.local import Launch, LocalSandbox, ProbedBackend, launcher_argv
from harness.sandbox.mounts import Mount

NAMESPACES = ["--mount", "--pid", "--net", "--ipc", "--uts", "--cgroup"]


class UnshareSandbox(LocalSandbox):
    """A sandbox whose commands run under util-linux unshare + the launcher."""

    backend: UnshareBackend

    def _command(self, argv: list[str], env: dict[str, str], cwd: str) -> Launch:
        root = Path(tempfile.mkdtemp(prefix="root-", dir=self.private))
        userns = self.run_as is None and self.backend.userns
        setup = {"root": str(root), "mounts": [m.to_json() for m in self.mounts()], "hostname": "sandbox",
                 "disable_userns": userns}
        config = self.write_launch_config(self.launch_config(argv, env, cwd, setup))
        flags = ["--user", "--map-root-user", *NAMESPACES] if userns else list(NAMESPACES)
        command = [self.backend.binary, *flags, "--fork", "--kill-child=SIGKILL", "--", *launcher_argv(str(config))]
        setpriv = shutil.which("setpriv")
        if setpriv:  # like bwrap --die-with-parent: the sandbox dies with the harness
            command = [setpriv, "--pdeathsig", "KILL", "--", *command]
        return Launch(command, {}, (config,))


class UnshareBackend(ProbedBackend, SandboxBackend):
    """``unshare``: namespaces from util-linux plus a Python launcher that builds the root."""

    name = "unshare"
    runs_rule_workers = True
    priority = 10

    def __init__(self, binary: str | None = None):
        self._binary = binary
        self._init_probe()
        self.userns = True

    @property
    def binary(self) -> str:
        return self._binary or shutil.which("unshare") or "unshare"

    def _run_probe(self) -> tuple[bool, str]:
        if shutil.which(self.binary) is None:
            return False, "util-linux unshare is not installed or not on PATH"
        modes = [True] + ([False] if os.geteuid() == 0 else [])
        reason = ""
        for userns in modes:
            flags = (["--user", "--map-root-user"] if userns else []) + NAMESPACES
            try:
                r = subprocess.run([self.binary, *flags, "--fork", "true"], check=False, capture_output=True, text=True,
                                   timeout=20, env={})
            except (OSError, subprocess.TimeoutExpired) as exc:
                return False, f"unshare could not be run: {exc}"
            if r.returncode == 0:
                self.userns = userns
                break
            reason = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        else:
            return False, f"unshare cannot create the namespaces needed here: {reason}"
        with tempfile.TemporaryDirectory(prefix="harness-probe-") as ws:
            try:
                with self.create(SandboxSpec(workspace=Path(ws))) as sb:
                    r = sb.exec(["true"], timeout=30)
            except OSError as exc:
                return False, f"unshare sandbox could not start: {exc}"
        if r.returncode != 0:
            last = (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
            return False, f"unshare sandbox setup fails here: {last}"
        return True, "ok"

    def create(self, spec: SandboxSpec, *, mounts: tuple[Mount, ...] = (), run_as: int | None = None) -> UnshareSandbox:
        """A sandbox for ``spec``; ``mounts`` and ``run_as`` as in :class:`LocalSandbox`."""
        return UnshareSandbox(self, spec, mounts=mounts, run_as=run_as)

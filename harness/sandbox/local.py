"""What the local backends (bubblewrap, unshare, none) share: spec checks, environment, exec, copy-out.

A backend subclass only says how to turn a command into a host argv
(:meth:`LocalSandbox._command`).  Everything else is here: the cleared
environment, bounded output capture, the wall-clock timeout that kills the
whole process tree, copying files out of ``/workspace`` / ``/home/agent``
without following links out of them, and idempotent teardown.
"""

from __future__ import annotations

import marshal
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from harness.untrusted import copy_tree, remove_tree
from harness.contracts.sandbox import (
    HOME,
    WORKSPACE,
    ExecResult,
    Sandbox,
    SandboxBackend,
    SandboxSpec,
)
from harness.sandbox import cgroups, owner
from harness.sandbox.errors import SandboxError, SpecError
from harness.sandbox.mounts import PROXY_SOCKET_PATH, Mount, base_mounts
from harness.sandbox.process import MAX_OUTPUT, BoundedCapture, SandboxProcess

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
LAUNCHER = Path(__file__).with_name("launcher.py")
#: Where a launch configuration appears inside a bubblewrap sandbox.
LAUNCH_CONFIG = "/run/harness/launch.cfg"


def default_path() -> str:
    """PATH inside a sandbox: the harness's Python first, then the usual system directories."""
    dirs = [os.path.dirname(sys.executable), "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"]
    return ":".join(dict.fromkeys(dirs))


class ProbedBackend:
    """Mixin for backends whose availability is probed once (``_run_probe``) and cached."""

    def _init_probe(self) -> None:
        self._probe: tuple[bool, str] | None = None
        self._probe_lock = threading.Lock()

    def available(self) -> tuple[bool, str]:
        """Probe once whether this backend can create its sandboxes here; later calls return at once."""
        with self._probe_lock:
            if self._probe is None:
                self._probe = self._run_probe()
            return self._probe

    def _run_probe(self) -> tuple[bool, str]:
        raise NotImplementedError

    def describe(self) -> dict[str, str]:
        """The backend and how it enforces :class:`~harness.contracts.sandbox.Limits` (recorded in run.json)."""
        return {"backend": self.name, **limits_enforcement(isolated=True)}


def limits_enforcement(isolated: bool) -> dict[str, str]:
    """``limits_enforced`` / ``limits_not_enforced``: which :class:`Limits` fields a local backend enforces, how.

    Isolated backends: ``tmp_mb`` by size-limited tmpfs mounts; ``memory_mb``
    and ``pids`` by a control group per sandbox (:mod:`harness.sandbox.cgroups`)
    where one is writable.  ``cpus`` is never enforced locally.  ``none``: nothing.
    """
    if not isolated:
        return {"limits_enforced": "", "limits_not_enforced": "cpus, memory_mb, pids, tmp_mb (no isolation)"}
    version, how, _ = cgroups.support()
    if version is not None:
        return {"limits_enforced": f"tmp_mb (tmpfs size), memory_mb and pids ({how})",
                "limits_not_enforced": "cpus"}
    return {"limits_enforced": "tmp_mb (tmpfs size)",
            "limits_not_enforced": f"cpus; memory_mb and pids ({how})"}


def launcher_argv(config_path: str) -> list[str]:
    """Command that runs the launcher with only the standard library (fast start)."""
    return [sys.executable, "-E", "-s", "-S", str(LAUNCHER), config_path]


def check_env(env: dict[str, str], field: str) -> None:
    for key, value in env.items():
        if not isinstance(key, str) or not _ENV_NAME.match(key):
            raise SpecError(f"{field}: invalid environment variable name {key!r}")
        if not isinstance(value, str) or "\0" in value:
            raise SpecError(f"{field}[{key!r}]: value must be a string without NUL bytes")


def check_spec(spec: SandboxSpec) -> None:
    """Raise :class:`SpecError` naming the field when ``spec`` cannot be honoured."""
    if not Path(spec.workspace).is_dir():
        raise SpecError(f"SandboxSpec.workspace: {spec.workspace} is not an existing directory")
    if spec.home is not None and not Path(spec.home).is_dir():
        raise SpecError(f"SandboxSpec.home: {spec.home} is not an existing directory")
    for i, p in enumerate(spec.ro_binds):
        if not Path(p).is_absolute() or not Path(p).exists():
            raise SpecError(f"SandboxSpec.ro_binds[{i}]: {p} must be an existing absolute path")
    if spec.proxy_socket is not None:
        try:
            is_socket = stat.S_ISSOCK(os.stat(spec.proxy_socket).st_mode)
        except OSError:
            is_socket = False
        if not is_socket:
            raise SpecError(f"SandboxSpec.proxy_socket: {spec.proxy_socket} is not a Unix socket")
    if not 0 < int(spec.proxy_port) < 65536:
        raise SpecError(f"SandboxSpec.proxy_port: {spec.proxy_port} is not a TCP port")
    check_env(spec.env, "SandboxSpec.env")


@dataclass(frozen=True)
class Launch:
    """How to start one command on the host: argv, host environment, extra files to clean."""

    argv: list[str]
    env: dict[str, str]
    cleanup: tuple[Path, ...] = ()
    pass_fds: tuple[int, ...] = ()
    cwd: str = "/"


class LocalSandbox(Sandbox):
    """A sandbox whose commands run as host processes (see the module docstring).

    ``mounts``: extra entries for the sandbox filesystem (e.g. a submission
    file bound read-only at another path).  ``run_as``: an unprivileged host
    uid the command runs as (so ``limits.pids`` is enforced through
    RLIMIT_NPROC); needs root on the host.
    """

    max_output = MAX_OUTPUT
    #: False for the ``none`` backend: commands see the host filesystem and network.
    isolated = True

    def __init__(self, backend: SandboxBackend, spec: SandboxSpec, *, mounts: tuple[Mount, ...] = (),
                 run_as: int | None = None):
        check_spec(spec)
        if run_as is not None and os.geteuid() != 0:
            raise SandboxError("running a sandbox as another uid needs root on the host")
        self.backend, self.spec, self.run_as = backend, spec, run_as
        self.extra_mounts = tuple(mounts)
        self.private = Path(tempfile.mkdtemp(prefix="harness-sbx-"))
        owner.write(self.private)
        self.group: cgroups.SandboxGroup | None = None
        self._lock = threading.Lock()
        self._live: set[SandboxProcess] = set()
        self._launches = 0
        self._destroyed = False
        self._mounts: list[Mount] | None = None
        if self.isolated:
            try:
                self.mounts()  # fail at create, not at the first exec
                self.group = cgroups.create(spec.limits.memory_mb, spec.limits.pids)
            except BaseException as exc:
                remove_tree(self.private)
                if isinstance(exc, OSError):
                    raise SandboxError(f"cannot set up the sandbox's control group: {exc}") from exc
                raise

    # -- environment and filesystem ---------------------------------------
    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """The command's whole environment: PATH/HOME/LANG, then ``spec.env``, then ``extra``."""
        env = {"PATH": default_path(), "HOME": HOME, "LANG": "C.UTF-8"}
        env.update(self.spec.env)
        if extra:
            check_env(extra, "exec env")
            env.update(extra)
        return env

    def mounts(self) -> list[Mount]:
        """The whole sandbox filesystem, shallow destinations first (computed once)."""
        if self._mounts is None:
            self._mounts = self._compute_mounts()
        return self._mounts

    def _compute_mounts(self) -> list[Mount]:
        spec = self.spec
        tmp_size = int(spec.limits.tmp_mb) * 1024 * 1024
        ms = base_mounts(list(spec.ro_binds))
        ms.append(Mount("rw", WORKSPACE, src=str(Path(spec.workspace).resolve())))
        if spec.home is not None:
            ms.append(Mount("rw", HOME, src=str(Path(spec.home).resolve())))
        else:
            ms.append(Mount("tmpfs", HOME, mode=0o700 if self.run_as is None else 0o1777, size=tmp_size))
        ms += [Mount("tmpfs", "/tmp", mode=0o1777, size=tmp_size), Mount("proc", "/proc"), Mount("dev", "/dev"),
               Mount("tmpfs", "/dev/shm", mode=0o1777, size=tmp_size)]
        hosts = self.private / "hosts"
        if not hosts.exists():
            hosts.write_text("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
        ms.append(Mount("ro", "/etc/hosts", src=str(hosts)))
        if spec.proxy_socket is not None:
            ms.append(Mount("ro", PROXY_SOCKET_PATH, src=str(Path(spec.proxy_socket).resolve())))
        ms += list(self.extra_mounts)
        return sorted(ms, key=lambda m: len(Path(m.dest).parts))

    def launch_config(self, argv: list[str], env: dict[str, str], cwd: str, setup: dict | None) -> dict:
        """Configuration for :mod:`harness.sandbox.launcher`."""
        cfg: dict = {"argv": list(argv), "env": env, "cwd": cwd, "setup": setup, "uid": self.run_as, "rlimits": {}}
        if self.run_as is not None:
            cfg["rlimits"]["NPROC"] = int(self.spec.limits.pids)
        if self.spec.proxy_socket is not None:
            cfg["bridge"] = {"port": int(self.spec.proxy_port), "unix": PROXY_SOCKET_PATH}
        return cfg

    def write_launch_config(self, cfg: dict) -> Path:
        with self._lock:
            self._launches += 1
            path = self.private / f"launch-{self._launches}.cfg"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            marshal.dump(cfg, fh)
        return path

    def _command(self, argv: list[str], env: dict[str, str], cwd: str) -> Launch:
        raise NotImplementedError

    # -- running ----------------------------------------------------------
    def spawn(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str = WORKSPACE,
              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) -> SandboxProcess:
        """Start ``argv`` in the sandbox and return at once (pipes are binary).

        With bubblewrap and unshare the command dies with the thread that
        called ``spawn`` (parent-death signal, so a crashed harness leaves no
        sandbox behind): spawn from a thread that outlives the command.
        """
        if self._destroyed:
            raise SandboxError("the sandbox was destroyed")
        if not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError(f"argv must be a non-empty list of strings, got {argv!r}")
        launch = self._command(list(argv), self.environment(env), cwd)
        host_argv = launch.argv if self.group is None else cgroups.join_command(self.group, launch.argv)
        try:
            popen = subprocess.Popen(
                host_argv, env=launch.env, stdin=stdin, stdout=stdout, stderr=stderr,
                start_new_session=True, close_fds=True, pass_fds=launch.pass_fds, cwd=launch.cwd,
            )
        except BaseException:
            for path in launch.cleanup:
                path.unlink(missing_ok=True)
            raise
        finally:
            for fd in launch.pass_fds:
                os.close(fd)
        proc = SandboxProcess(popen, on_exit=lambda p: self._exited(p, launch.cleanup))
        with self._lock:
            self._live.add(proc)
        return proc

    def _exited(self, proc: SandboxProcess, cleanup: tuple[Path, ...]) -> None:
        with self._lock:
            self._live.discard(proc)
        for path in cleanup:
            path.unlink(missing_ok=True)

    def exec(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: str = WORKSPACE,
             stdin: str | None = None, timeout: float = 3600.0) -> ExecResult:
        """Run ``argv`` to completion; on timeout kill the whole tree (``timed_out=True``, returncode None).

        Output past :attr:`max_output` bytes per stream is replaced by a marker.
        """
        started = time.monotonic()
        proc = self.spawn(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE)
        readers = [BoundedCapture(proc.stdout, self.max_output), BoundedCapture(proc.stderr, self.max_output)]
        for r in readers:
            r.start()
        if stdin is not None:
            threading.Thread(target=_feed, args=(proc.stdin, stdin.encode()), daemon=True).start()
        try:
            rc: int | None = proc.wait(timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            proc.kill()
            rc, timed_out = None, True
        for r in readers:
            r.join(5.0)
        return ExecResult(rc, readers[0].text(), readers[1].text(), timed_out, time.monotonic() - started)

    # -- files --------------------------------------------------------------
    def host_path(self, path: str) -> Path:
        """Host location of a sandbox path under /workspace or /home/agent (relative: /workspace).

        Raises ValueError for other paths and for paths whose links lead out of those folders.
        """
        inner = path if path.startswith("/") else f"{WORKSPACE}/{path}"
        inner = os.path.normpath(inner)
        roots = {WORKSPACE: self.spec.workspace}
        if self.spec.home is not None:
            roots[HOME] = self.spec.home
        for prefix, host_root in roots.items():
            if inner == prefix or inner.startswith(prefix + "/"):
                root = Path(host_root).resolve()
                host = root / inner[len(prefix):].lstrip("/")
                real = Path(os.path.realpath(host))
                if real != root and root not in real.parents:
                    raise ValueError(f"{path}: resolves outside {prefix} (a link out of the sandbox)")
                return host
        raise ValueError(f"{path}: only paths under {WORKSPACE} or {HOME} can be copied out")

    def copy_out(self, path: str, dest: Path) -> None:
        """Copy ``path`` (file or folder; links inside folders are copied as links) to ``dest``."""
        src = self.host_path(path)
        if not src.exists():
            raise FileNotFoundError(f"{path}: no such file in the sandbox")
        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            copy_tree(src, dest)
        elif src.is_file():
            shutil.copyfile(src, dest)
        else:
            raise ValueError(f"{path}: not a regular file or folder")

    def destroy(self) -> None:
        """Kill every running command and delete the sandbox's private files (idempotent)."""
        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
            live = list(self._live)
        for proc in live:
            proc.kill()
        if self.group is not None:
            self.group.remove()
        remove_tree(self.private)


def _feed(pipe, data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass

"""In-sandbox launcher: finish the sandbox, start the proxy bridge, run the command, report its status.

Runs as the first program inside a local sandbox (standard library only; the
backends start it as ``python -E -s -S launcher.py CONFIG``, where CONFIG is
a dict written with :mod:`marshal` by the same interpreter: no json/re import
on the critical path).  Steps:

1. ``setup`` (unshare backend only): make mounts private, build the new root on
   a tmpfs from the allowlist in ``mounts``, mount ``/proc`` (``/proc/sys``
   read-only) and a minimal ``/dev``, pivot_root into it, set the hostname and
   bring loopback up.
2. Resource limits (``rlimits``, e.g. ``{"NPROC": 64}``), then either switch to
   the unprivileged ``uid`` or drop every capability; ``no_new_privs`` is set.
3. ``bridge``: bind ``127.0.0.1:<port>`` and forward it to the proxy socket
   (the socket listens before the command starts).
4. Spawn ``argv`` in its own session with ``env`` in ``cwd``; as PID 1 of the
   namespace reap every orphan; exit with the command's status
   (``128 + signal`` when it was killed by a signal).

Exit codes of the launcher itself: 125 setup failed, 126 command not
executable, 127 command not found (as in shells and container runtimes).
"""

from __future__ import annotations

import marshal
import os
import resource
import sys

try:  # the C module: plain ints, without the enum machinery ``signal`` imports (~10 ms)
    from _signal import SIGPIPE, SIGXFSZ
except ImportError:  # pragma: no cover
    from signal import SIGPIPE, SIGXFSZ

# Only what every launch needs is imported up front: the launcher is on the
# critical path of every command.  ``linux`` (ctypes) is for the unshare
# setup, ``bridge`` (C modules only: ``_socket``, ``select``) for the proxy.


def _sibling(name: str):
    """Import a module of this package, as part of it (tests) or as a script's neighbour (-S)."""
    try:
        return __import__(f"harness.sandbox.{name}", fromlist=[name])
    except ImportError:  # pragma: no cover - exercised inside sandboxes
        return __import__(name)


EXIT_SETUP, EXIT_NOEXEC, EXIT_NOTFOUND = 125, 126, 127
DEV_NODES = ("null", "zero", "full", "random", "urandom", "tty")


class SetupError(Exception):
    """The sandbox could not be finished; the message names the step and path."""


def _inside(root: str, path: str) -> str:
    """``path`` under the new root, refusing links that lead out of it."""
    root = os.path.realpath(root)
    target = os.path.normpath(root + "/" + path.lstrip("/"))
    parent = os.path.realpath(os.path.dirname(target))
    if parent != root and not parent.startswith(root + "/"):
        raise SetupError(f"mount point {path} resolves outside the new root")
    return target


def _mkfile(path: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.lexists(path):
        with open(path, "a"):
            pass


def _setup_dev(target: str) -> None:
    linux = _sibling("linux")
    linux.mount("tmpfs", target, "tmpfs", linux.MS_NOSUID | linux.MS_NOEXEC, "mode=0755")
    for name in DEV_NODES:
        if os.path.exists(f"/dev/{name}"):
            _mkfile(f"{target}/{name}")
            linux.mount(f"/dev/{name}", f"{target}/{name}", None, linux.MS_BIND)
    for name, dest in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                       ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2"), ("ptmx", "pts/ptmx")):
        os.symlink(dest, f"{target}/{name}")
    os.mkdir(f"{target}/shm")  # its size-limited tmpfs is a mount of its own
    os.mkdir(f"{target}/pts")
    try:
        linux.mount("devpts", f"{target}/pts", "devpts", linux.MS_NOSUID | linux.MS_NOEXEC,
                    "newinstance,ptmxmode=0666,mode=0620")
    except OSError:
        pass  # no pseudo-terminals; commands run without a tty anyway


def setup_root(root: str, mounts: list[dict], hostname: str | None, disable_userns: bool = False) -> None:
    """Build the sandbox root at ``root`` from ``mounts`` and pivot into it (needs CAP_SYS_ADMIN).

    ``disable_userns`` (only inside a user namespace of our own): forbid nested user namespaces.
    """
    linux = _sibling("linux")
    os.umask(0o022)
    linux.make_private("/")
    linux.mount("tmpfs", root, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, "mode=0755")
    for m in mounts:
        kind, dest, src = m["kind"], m["dest"], m.get("src")
        target = _inside(root, dest)
        try:
            if kind == "symlink":
                os.makedirs(os.path.dirname(target), exist_ok=True)
                os.symlink(src, target)
            elif kind in ("ro", "rw"):
                if os.path.isdir(src):
                    os.makedirs(target, exist_ok=True)
                else:
                    _mkfile(target)
                linux.bind(src, target, readonly=kind == "ro")
            elif kind == "tmpfs":
                os.makedirs(target, exist_ok=True)
                mode = m.get("mode") or 0o755
                size = f",size={int(m['size'])}" if m.get("size") else ""
                linux.mount("tmpfs", target, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, f"mode={mode:o}{size}")
            elif kind == "proc":
                os.makedirs(target, exist_ok=True)
                linux.mount("proc", target, "proc", linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC)
                if disable_userns:  # our own user namespace's limit: no nested user namespaces
                    with open(f"{target}/sys/user/max_user_namespaces", "w") as fh:
                        fh.write("0")
                for sub in ("sys", "sysrq-trigger"):
                    if os.path.exists(f"{target}/{sub}"):
                        linux.bind(f"{target}/{sub}", f"{target}/{sub}", readonly=True)
            elif kind == "dev":
                os.makedirs(target, exist_ok=True)
                _setup_dev(target)
            else:
                raise SetupError(f"unknown mount kind {kind!r} for {dest}")
        except OSError as exc:
            raise SetupError(f"{kind} mount of {src or kind} at {dest}: {exc}") from exc
    linux.pivot_root(root)
    if hostname:
        linux.set_hostname(hostname)
    linux.loopback_up()


def start_bridge(port: int, unix_path: str) -> None:
    """Listen on 127.0.0.1:``port`` now; serve (forward to ``unix_path``) from a background thread.

    Only C modules are used here so the command can start at once; clients that
    connect before the thread's loop runs wait in the listen backlog.
    """
    import _socket
    import _thread

    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)  # close-on-exec
    sock.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(256)
    _thread.start_new_thread(_serve_bridge, (sock.detach(), unix_path))


def _serve_bridge(fd: int, unix_path: str) -> None:
    try:
        import _socket  # not ``socket``: the bridge needs only the C module (``socket`` imports enum)

        bridge = _sibling("bridge")
        bridge.serve(unix_path, _socket.socket(fileno=fd))
    except BaseException as exc:  # noqa: BLE001 - report, the command sees connection errors
        print(f"sandbox: proxy bridge stopped: {exc!r}", file=sys.stderr, flush=True)


def _which(cmd: str, path: str) -> str | None:
    if "/" in cmd:
        return cmd if os.path.exists(cmd) else None
    for d in path.split(":"):
        candidate = os.path.join(d or ".", cmd)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _wait(pid: int) -> int:
    """Wait for ``pid``; as PID 1 also reap every orphan re-parented to us."""
    while True:
        try:
            done, status = os.waitpid(-1 if os.getpid() == 1 else pid, 0)
        except ChildProcessError:
            return EXIT_SETUP
        if done == pid:
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def run(cfg: dict) -> int:
    """Carry out a launch configuration (see the module docstring); returns the exit status."""
    setup = cfg.get("setup")
    try:
        if setup:
            setup_root(setup["root"], setup["mounts"], setup.get("hostname"), bool(setup.get("disable_userns")))
        for name, value in (cfg.get("rlimits") or {}).items():
            limit = getattr(resource, f"RLIMIT_{name}")
            resource.setrlimit(limit, (value, value))
        if setup:  # (bubblewrap has already dropped capabilities and set no_new_privs)
            linux = _sibling("linux")
            linux.drop_bounding_set()
            linux.set_no_new_privs()
        uid = cfg.get("uid")
        if uid is not None:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)  # clears every capability
        elif setup:
            linux.clear_capabilities()
        if cfg.get("bridge"):
            start_bridge(int(cfg["bridge"]["port"]), cfg["bridge"]["unix"])
        os.chdir(cfg.get("cwd") or "/")
    except (OSError, SetupError, ValueError) as exc:
        print(f"sandbox setup failed: {exc}", file=sys.stderr, flush=True)
        return EXIT_SETUP

    argv, env = cfg["argv"], cfg.get("env") or {}
    path = _which(argv[0], env.get("PATH", "/usr/bin:/bin"))
    if path is None:
        print(f"sandbox: command not found: {argv[0]}", file=sys.stderr, flush=True)
        return EXIT_NOTFOUND
    try:
        pid = os.posix_spawn(path, argv, env, setsid=True, setsigdef=(SIGPIPE, SIGXFSZ))
    except OSError as exc:
        print(f"sandbox: cannot execute {argv[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        return EXIT_NOEXEC
    return _wait(pid)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: launcher.py CONFIG", file=sys.stderr)
        return EXIT_SETUP
    with open(argv[1], "rb") as fh:
        cfg = marshal.load(fh)
    return run(cfg)


if __name__ == "__main__":
    status = main(sys.argv)
    sys.stderr.flush()
    os._exit(status)  # no interpreter teardown: the bridge thread may still be serving

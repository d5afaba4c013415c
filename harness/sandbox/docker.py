# Over 500 lines: the Docker sandbox, its exec protocol and its bridge start-up are one unit of isolation.
"""Docker sandbox backend: one isolated container of the agent runtime image per episode.

Each sandbox is one container of the agent runtime image, created with
``network_mode="none"`` (loopback only), CPU / memory / pids limits from
:class:`~harness.contracts.sandbox.Limits`, the episode workspace bind-mounted
read-write at ``/workspace`` and the per-episode home at ``/home/agent``.  The
container's main process is ``sleep infinity`` under the engine's init; every
command is a ``docker exec``.

- **User.**  Commands run as the caller's uid:gid when the harness is not root;
  when it is root they run as uid:gid 1000:1000 (the image's ``agent`` user)
  and the workspace and home are handed to that uid first.  All capabilities
  are dropped and ``no-new-privileges`` is set.
- **Model proxy.**  When ``spec.proxy_socket`` is set, the socket's folder is
  bind-mounted read-only at ``/run/harness`` and the stdlib bridge
  (``harness/sandbox/bridge.py``, mounted read-only at ``/opt/harness/bridge.py``)
  is started inside before :meth:`DockerBackend.create` returns, so the
  command reaches ``http://127.0.0.1:{spec.proxy_port}``.
- **Timeouts.**  Every exec carries a marker variable (``HARNESS_EXEC_ID``)
  and, as every ``docker exec``, leads its own session.  On timeout every
  process carrying that marker, every process in a session of one of them,
  and every process that carries no marker at all (it cleared its
  environment) is stopped and killed from inside; if the output stream still
  does not end, the container is killed.  Nothing waits forever.
- **Labels.**  Every container carries ``harness.managed=1`` plus
  ``spec.labels`` (``harness.run``, ``harness.episode``), which
  :func:`cleanup` uses to remove what a killed run left behind.
"""

from __future__ import annotations

import os
import re
import select
import socket
import stat
import struct
import tarfile
import tempfile
import threading
import time
import uuid
from pathlib import Path

from harness.untrusted import copy_tree, remove_tree
from harness.contracts.sandbox import HOME, WORKSPACE, ExecResult, Sandbox, SandboxBackend, SandboxSpec

from harness.sandbox.docker_engine import (LABEL_EPISODE, LABEL_MANAGED, LABEL_RUN, DockerSandboxError, connect,
                                           engine_address, owner_alive, owner_label)
#: uid:gid commands run as when the harness itself runs as root.
AGENT_UID = 1000
AGENT_GID = 1000
PROXY_DIR = "/run/harness"
BRIDGE_IN_CONTAINER = "/opt/harness/bridge.py"
EXEC_MARKER = "HARNESS_EXEC_ID"
#: Most bytes kept per output stream of one exec (the rest is counted, not kept).
MAX_OUTPUT_BYTES = 64 * 2**20
#: Seconds to wait for the output stream to end after the kill sweep before killing the container.
KILL_GRACE = 5.0
BRIDGE_START_TIMEOUT = 15.0

# Stop, then kill: every process whose environment holds the exec marker, every process
# in a session led by one of them, and every process that carries no marker at all
# (it cleared its environment to escape; the container's own processes all carry one).
# Repeat until none is left (forks mid-sweep).
_KILL_SWEEP = r"""
m="$1"; me=$$
pass=0
while [ $pass -lt 20 ]; do
  pass=$((pass + 1)); pids=""; sids=" "
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$me" ] && continue
    [ "$p" = 1 ] && continue
    envs=$(tr '\0' '\n' < "$d/environ" 2>/dev/null) || continue
    if printf '%s\n' "$envs" | grep -qxF "$m"; then
      pids="$pids $p"
      st=$(cat "$d/stat" 2>/dev/null) || continue
      set -- ${st##*) }
      [ "${4:-0}" -gt 1 ] && sids="$sids$4 "
    elif ! printf '%s\n' "$envs" | grep -q "^HARNESS_EXEC_ID="; then
      pids="$pids $p"
    fi
  done
  if [ "$sids" != " " ]; then
    for d in /proc/[0-9]*; do
      p=${d#/proc/}
      [ "$p" = "$me" ] && continue
      st=$(cat "$d/stat" 2>/dev/null) || continue
      set -- ${st##*) }
      case "$sids" in *" ${4:-x} "*) pids="$pids $p";; esac
    done
  fi
  [ -z "$pids" ] && exit 0
  kill -STOP $pids 2>/dev/null
  kill -KILL $pids 2>/dev/null
  sleep 0.05
done
exit 1
"""

# Start the bridge in its own session, detached, and return once it accepts connections.
_BRIDGE_START = r"""
import socket, subprocess, sys, time
bridge, port, sock, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
log = open("/tmp/harness-bridge.log", "wb")
proc = subprocess.Popen([sys.executable, "-S", bridge, "--listen", f"127.0.0.1:{port}", "--unix", sock],
                        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
deadline = time.monotonic() + timeout
while time.monotonic() < deadline:
    if proc.poll() is not None:
        break
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        print(proc.pid)
        sys.exit(0)
    except OSError:
        time.sleep(0.005)
log.flush()
sys.stderr.write(open("/tmp/harness-bridge.log", errors="replace").read()[-2000:])
sys.exit(1)
"""


def _name_part(value: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", value).strip("-.")[:40] or "x"


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give ``root`` and everything below it (not following symlinks) to uid:gid."""
    os.chown(root, uid, gid, follow_symlinks=False)
    stack = [os.fspath(root)]
    while stack:  # iterative: any depth
        with os.scandir(stack.pop()) as entries:
            for entry in entries:
                os.chown(entry.path, uid, gid, follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)


def bridge_script() -> Path:
    """Host path of the stdlib bridge script (``harness/sandbox/bridge.py``)."""
    path = Path(__file__).with_name("bridge.py")
    if not path.is_file():
        raise DockerSandboxError(f"the proxy bridge script {path} is missing from this installation")
    return path


class DockerBackend(SandboxBackend):
    """Sandboxes as Docker containers.

    ``image``: the image every sandbox uses when ``spec.image`` is unset; by
    default ``$HARNESS_DOCKER_IMAGE`` or the built agent runtime image of the
    current recipe (:func:`harness.image.build.find_agent_image`).
    """

    name = "docker"
    #: Below the local backends (bubblewrap 20, unshare 10): ``auto`` picks docker only where
    #: neither runs, since agents that run host programs (e.g. the classical baselines'
    #: ``sys.executable``) need the host's filesystem.  Name it to use it (``--sandbox docker``).
    priority = 5
    runs_images = True

    def __init__(self, image: str | None = None):
        self.image = image

    # -- availability ---------------------------------------------------------
    def _default_image(self, client) -> tuple[str | None, str]:
        """(image to use, reason it is missing)."""
        image = self.image or os.environ.get("HARNESS_DOCKER_IMAGE")
        if image:
            return (image, "") if _image_exists(client, image) else (
                None, f"the image {image} is not present in the Docker engine: build or load it first")
        from harness.image.build import find_agent_image

        found, expected = find_agent_image(client)
        if found:
            return found, ""
        return None, (f"the agent runtime image ({expected}) is not built: run `harness image build --bootstrap` "
                      "(or `harness image build` where an image registry is reachable)")

    def describe(self) -> dict[str, str]:
        """The backend, the image tag and its id (recorded in run.json)."""
        try:
            client = connect(timeout=10)
        except DockerSandboxError as exc:
            return {"backend": self.name, "error": str(exc)}
        try:
            image, why = self._default_image(client)
            if image is None:
                return {"backend": self.name, "error": why}
            return {"backend": self.name, "image": image, "image_id": client.images.get(image).id,
                    "limits_enforced": "cpus, memory_mb, pids (engine cgroups), tmp_mb for /dev/shm (shm size)",
                    "limits_not_enforced": "tmp_mb for /tmp (the container's writable layer, on disk; "
                                           "its memory is not at risk)"}
        finally:
            client.close()

    def available(self) -> tuple[bool, str]:
        """(True, engine and image) or (False, one sentence: no engine, or the image is missing)."""
        try:
            client = connect(timeout=10)
        except DockerSandboxError as exc:
            return False, str(exc)
        try:
            image, reason = self._default_image(client)
            if not image:
                return False, reason
            version = client.version().get("Version", "?")
            return True, f"Docker {version} at {engine_address()} with image {image}"
        except Exception as exc:  # noqa: BLE001
            return False, f"the Docker engine at {engine_address()} answered but failed: {exc}"
        finally:
            client.close()

    # -- create -----------------------------------------------------------------
    def submission_runner(self, limits, call_timeout: float, memory_mb: int, import_timeout: float,
                          budget: float):
        """``rule.py`` is evaluated in the agent image it was developed in (:mod:`harness.sandbox.docker_rules`)."""
        from harness.sandbox.docker_rules import make_docker_runner

        return make_docker_runner(self, limits, call_timeout, memory_mb, import_timeout=import_timeout,
                                  budget=budget)

    def create(self, spec: SandboxSpec) -> DockerSandbox:
        """Create and start the container for ``spec`` (and the proxy bridge when asked).

        Raises :class:`DockerSandboxError` when no engine answers, the image is
        missing, or the container or bridge fails to start (nothing is left behind).
        """
        client = connect()
        image = spec.image
        if image is None:
            image, reason = self._default_image(client)
            if image is None:
                client.close()
                raise DockerSandboxError(reason)
        elif not _image_exists(client, image):
            client.close()
            raise DockerSandboxError(f"the image {image} is not present in the Docker engine: build or load it first")
        import docker.errors

        sandbox = DockerSandbox(client, spec, image)
        try:
            sandbox._start()
        except docker.errors.APIError as exc:
            sandbox.destroy()
            raise DockerSandboxError(f"the container did not start: {exc.explanation or exc}") from None
        except BaseException:
            sandbox.destroy()
            raise
        return sandbox


def _image_exists(client, image: str) -> bool:
    import docker.errors

    try:
        client.images.get(image)
        return True
    except docker.errors.ImageNotFound:
        return False


class DockerSandbox(Sandbox):
    """One live container.  ``container_id`` and ``user`` are set once started."""

    def __init__(self, client, spec: SandboxSpec, image: str):
        self.client = client
        self.spec = spec
        self.image = image
        self.container_id: str | None = None
        self.user = ""
        self.bridge_pid: int | None = None
        self._destroyed = False
        self._lock = threading.Lock()

    # -- lifecycle ------------------------------------------------------------------
    def _user(self) -> str:
        if os.getuid() != 0:
            return f"{os.getuid()}:{os.getgid()}"
        for folder in (self.spec.workspace, self.spec.home):
            if folder is not None:
                _chown_tree(Path(folder), AGENT_UID, AGENT_GID)
        return f"{AGENT_UID}:{AGENT_GID}"

    def _mounts(self) -> list:
        from docker.types import Mount

        spec = self.spec
        workspace = Path(spec.workspace).resolve()
        if not workspace.is_dir():
            raise DockerSandboxError(f"workspace {workspace} is not a folder")
        mounts = [Mount(WORKSPACE, str(workspace), type="bind", read_only=False)]
        if spec.home is not None:
            home = Path(spec.home).resolve()
            if not home.is_dir():
                raise DockerSandboxError(f"home {home} is not a folder")
            mounts.append(Mount(HOME, str(home), type="bind", read_only=False))
        for path in spec.ro_binds:
            path = Path(path).resolve()
            if not path.exists():
                raise DockerSandboxError(f"read-only bind {path} does not exist")
            mounts.append(Mount(str(path), str(path), type="bind", read_only=True))
        if spec.proxy_socket is not None:
            sock = Path(spec.proxy_socket)
            if not sock.exists() or not stat.S_ISSOCK(sock.stat().st_mode):
                raise DockerSandboxError(f"proxy_socket {sock} is not a Unix socket")
            mounts.append(Mount(PROXY_DIR, str(sock.parent.resolve()), type="bind", read_only=True))
            mounts.append(Mount(BRIDGE_IN_CONTAINER, str(bridge_script()), type="bind", read_only=True))
        return mounts

    def _start(self) -> None:
        spec = self.spec
        mounts = self._mounts()
        self.user = self._user()
        labels = {LABEL_MANAGED: "1", **owner_label(), **{k: str(v) for k, v in spec.labels.items()}}
        name = "harness-" + "-".join(_name_part(spec.labels[k]) for k in (LABEL_RUN, LABEL_EPISODE) if k in spec.labels)
        name = f"{name}-{uuid.uuid4().hex[:8]}"
        env = {"HOME": HOME, "LANG": "C.UTF-8", **spec.env, EXEC_MARKER: "container"}
        limits = spec.limits
        memory = f"{int(limits.memory_mb)}m"
        api = self.client.api  # the low-level calls: the high-level create inspects the new container again
        host_config = api.create_host_config(
            network_mode="none",
            init=True,
            nano_cpus=int(round(limits.cpus * 1e9)),
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=int(limits.pids),
            shm_size=f"{int(limits.tmp_mb)}m",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mounts=mounts,
        )
        created = api.create_container(
            self.image,
            command=["sleep", "infinity"],
            name=name,
            labels=labels,
            environment=env,
            working_dir=WORKSPACE,
            user=self.user,
            hostname="sandbox",
            host_config=host_config,
            detach=True,
        )
        self.container_id = created["Id"]
        api.start(self.container_id)
        if spec.proxy_socket is not None:
            self._start_bridge()

    def _start_bridge(self) -> None:
        sock = Path(self.spec.proxy_socket)
        owner = sock.stat()
        inside = f"{PROXY_DIR}/{sock.name}"
        result = self.exec(
            ["python3", "-S", "-c", _BRIDGE_START, BRIDGE_IN_CONTAINER, str(self.spec.proxy_port), inside,
             str(BRIDGE_START_TIMEOUT)],
            cwd="/", timeout=BRIDGE_START_TIMEOUT + 10, _user=f"{owner.st_uid}:{owner.st_gid}", _marker="bridge",
        )
        if result.returncode != 0:
            detail = (result.stderr or result.stdout).strip()[-500:]
            raise DockerSandboxError(f"the proxy bridge did not start in the container (exit {result.returncode}): {detail}")
        try:
            self.bridge_pid = int(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            self.bridge_pid = None

    def destroy(self) -> None:
        """Remove the container (and its anonymous volumes).  Idempotent."""
        import docker.errors

        with self._lock:
            if self._destroyed:
                return
            self._destroyed = True
        try:
            if self.container_id:
                try:
                    self.client.api.remove_container(self.container_id, force=True, v=True)
                except docker.errors.NotFound:
                    pass
        finally:
            self.client.close()

    # -- exec ---------------------------------------------------------------------
    def exec(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str = WORKSPACE,
        stdin: str | None = None,
        timeout: float = 3600.0,
        _user: str | None = None,
        _marker: str | None = None,
    ) -> ExecResult:
        """Run ``argv`` in the container; on timeout kill its whole process tree.

        ``timeout``: wall-clock seconds.  Returns ``returncode=None`` and
        ``timed_out=True`` when the command was killed at the deadline.
        """
        if self._destroyed or not self.container_id:
            raise DockerSandboxError("the sandbox is destroyed")
        if not argv:
            raise ValueError("argv must not be empty")
        api = self.client.api
        marker = _marker or uuid.uuid4().hex
        full_env = {**(env or {}), EXEC_MARKER: marker}
        command = list(argv)
        started = time.monotonic()
        import docker.errors

        try:
            exec_id = api.exec_create(
                self.container_id, command, stdout=True, stderr=True, stdin=stdin is not None, tty=False,
                environment=full_env, workdir=cwd, user=_user or self.user,
            )["Id"]
            sock = api.exec_start(exec_id, socket=True)
        except docker.errors.APIError as exc:
            raise DockerSandboxError(f"cannot run {argv[0]!r} in the sandbox: {exc.explanation or exc}") from None
        raw: socket.socket = getattr(sock, "_sock", sock)
        writer = None
        if stdin is not None:
            writer = threading.Thread(target=_feed_stdin, args=(raw, stdin.encode()), daemon=True)
            writer.start()
        reader = _FrameReader()
        timed_out = not _pump(raw, reader, started + timeout)
        if timed_out:
            if _marker is None:
                self._kill_marked(marker)
            if not _pump(raw, reader, time.monotonic() + KILL_GRACE):
                self._kill_container()
        try:
            raw.close()
        except OSError:
            pass
        duration = time.monotonic() - started
        returncode = None
        if not timed_out:
            returncode = _exit_code(api, exec_id)
        return ExecResult(returncode, reader.text(1), reader.text(2), timed_out, duration)

    def _kill_marked(self, marker: str) -> None:
        """Kill every process of the exec tagged ``marker`` (and their sessions), from inside."""
        try:
            self.exec(["sh", "-c", _KILL_SWEEP, "sh", f"{EXEC_MARKER}={marker}"], cwd="/",
                      timeout=15.0, _marker="sweep")
        except Exception:  # noqa: BLE001 - the container kill below is the fallback
            self._kill_container()

    def _kill_container(self) -> None:
        import docker.errors

        try:
            self.client.api.kill(self.container_id)
        except docker.errors.APIError:
            pass

    # -- copy out -----------------------------------------------------------------
    def copy_out(self, path: str, dest: Path) -> None:
        """Copy ``path`` (file or folder inside the container) to host ``dest``.

        ``dest`` becomes the copy; when both are folders the contents are merged
        into ``dest``.  Links pointing outside the copy, device files and absolute
        names are skipped.  Raises FileNotFoundError when ``path`` does not exist.
        """
        import docker.errors

        dest = Path(dest)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            chunks, info = self.client.api.get_archive(self.container_id, path)
        except docker.errors.NotFound:
            raise FileNotFoundError(f"{path} does not exist in the sandbox") from None
        with tempfile.TemporaryDirectory(dir=dest.parent, prefix=".copy-out-") as tmp:
            archive = Path(tmp) / "archive.tar"
            with open(archive, "wb") as fh:
                for chunk in chunks:
                    fh.write(chunk)
            out = Path(tmp) / "out"
            out.mkdir()
            with tarfile.open(archive) as tar:
                tar.extractall(out, filter=_safe_member)
            copied = out / info["name"]
            if not copied.exists() and not copied.is_symlink():
                raise FileNotFoundError(f"{path} could not be copied out of the sandbox")
            if dest.is_dir() and copied.is_dir():
                copy_tree(copied, dest)
            else:
                if dest.is_dir() and not dest.is_symlink():
                    remove_tree(dest)
                elif dest.exists() or dest.is_symlink():
                    dest.unlink()
                copied.rename(dest)


def _safe_member(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    """``tarfile.data_filter``, skipping (not failing on) members it refuses."""
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError:
        return None


def _feed_stdin(raw: socket.socket, data: bytes) -> None:
    try:
        raw.sendall(data)
        raw.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _FrameReader:
    """Demultiplexes the engine's stdout/stderr frames (8-byte header: stream, 3 pad, size)."""

    def __init__(self):
        self.buffer = bytearray()
        self.out = {1: bytearray(), 2: bytearray()}
        self.dropped = {1: 0, 2: 0}

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= 8:
            stream, size = struct.unpack(">BxxxL", self.buffer[:8])
            if len(self.buffer) < 8 + size:
                return
            payload = bytes(self.buffer[8:8 + size])
            del self.buffer[:8 + size]
            target = self.out.get(stream if stream in (1, 2) else 1)
            room = MAX_OUTPUT_BYTES - len(target)
            target += payload[:max(room, 0)]
            self.dropped[stream if stream in (1, 2) else 1] += max(len(payload) - max(room, 0), 0)

    def text(self, stream: int) -> str:
        text = self.out[stream].decode("utf-8", errors="replace")
        if self.dropped[stream]:
            text += f"\n[harness: {self.dropped[stream]} more bytes of output dropped]\n"
        return text


def _pump(raw: socket.socket, reader: _FrameReader, deadline: float) -> bool:
    """Read frames until the stream ends (True) or ``deadline`` passes (False)."""
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        try:
            ready, _, _ = select.select([raw], [], [], min(remaining, 1.0))
        except (OSError, ValueError):
            return True
        if not ready:
            continue
        try:
            data = raw.recv(1 << 16)
        except (BlockingIOError, InterruptedError, socket.timeout):
            continue
        except OSError:
            return True
        if not data:
            return True
        reader.feed(data)


def _exit_code(api, exec_id: str) -> int | None:
    """The exec's exit code, waiting briefly for the engine to record it."""
    for _ in range(50):
        info = api.exec_inspect(exec_id)
        if not info.get("Running"):
            return info.get("ExitCode")
        time.sleep(0.02)
    return api.exec_inspect(exec_id).get("ExitCode")


# -- cleanup --------------------------------------------------------------------------
def cleanup(run_id: str | None = None, client=None, include_live: bool = True) -> tuple[list[str], list[str]]:
    """Remove containers and volumes labelled ``harness.managed=1`` (only run ``run_id`` if given).

    ``include_live`` False: keep those whose recorded owner (``harness.owner``)
    is still the same live process, or was another host's, or has no record
    (a shared engine may carry another user's live run).  Returns (removed
    container names, removed volume names).  Raises :class:`DockerSandboxError`
    when no engine answers.
    """
    import docker.errors

    own = client is None
    client = client or connect()
    filters = {"label": [f"{LABEL_MANAGED}=1"] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])}
    containers: list[str] = []
    volumes: list[str] = []
    try:
        for c in client.api.containers(all=True, filters=filters):
            if not include_live and owner_alive(c.get("Labels")) is not False:
                continue
            try:
                client.api.remove_container(c["Id"], force=True, v=True)
                containers.append((c.get("Names") or [c["Id"][:12]])[0].lstrip("/"))
            except docker.errors.NotFound:
                pass
        for v in client.api.volumes(filters=filters).get("Volumes") or []:
            if not include_live and owner_alive(v.get("Labels")) is not False:
                continue
            try:
                client.api.remove_volume(v["Name"], force=True)
                volumes.append(v["Name"])
            except docker.errors.NotFound:
                pass
    finally:
        if own:
            client.close()
    return containers, volumes

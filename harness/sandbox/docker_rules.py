"""Programmatic submissions evaluated in the agent image (programmatic submission mode, Docker episodes).

For a Docker episode, ``rule.py`` is evaluated in the same agent runtime image
the agent developed it in, so every import that worked for the agent
resolves (the runtime's pinned packages).  Each call of the runner (one batch:
the test batch, then the held-out batch) gets its own container:

* ``network_mode="none"``, all capabilities dropped, ``no-new-privileges``,
  read-only root filesystem with a small ``/tmp`` tmpfs, running as an
  unprivileged uid that owns nothing in the image;
* the only files added are the submitted module (read-only at
  ``/submission/<name>``) and the worker script (read-only at
  ``/opt/harness/rule_worker.py``): no workspace, no test or held-out folder;
* a memory cap (cgroup ``memory_mb`` + 256 MiB, swap off, on top of the
  worker's own RLIMIT_AS of ``memory_mb``) and a process cap (``limits.pids``).

The worker protocol and the per-call deadlines are those of
:class:`harness.submission.SandboxedSubmissionRunner`; only the sandbox
differs.  A worker that times out, crashes or is killed takes its container
with it: the container is removed and a fresh one serves the remaining
samples, so nothing a rule started (a fork bomb, a daemon) survives.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

from harness.contracts.sandbox import Limits, SandboxBackend
from harness.contracts.task import CallResult
from harness.sandbox import owner
from harness.sandbox.docker_engine import LABEL_MANAGED, DockerSandboxError, connect, owner_label
from harness.submission import (DEFAULT_RULE_BUDGET, SUBMISSION_DIR, WORKER_ENV, WORKER_PIDS,
                                SandboxedSubmissionRunner, read_submission_inputs)

WORKER_IN_CONTAINER = "/opt/harness/rule_worker.py"
#: Extra container memory beyond the worker's address-space cap (interpreter, page cache).
MEMORY_HEADROOM_MB = 256
#: uid:gid the worker runs as: owns nothing in the image.
WORKER_USER = "64000:64000"
LABEL_ROLE = "harness.role"


def agent_image(backend: SandboxBackend | None, client) -> str:
    """The image Docker episodes run in: the backend's, ``$HARNESS_DOCKER_IMAGE``, or the built runtime image.

    Raises :class:`DockerSandboxError` when none is present in the engine.
    """
    image = getattr(backend, "image", None) or os.environ.get("HARNESS_DOCKER_IMAGE")
    if image:
        return image
    from harness.image.build import find_agent_image

    found, expected = find_agent_image(client)
    if not found:
        raise DockerSandboxError(f"the agent runtime image ({expected}) is not built: run `harness image build "
                                 "--bootstrap` to evaluate rule.py in it")
    return found


class _ExecProcess:
    """A ``docker exec`` seen as a process with pipes (what the rule-worker protocol reads and writes).

    Two threads copy between the exec's attached socket (multiplexed
    stdout/stderr frames) and local pipes.  :meth:`kill` removes the whole
    container (see :class:`_RuleContainer`).
    """

    def __init__(self, owner: _RuleContainer, argv: list[str], env: dict[str, str]):
        api = owner.client.api
        self.owner, self.api = owner, api
        self.exec_id = api.exec_create(owner.container_id, argv, stdin=True, stdout=True, stderr=True, tty=False,
                                       environment=env, workdir="/tmp", user=WORKER_USER)["Id"]
        sock = api.exec_start(self.exec_id, socket=True)
        self.raw: socket.socket = getattr(sock, "_sock", sock)
        out_r, self._out_w = os.pipe()
        err_r, self._err_w = os.pipe()
        self._in_r, in_w = os.pipe()
        self.stdout = os.fdopen(out_r, "rb", buffering=0)
        self.stderr = os.fdopen(err_r, "rb", buffering=0)
        self.stdin = os.fdopen(in_w, "wb", buffering=0)
        self.returncode: int | None = None
        threading.Thread(target=self._demux, daemon=True).start()
        threading.Thread(target=self._feed, daemon=True).start()

    def _demux(self) -> None:
        buffer = b""
        try:
            while True:
                chunk = self.raw.recv(1 << 16)
                if not chunk:
                    break
                buffer += chunk
                while len(buffer) >= 8:
                    stream, size = struct.unpack(">BxxxL", buffer[:8])
                    if len(buffer) < 8 + size:
                        break
                    payload, buffer = buffer[8:8 + size], buffer[8 + size:]
                    fd = self._err_w if stream == 2 else self._out_w
                    view = memoryview(payload)
                    while view:
                        view = view[os.write(fd, view):]
        except OSError:
            pass
        finally:
            for fd in (self._out_w, self._err_w):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _feed(self) -> None:
        try:
            while chunk := os.read(self._in_r, 1 << 16):
                self.raw.sendall(chunk)
            self.raw.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            os.close(self._in_r)

    def _running(self) -> bool:
        try:
            info = self.api.exec_inspect(self.exec_id)
        except Exception:  # noqa: BLE001 - the container is gone: the exec is over
            self.returncode = self.returncode if self.returncode is not None else 137
            return False
        if info.get("Running"):
            return True
        code = info.get("ExitCode")
        self.returncode = code if isinstance(code, int) else 137
        return False

    def poll(self) -> int | None:
        return None if self._running() else self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._running():
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired("rule worker", timeout)
            time.sleep(0.05)
        return self.returncode  # type: ignore[return-value]

    def kill(self) -> None:
        """End the worker and everything it started (the container goes with it) unless it already exited."""
        if self._running():
            self.owner.recycle()
            self.returncode = 137
        try:
            self.raw.close()
        except OSError:
            pass


class _RuleContainer:
    """The container rule workers run in; :meth:`spawn` is what the worker protocol needs."""

    def __init__(self, client, image: str, submission: Path, limits: Limits, memory_mb: int, labels: dict[str, str]):
        self.client, self.image, self.submission = client, image, submission
        self.limits, self.memory_mb, self.labels = limits, memory_mb, labels
        self.container_id: str | None = None

    def _create(self) -> None:
        from docker.types import Mount

        worker = Path(__file__).with_name("rule_worker.py")
        memory = f"{int(self.memory_mb) + MEMORY_HEADROOM_MB}m"
        container = self.client.containers.create(
            self.image, command=["sleep", "infinity"], name=f"harness-rule-{uuid.uuid4().hex[:12]}",
            labels={LABEL_MANAGED: "1", LABEL_ROLE: "rule", **owner_label(), **self.labels}, user=WORKER_USER,
            network_mode="none", init=True, read_only=True, tmpfs={"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"},
            working_dir="/tmp", environment={"HOME": "/tmp"}, hostname="rule",
            nano_cpus=int(round(self.limits.cpus * 1e9)), mem_limit=memory, memswap_limit=memory,
            pids_limit=int(self.limits.pids), cap_drop=["ALL"], security_opt=["no-new-privileges"],
            mounts=[Mount(SUBMISSION_DIR, str(self.submission), type="bind", read_only=True),
                    Mount(WORKER_IN_CONTAINER, str(worker), type="bind", read_only=True)],
            detach=True,
        )
        self.container_id = container.id
        container.start()

    def spawn(self, argv: list[str], *, cwd: str | None = None, **_ignored) -> _ExecProcess:
        if self.container_id is None:
            self._create()
        try:
            return _ExecProcess(self, argv, dict(WORKER_ENV))
        except Exception as exc:  # noqa: BLE001 - engine errors become one sentence
            raise DockerSandboxError(f"cannot start the rule worker in the container: {exc}") from None

    def recycle(self) -> None:
        """Remove the container; the next :meth:`spawn` starts a fresh one."""
        cid, self.container_id = self.container_id, None
        if cid:
            try:
                self.client.api.remove_container(cid, force=True, v=True)
            except Exception:  # noqa: BLE001 - already gone
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.recycle()


class DockerSubmissionRunner(SandboxedSubmissionRunner):
    """:class:`~harness.contracts.task.SubmissionRunner` evaluating rules in the agent image (see module docstring).

    ``backend``: the episode's Docker backend (its ``image`` is used when set).
    ``limits``: CPUs and process cap of the container.  ``call_timeout``,
    ``memory_mb`` and ``import_timeout`` as in the local runner.
    """

    def __init__(self, backend: SandboxBackend | None, limits: Limits, call_timeout: float, memory_mb: int,
                 import_timeout: float = 120.0, labels: dict[str, str] | None = None,
                 budget: float = DEFAULT_RULE_BUDGET):
        self.budget, self.spent = float(budget), 0.0
        if call_timeout <= 0 or import_timeout <= 0:
            raise ValueError("call_timeout and import_timeout must be positive")
        if memory_mb < 256:
            raise ValueError(f"memory_mb={memory_mb}: the worker needs at least 256 MiB to import pandas")
        self.backend, self.limits = backend, limits
        self.call_timeout, self.memory_mb, self.import_timeout = float(call_timeout), int(memory_mb), float(import_timeout)
        self.labels = dict(labels or {})

    def __call__(self, module: Path, function: str, inputs: list[Path]) -> list[CallResult]:
        """One result per input, in order (value, or error text such as ``"timeout after 5s"``)."""
        module = Path(module)
        samples, early = read_submission_inputs(module, function, inputs)
        if early is not None:
            return early
        client = connect()
        try:
            image = agent_image(self.backend, client)
            with tempfile.TemporaryDirectory(prefix="harness-sub-") as tmp:
                owner.write(Path(tmp))  # a killed run's copy is found by `harness sandbox cleanup`
                sub = Path(tmp) / "submission"
                sub.mkdir(mode=0o755)
                os.chmod(tmp, 0o755)
                shutil.copyfile(module, sub / module.name)
                os.chmod(sub / module.name, 0o644)
                argv = ["python3", "-I", WORKER_IN_CONTAINER, "--module", f"{SUBMISSION_DIR}/{module.name}",
                        "--function", function, "--memory-mb", str(self.memory_mb)]
                labels = {**self.labels, "harness.rule": secrets.token_hex(6)}
                with _RuleContainer(client, image, sub, self.limits, self.memory_mb, labels) as box:
                    return self._run_all(box, argv, samples)
        finally:
            client.close()


def make_docker_runner(backend: SandboxBackend | None = None, limits: Limits | None = None, call_timeout: float = 60.0,
                       memory_mb: int = 2048, *, import_timeout: float = 120.0,
                       budget: float = DEFAULT_RULE_BUDGET) -> DockerSubmissionRunner:
    """A :class:`DockerSubmissionRunner` (``limits`` None: ``Limits(pids=WORKER_PIDS)``)."""
    return DockerSubmissionRunner(backend, limits or Limits(pids=WORKER_PIDS), call_timeout, memory_mb,
                                  import_timeout, budget=budget)

"""Sandbox backend contract: create / exec / copy-out / destroy an isolated environment.

Every backend gives the sandbox no network but loopback, mounts the episode
workspace read-write at :data:`WORKSPACE` and nothing else writable that
survives, and kills the whole process tree on a wall-clock timeout.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

WORKSPACE = "/workspace"
HOME = "/home/agent"


@dataclass
class Limits:
    """Resource limits of one sandbox.

    ``cpus``: CPU share; ``memory_mb``: total memory of all the sandbox's
    processes, MiB; ``pids``: processes and threads at once; ``tmp_mb``: size
    of the private ``/tmp`` and of the private ``/dev/shm``, MiB each (their
    pages also count towards ``memory_mb``); ``workspace_mb``: disk space the
    workspace's files may take, MiB (enforced by the harness for every backend
    alike, :mod:`harness.workspace_cap`).  What a backend cannot enforce
    here it says in ``SandboxBackend.describe()["limits_not_enforced"]``.
    """

    cpus: float = 2.0
    memory_mb: int = 4096
    pids: int = 512
    tmp_mb: int = 1024
    workspace_mb: int = 10240


@dataclass
class SandboxSpec:
    """What to create.

    ``workspace``: host folder mounted read-write at :data:`WORKSPACE`.
    ``home``: host folder mounted read-write at :data:`HOME` (the agent's
    per-episode home/state; ``HOME`` points there), or None.
    ``ro_binds``: host paths made readable at the same path (local backends).
    ``image``: container image (docker backend).
    ``proxy_socket``: host Unix socket of the model proxy; the bridge inside
    exposes it at ``http://127.0.0.1:<proxy_port>``.
    ``labels``: run/episode ids attached to every resource created.
    """

    workspace: Path
    home: Path | None = None
    ro_binds: list[Path] = field(default_factory=list)
    image: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)
    proxy_socket: Path | None = None
    proxy_port: int = 8765
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class ExecResult:
    """Outcome of one exec: exit code (None when killed), captured output, timing."""

    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    duration: float


class Sandbox(ABC):
    """A live sandbox.  Use as a context manager; ``destroy`` is idempotent."""

    @abstractmethod
    def exec(
        self,
        argv: list[str],
        *,
        env: dict[str, str] | None = None,
        cwd: str = WORKSPACE,
        stdin: str | None = None,
        timeout: float = 3600.0,
    ) -> ExecResult:
        """Run ``argv``; on timeout kill the whole process tree and return ``timed_out=True``."""

    @abstractmethod
    def copy_out(self, path: str, dest: Path) -> None:
        """Copy ``path`` (inside the sandbox) to host ``dest``."""

    @abstractmethod
    def destroy(self) -> None:
        """Remove everything the sandbox created."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()


class SandboxBackend(ABC):
    """Contract every sandbox backend implements.

    ``priority``: higher is preferred by ``auto``.  ``runs_images``: the backend
    runs the agent runtime image (``auto`` prefers such a backend for agents
    with ``needs_image``).  ``runs_rule_workers``: ``create`` also takes
    ``mounts=`` and ``run_as=``, so a programmatic submission's ``rule.py`` can be
    evaluated under it on this host (:mod:`harness.submission`).
    """

    name: str
    priority: int = 0
    runs_images: bool = False
    runs_rule_workers: bool = False

    def submission_runner(self, limits, call_timeout: float, memory_mb: int, import_timeout: float,
                          budget: float):
        """How a ``rule.py`` written in this backend's sandbox is evaluated: a
        :class:`harness.contracts.SubmissionRunner`, or None for the default (a
        local rule sandbox, see :func:`harness.submission.make_runner`).  ``budget``: the total seconds
        one episode's calls may take (then the remaining samples are scored wrong with that reason)."""
        return None

    @abstractmethod
    def available(self) -> tuple[bool, str]:
        """Whether this backend can run here, and if not, why (one sentence)."""

    def describe(self) -> dict[str, str]:
        """What a run records about the environment it ran in (e.g. the image tag and id)."""
        return {"backend": self.name}

    @abstractmethod
    def create(self, spec: SandboxSpec) -> Sandbox:
        """Create a sandbox for ``spec``."""

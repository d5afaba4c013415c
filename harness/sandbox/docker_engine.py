"""The Docker engine connection and labels, shared by the Docker sandbox and the rule runner in the image."""

from __future__ import annotations

import os

from harness.errors import HarnessError
from harness.sandbox.errors import SandboxError

LABEL_MANAGED = "harness.managed"
LABEL_RUN = "harness.run"
LABEL_EPISODE = "harness.episode"
#: Owner record of a container (see :mod:`harness.sandbox.owner`): ``<host>:<pid>-<start>``.
LABEL_OWNER = "harness.owner"


def owner_label() -> dict[str, str]:
    """The label recording which harness process created a resource."""
    from harness.sandbox import owner

    me = owner.current()
    return {LABEL_OWNER: f"{me['host']}:{me['pid']}-{me['start']}"}


def owner_alive(labels: dict[str, str] | None) -> bool | None:
    """Whether the recorded owner still runs (another host's: assumed alive); None: no record."""
    from harness.sandbox import owner

    value = (labels or {}).get(LABEL_OWNER)
    if not value or ":" not in value:
        return None
    host, tag = value.rsplit(":", 1)
    try:
        pid, start = (int(x) for x in tag.split("-", 1))
    except ValueError:
        return None
    return owner.alive(pid, start, host)


class DockerSandboxError(SandboxError, HarnessError):
    """The Docker backend could not do what was asked; the message says what and how to fix it."""


def engine_address() -> str:
    """Where the Docker engine is expected: ``$DOCKER_HOST`` or ``/var/run/docker.sock``."""
    return os.environ.get("DOCKER_HOST") or "/var/run/docker.sock"


def no_engine_reason() -> str:
    """The one-sentence reason given when no engine answers."""
    return f"no Docker engine answers at {engine_address()}: start one (e.g. scripts/docker-engine.sh)"


def connect(timeout: float = 120.0):
    """A ``docker.DockerClient`` for the engine at :func:`engine_address` that answered a ping.

    Raises :class:`DockerSandboxError` (one sentence, no traceback) when none answers.
    """
    import docker

    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
        return client
    except Exception:  # noqa: BLE001 - every failure here means "no engine"
        raise DockerSandboxError(no_engine_reason()) from None

"""One typed error taxonomy: infrastructure failures (retried, reported apart) vs agent failures (scored)."""

from __future__ import annotations

from enum import Enum


class ErrorKind(str, Enum):
    """Why an episode did not end normally.  ``infra`` kinds are retried with backoff."""

    SANDBOX_START = "sandbox_start_failed"
    PROXY = "proxy_error"
    UPSTREAM = "provider_unavailable"
    RATE_LIMIT = "provider_rate_limited"
    BUDGET = "budget_exceeded"
    TIMEOUT = "agent_timeout"
    CRASH = "agent_crashed"
    OUTPUT = "output_invalid"
    SCORING = "scoring_failed"
    WORKSPACE_LIMIT = "workspace_limit"  # the agent wrote more than workspace_mb (harness.workspace_cap)
    DISK_FULL = "disk_full"  # the host's disk or quota (harness.diskfull): not retried, the run stops

    @property
    def infra(self) -> bool:
        return self in (ErrorKind.SANDBOX_START, ErrorKind.PROXY, ErrorKind.UPSTREAM, ErrorKind.RATE_LIMIT)


class HarnessError(Exception):
    """An error shown to the user as one sentence (no traceback unless ``--debug``)."""


class EpisodeError(HarnessError):
    """An episode failed with a typed ``kind``."""

    def __init__(self, kind: ErrorKind, message: str):
        self.kind = kind
        super().__init__(f"{kind.value}: {message}")

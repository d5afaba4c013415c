"""One typed error taxonomy: infrastructure failures (retried, reported apart) vs agent failures (scored)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path


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


class ConfigError(ValueError):
    """A configuration file is malformed.  ``str()`` names the file, field and expectation.

    (Defined here rather than beside the configuration models, :mod:`harness.config`, which re-exports it: a
    plugin that raises it on a bad file loads no pydantic.)"""

    def __init__(self, file: Path | str, problems: list[str]):
        self.file = str(file)
        self.problems = problems
        super().__init__(f"{file}: " + "; ".join(problems))

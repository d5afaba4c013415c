"""Errors raised by the local sandbox backends."""

from __future__ import annotations

from harness.errors import HarnessError


class SandboxError(HarnessError, RuntimeError):
    """A sandbox could not be created or used (bad spec, setup failure); shown as one sentence."""


class SandboxUnavailable(SandboxError):
    """The requested sandbox backend cannot run on this machine; the message says why."""


class SpecError(SandboxError, ValueError):
    """A SandboxSpec field cannot be honoured; the message names the field."""

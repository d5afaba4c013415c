"""Shared pieces of the local sandbox tests: backend fixtures and in-sandbox probes."""

from __future__ import annotations

import json
import textwrap

import pytest

from harness.contracts import Agent, AgentInvocation
from harness.sandbox.bubblewrap import BubblewrapBackend
from harness.sandbox.none import NoneBackend
from harness.sandbox.unshare import UnshareBackend

#: One instance per backend so the availability probe runs once per test session.
BACKENDS = {"bubblewrap": BubblewrapBackend(), "unshare": UnshareBackend(), "none": NoneBackend()}
ISOLATING = ["bubblewrap", "unshare"]


def get_backend(name: str):
    """The backend, or skip the test saying why it cannot run here."""
    backend = BACKENDS[name]
    ok, why = backend.available()
    if not ok:
        pytest.skip(f"{name} backend unavailable here: {why}")
    return backend


def run_probe(sandbox, source: str, timeout: float = 60, **kw) -> dict:
    """Run a Python probe inside ``sandbox``; it must print one JSON object as its last line."""
    result = sandbox.exec(["python", "-c", textwrap.dedent(source)], timeout=timeout, **kw)
    assert result.returncode == 0, f"probe failed ({result.returncode}): {result.stderr[-2000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


class IdleAgent(Agent):
    """An agent that runs ``true``: no model, nothing written (episode tests that need only the harness's part)."""

    name = "idle"
    version = "1"
    needs_model = False
    image_capable = False

    def command(self, ctx):
        return AgentInvocation(argv=["true"])

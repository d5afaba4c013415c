"""Connects a run to the model proxy: one proxy per run, one channel per episode.

The model backend is ``--model-backend`` when given (e.g. a backend that
answers from ``--script FILE``), else the profile's ``provider`` (``custom`` uses the
profile's ``base_url``).  Each episode gets its own Unix socket in a short
private temporary folder (socket paths are limited to 107 bytes); the sandbox
bridge exposes it at ``http://127.0.0.1:<port>``.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import plugins as registry
from harness.config import AgentProfile, Budget
from harness.contracts.sandbox import SandboxSpec
from harness.errors import HarnessError

PROXY_PORT = SandboxSpec.__dataclass_fields__["proxy_port"].default


@dataclass
class EpisodeChannel:
    """One episode's way to the model: the host socket, the URL the agent uses, and ``close()``."""

    session: "ProxySession"
    key: str
    socket_path: Path
    base_url: str

    def close(self):
        """Stop serving the episode; returns the proxy's :class:`harness.proxy.EpisodeUsage`."""
        return self.session.proxy.close_episode(self.key)


class ProxySession:
    """The run's proxy."""

    def __init__(self, proxy: Any, profile: AgentProfile):
        self.proxy = proxy
        self.profile = profile
        self._dir = Path(tempfile.mkdtemp(prefix="hx-"))
        self._count = 0
        self._lock = threading.Lock()

    def open(self, key: str, episode_root: Path, budget: Budget) -> EpisodeChannel:
        with self._lock:  # episodes open channels from several threads (--jobs)
            self._count += 1
            socket_path = self._dir / f"{self._count}.sock"
        episode_root.mkdir(parents=True, exist_ok=True)
        self.proxy.open_episode(key, socket_path, episode_root / "proxy.jsonl", self.profile.prices, budget)
        return EpisodeChannel(self, key, socket_path, f"http://127.0.0.1:{PROXY_PORT}")

    def stop(self) -> None:
        self.proxy.stop()
        shutil.rmtree(self._dir, ignore_errors=True)


def start_proxy(profile: AgentProfile, backend: str | None, options: dict[str, Any],
                limiter: Any = None, inflight: Any = None, log_budget: int | None = None) -> ProxySession:
    """Start the run's proxy for ``profile`` on model backend ``backend`` (default: the profile's provider);
    ``limiter``: the provider's :class:`harness.limits.RateLimiter`, shared with the run's other proxies;
    ``inflight``: the run's :class:`harness.limits.InflightBytes` (request bodies held at once, shared too);
    ``log_budget``: bytes of bodies each episode's ``proxy.jsonl`` stores in full (see ``RunSettings``)."""
    from harness.proxy import ModelProxy

    name = backend or profile.provider
    if not name:
        raise HarnessError(f"profile {profile.name!r} names no provider; pass --model-backend")
    opts = {"base_url": profile.base_url, "model": profile.model, **options}
    upstream = registry.get("model_backend", name).upstream(opts)
    return ProxySession(ModelProxy(upstream, limiter=limiter, inflight=inflight, log_budget=log_budget).start(),
                        profile)

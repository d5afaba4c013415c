"""Connects a run to the model proxy: one proxy per model a run calls, one channel per episode.

:class:`ProxyPool` holds a run's proxies (started on first use, stopped with the run), every one under the
run's caps: the provider's rate limiter, the request bodies all of them hold at once
(``RunSettings.proxy_inflight_mb``) and the bodies each episode's proxy log stores in full
(``RunSettings.proxy_log_mb``), whether an agent calls it through its sandbox or an in-harness model user
(a forecaster, a judge) through :class:`harness.ModelClient`.

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
from harness.config import AgentProfile, Budget, RunSettings
from harness.contracts.sandbox import SandboxSpec
from harness.errors import HarnessError
from harness.proxy_records import LOG_NAME

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

    def __init__(self, proxy: Any, profile: AgentProfile, backend: str | None = None):
        self.proxy = proxy
        self.profile = profile
        self.backend = backend or profile.provider  # the model backend's name (run.json, the rows)
        self._dir = Path(tempfile.mkdtemp(prefix="hx-"))
        self._count = 0
        self._lock = threading.Lock()

    def open(self, key: str, episode_root: Path, budget: Budget) -> EpisodeChannel:
        with self._lock:  # episodes open channels from several threads (--jobs)
            self._count += 1
            socket_path = self._dir / f"{self._count}.sock"
        episode_root.mkdir(parents=True, exist_ok=True)
        self.proxy.open_episode(key, socket_path, episode_root / LOG_NAME, self.profile.prices, budget)
        return EpisodeChannel(self, key, socket_path, f"http://127.0.0.1:{PROXY_PORT}")

    def stop(self) -> None:
        self.proxy.stop()
        shutil.rmtree(self._dir, ignore_errors=True)


def start_proxy(profile: AgentProfile, backend: str | None, options: dict[str, Any],
                limiter: Any = None, inflight: Any = None, log_budget: int | None = None) -> ProxySession:
    """Start the run's proxy for ``profile`` on model backend ``backend`` (default: the profile's provider);
    ``limiter``: the provider's :class:`harness.limits.RateLimiter`, shared with the run's other proxies;
    ``inflight``: the run's :class:`harness.limits.InflightBytes` (request bodies held at once, shared too);
    ``log_budget``: bytes of bodies (uncompressed) each episode's proxy log stores in full (see ``RunSettings``)."""
    from harness.proxy import ModelProxy

    name = backend or profile.provider
    if not name:
        raise HarnessError(f"profile {profile.name!r} names no provider; pass --model-backend")
    opts = {"base_url": profile.base_url, "model": profile.model, **options}
    upstream = registry.get("model_backend", name).upstream(opts)
    return ProxySession(ModelProxy(upstream, limiter=limiter, inflight=inflight, log_budget=log_budget).start(),
                        profile, name)


class ProxyPool:
    """The run's model proxies: one per (profile, model backend, options), started on first use (from several
    threads, ``--jobs``) and stopped by :meth:`stop`.  Every proxy gets the same caps: the rate limiter of its
    provider from ``limits`` (a :class:`harness.limits.RunLimits`; default: ``settings.rate_limits``), one
    :class:`harness.limits.InflightBytes` of ``settings.proxy_inflight_mb`` shared by all of them, and
    ``settings.proxy_log_mb`` of bodies per episode log.

    ``model_backend``/``model_options``: the run's ``--model-backend`` and its options (``--script``), which
    take precedence over a profile's provider and an in-harness template's own model settings;
    ``profile_options``: options of one profile (e.g. an experiment stage's per-profile script) over them.
    """

    def __init__(self, settings: RunSettings, limits: Any = None, model_backend: str | None = None,
                 model_options: dict | None = None, profile_options: dict[str, dict] | None = None):
        from harness.limits import InflightBytes, RunLimits

        self.limits = limits if limits is not None else RunLimits(settings.rate_limits)
        self.inflight = InflightBytes(settings.proxy_inflight_mb * 1024 * 1024)
        self.log_budget = settings.proxy_log_mb * 1024 * 1024
        self.model_backend = model_backend
        self.model_options = dict(model_options or {})
        self.profile_options = profile_options or {}
        self._proxies: dict[str, ProxySession] = {}
        self._lock = threading.Lock()

    def for_plan(self, plan: Any) -> ProxySession | None:
        """The proxy a planned episode (:class:`harness.episode.EpisodePlan`) calls, or None when it calls no
        model: an agent's profile under the run's backend; an in-harness episode's model (its template's
        ``model_profile``), with the template's own model settings under the run's backend and options."""
        if not plan.in_harness:
            if plan.agent is None or not plan.agent.needs_model:
                return None
            return self.get(plan.profile, self.model_backend, self.model_options)
        try:
            profile = plan.template.model_profile(plan.params, plan.episode, plan.profile)
        except ValueError:  # preflight refused such runs; the template fails the episode, saying why
            return None
        if profile is None:
            return None
        own = plan.template.model_settings(plan.params) or {}
        return self.get(profile, self.model_backend or own.get("backend"),
                        {**(own.get("options") or {}), **self.model_options})

    def get(self, profile: AgentProfile, backend: str | None, options: dict[str, Any]) -> ProxySession:
        """The pool's proxy for ``profile`` on model backend ``backend`` (None: the profile's provider) with
        ``options`` (the profile's own ``profile_options`` over them), started on first use."""
        options = {**options, **self.profile_options.get(profile.name, {})}
        from harness.experiment import canonical

        key = canonical([profile.name, backend, options])
        with self._lock:
            if key not in self._proxies:
                limiter = self.limits.for_provider(backend or profile.provider)
                self._proxies[key] = start_proxy(profile, backend, options, limiter, self.inflight,
                                                 self.log_budget)
            return self._proxies[key]

    def stop(self) -> None:
        """Stop every proxy the pool started."""
        with self._lock:
            proxies, self._proxies = list(self._proxies.values()), {}
        for proxy in proxies:
            proxy.stop()

"""The one way an in-harness model user (a model-backed forecaster, an LLM judge, a generation
pipeline) reaches a model: :class:`ModelClient`, a client of the run's model proxy.

Inside a run, the run opens the client for an in-harness episode whose template names a model
profile (:meth:`harness.contracts.TaskTemplate.model_profile`) and hands it to
:meth:`~harness.contracts.TaskTemplate.run_in_harness` as ``model=``: its requests go through the
run's proxy for that profile (``--model-backend``, ``--script``), wait for the run's
:class:`harness.limits.RateLimiter` of the provider, are logged in the episode folder beside the
episode's other files (``proxy/<call>/proxy.jsonl.zst``, as agents' ``proxy.jsonl.zst``), and their cost
reaches the results row and so the run's ``--max-cost``.  Plugin commands outside a run (a judging
or a generation command) open a client themselves with :meth:`ModelClient.open` (``settings`` gives the
rate limits, ``max_cost_usd`` or a shared :class:`CostCap` the command's cap).

A *call* (:meth:`ModelClient.call`) is one proxy episode: one socket, one proxy log, its own
usage and per-call :class:`harness.config.Budget`.  A client with ``max_cost_usd`` refuses to open a
call once the cost of its finished calls reaches the cap (:class:`CostCapReached`), and gives each
call at most the remaining amount as its budget, so a cap is never passed by more than one
response (the proxy's rule for a budget, :mod:`harness.proxy.accounting`).
"""

from __future__ import annotations

import itertools
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from harness.errors import HarnessError

if TYPE_CHECKING:  # annotations only: loading the plugins that use a client needs no pydantic
    from harness.config import AgentProfile, Budget


class CostCapReached(HarnessError):
    """The client's ``max_cost_usd`` is spent: no further call is opened."""


class CostCap:
    """A cost cap (USD) shared by several clients (e.g. a command's generator and judge models, each its
    own profile and proxy): the cost of their finished calls is added up here.  ``max_cost_usd`` None:
    no cap, only the total is kept."""

    def __init__(self, max_cost_usd: float | None = None):
        self.max_cost_usd = max_cost_usd
        self.spent_usd = 0.0
        self._lock = threading.Lock()

    def budget_for(self, budget: Budget) -> Budget:
        """``budget`` with ``max_cost_usd`` lowered to what is left; CostCapReached when nothing is."""
        with self._lock:
            if self.max_cost_usd is None:
                return budget
            left = self.max_cost_usd - self.spent_usd
            if left <= 0:
                raise CostCapReached(f"max cost ${self.max_cost_usd:g} reached (spent ${self.spent_usd:.4f})")
        cap = left if budget.max_cost_usd is None else min(left, budget.max_cost_usd)
        return budget.model_copy(update={"max_cost_usd": cap})

    def add(self, cost_usd: float) -> None:
        with self._lock:
            self.spent_usd += cost_usd


@dataclass
class ModelCall:
    """One proxy episode of a :class:`ModelClient`: ``key``, the host ``socket_path`` to send
    requests to (:meth:`request`), its ``budget``; ``usage`` (a :class:`harness.proxy.EpisodeUsage`)
    is set when the call closes."""

    key: str
    socket_path: Path
    proxy: Any
    budget: Budget
    usage: Any = None

    def request(self, method: str, path: str, body: Any = None, headers: dict | None = None,
                timeout: float = 600.0):
        """Send one HTTP request to the proxy (:func:`harness.proxy.client.request`); raises OSError."""
        from harness.proxy.client import request

        return request(self.socket_path, method, path, body, headers or {}, timeout)

    def usage_now(self) -> Any:
        """The call's usage so far (:class:`harness.proxy.EpisodeUsage`: ``n_requests``, ``total_tokens``,
        ``cost_usd``...), e.g. to price one request of several as the difference of two readings."""
        return self.proxy.usage(self.key)

    def budget_exceeded(self) -> str | None:
        """The budget cap already reached (so the next request would be refused), or None."""
        now = self.proxy.usage(self.key)
        b = self.budget
        if now.budget_exceeded:
            return now.budget_exceeded
        if b.max_requests is not None and now.n_requests >= b.max_requests:
            return f"max_requests={b.max_requests}"
        if b.max_tokens is not None and now.total_tokens >= b.max_tokens:
            return f"max_tokens={b.max_tokens}"
        if b.max_cost_usd is not None and now.cost_usd >= b.max_cost_usd:
            return f"max_cost_usd={b.max_cost_usd:g}"
        return None


class ModelClient:
    """A model (``session.profile``) behind a proxy session (:class:`harness.model_session.ProxySession`).

    ``log_dir``: where each call's ``<key>/proxy.jsonl.zst`` goes; ``budget``: per-call caps;
    ``max_cost_usd``: the cap of all calls of this client together (None: none), or ``cap``: a
    :class:`CostCap` shared with other clients; ``owns_session``: :meth:`stop` stops the proxy (True when
    the client started it, :meth:`open`).
    """

    def __init__(self, session: Any, log_dir: Path | str, budget: Budget | None = None,
                 max_cost_usd: float | None = None, owns_session: bool = False, cap: CostCap | None = None):
        from harness.config import Budget

        self.session = session
        self.profile: AgentProfile = session.profile
        self.log_dir = Path(log_dir)
        self.budget = budget or Budget()
        self.cap = cap if cap is not None else CostCap(max_cost_usd)
        self.owns_session = owns_session
        self._count = itertools.count(1)
        self._lock = threading.Lock()
        self._spent = 0.0
        self._tokens = 0
        self._requests = 0

    @classmethod
    def open(cls, profile: AgentProfile, log_dir: Path | str, backend: str | None = None,
             options: dict | None = None, budget: Budget | None = None, *, settings: Any = None,
             max_cost_usd: float | None = None, limits: Any = None, cap: CostCap | None = None) -> "ModelClient":
        """Start a proxy for ``profile`` on ``backend`` (default: its provider; ``options`` e.g.
        ``{"script": FILE}``) with the rate limiter of the provider from ``limits`` (a
        :class:`harness.limits.RunLimits` shared by a command's clients) or else from
        ``settings.rate_limits`` (``settings``: a :class:`harness.config.RunSettings`, e.g. from
        ``--settings``; its ``max_run_cost_usd`` is the cap when neither ``max_cost_usd`` nor ``cap`` is given),
        under the caps every proxy of a run gets (:class:`harness.model_session.ProxyPool`: the request bodies
        held at once and the bodies its log stores in full, of ``settings`` or the defaults)."""
        from harness.config import RunSettings
        from harness.model_session import ProxyPool

        if max_cost_usd is None and cap is None and settings is not None:
            max_cost_usd = settings.max_run_cost_usd
        # the caps a run's proxies get (ProxyPool): in-flight bodies and the log budget of ``settings``
        session = ProxyPool(settings or RunSettings(), limits).get(profile, backend, options or {})
        return cls(session, log_dir, budget, max_cost_usd, owns_session=True, cap=cap)

    # -- spending ---------------------------------------------------------------------------------
    @property
    def spent_usd(self) -> float:
        """Cost of the finished calls (USD: tokens at the profile's prices)."""
        return self._spent

    @property
    def totals(self) -> dict[str, float]:
        """``{"requests", "total_tokens", "cost_usd"}`` of the finished calls."""
        return {"requests": self._requests, "total_tokens": self._tokens, "cost_usd": round(self._spent, 6)}

    @property
    def max_cost_usd(self) -> float | None:
        return self.cap.max_cost_usd

    # -- calls ------------------------------------------------------------------------------------
    @contextmanager
    def call(self, label: str) -> Iterator[ModelCall]:
        """One proxy episode named after ``label``; raises :class:`CostCapReached` before opening one
        when the client's ``max_cost_usd`` is spent."""
        with self._lock:
            budget = self.cap.budget_for(self.budget)
            key = f"{_slug(label)}-{next(self._count):04d}"
        channel = self.session.open(key, self.log_dir / key, budget)
        call = ModelCall(key, channel.socket_path, self.session.proxy, budget)
        try:
            yield call
        finally:
            call.usage = channel.close()
            with self._lock:
                cost = float(getattr(call.usage, "cost_usd", 0.0) or 0.0)
                self._spent += cost
                self.cap.add(cost)
                self._tokens += int(getattr(call.usage, "total_tokens", 0) or 0)
                self._requests += int(getattr(call.usage, "n_requests", 0) or 0)

    def stop(self) -> None:
        """Stop the proxy when this client started it (:meth:`open`); a run's proxy is the run's to stop."""
        if self.owns_session:
            self.session.stop()


def calls_model_in_harness(template: Any, params: Any, profile: Any) -> bool:
    """Whether some in-harness episode of ``params`` calls a model (its template names a model profile)."""
    for episode in template.episodes(params):
        try:
            if template.model_profile(params, episode, profile) is not None:
                return True
        except ValueError:
            return True
    return False


def episode_client(template: Any, params: Any, session: Any, folder: Path, budget: Budget) -> ModelClient:
    """The client an in-harness episode gets: the run's proxy ``session``, logs under ``folder/proxy/``,
    per-call caps of the template's own model settings (else the run's ``budget``)."""
    own = template.model_settings(params) or {}
    return ModelClient(session, Path(folder) / "proxy", own.get("budget") or budget)


def read_run_settings(path: Path | str | None) -> Any:
    """The :class:`harness.config.RunSettings` of a ``--settings`` YAML file (None: the defaults);
    :class:`harness.config.ConfigError` naming the file and field on bad input."""
    from harness.config import RunSettings, parse, read_yaml

    data = read_yaml(Path(path)) if path else {}
    return parse(RunSettings, data, str(path) if path else "--settings")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:60] or "call"

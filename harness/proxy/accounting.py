"""Per-episode accounting: token totals, cost (the token-cost formula of :meth:`harness.config.Prices.cost`), budget caps, recorded errors.

Budget rules (:class:`harness.config.Budget`), checked when a request arrives:

* ``max_requests``: reached once that many requests were forwarded (``HEAD``
  connectivity probes are neither counted nor refused);
* ``max_tokens``: reached once prompt + completion tokens (G.3 "Total tokens")
  of the finished responses reach the cap;
* ``max_cost_usd``: reached once the cost of the finished responses reaches it.

A request arriving after a cap is reached is refused (HTTP 400 in the
provider's error format — never 429/5xx, which CLIs retry) and the episode is
marked ``budget_exceeded`` with the cap's name.  At close, an episode whose
totals went strictly past ``max_tokens`` or ``max_cost_usd`` (a last response
overshooting) is marked too, even if nothing was refused afterwards.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from harness.proxy.usage import Usage

ErrorKind = Literal["upstream_unreachable", "rate_limited", "upstream_error"]
CAPS = ("max_requests", "max_tokens", "max_cost_usd")


@dataclass(frozen=True)
class ProxyError:
    """An upstream problem, for the harness's infrastructure-vs-agent taxonomy.

    ``kind``: ``upstream_unreachable`` (no connection / no status), ``rate_limited``
    (HTTP 429), ``upstream_error`` (HTTP 5xx, or a stream cut off mid-way).
    ``status`` is the upstream's HTTP status when there was one; ``seq`` the
    request number in ``proxy.jsonl``; ``ts`` Unix seconds.
    """

    kind: ErrorKind
    message: str
    status: int | None
    seq: int
    ts: float


@dataclass
class EpisodeUsage:
    """What the proxy measured for one episode (returned by ``ModelProxy.close_episode``).

    Token fields are normalised sums (see :mod:`harness.proxy.usage`);
    ``cost_usd`` is the sum of per-response token costs; ``n_requests``
    counts requests forwarded upstream (``HEAD`` probes excluded), ``n_refused``
    those refused by a cap;
    ``budget_exceeded`` names the cap (``max_requests``/``max_tokens``/
    ``max_cost_usd``) or is None; ``assertion_failures`` lists failed
    expectations of a model script (script backends only); ``usage_missing``
    counts model responses (non-``HEAD`` requests answered with a status below
    400) that carried no usage or whose stream was cut: when it is above 0 the
    token and cost totals are lower bounds.
    """

    episode_id: str
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0
    n_requests: int = 0
    n_refused: int = 0
    budget_exceeded: str | None = None
    errors: list[ProxyError] = field(default_factory=list)
    assertion_failures: list[str] = field(default_factory=list)
    usage_missing: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def usage(self) -> Usage:
        return Usage(self.prompt_tokens, self.cached_tokens, self.completion_tokens, self.reasoning_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_tokens": self.total_tokens}


class EpisodeMeter:
    """Mutable counters of one open episode; used only on the proxy's event loop."""

    def __init__(self, episode_id: str, prices: Any, budget: Any):
        self.episode_id = episode_id
        self.prices = prices
        self.budget = budget
        self.usage = Usage()
        self.cost_usd = 0.0
        self.n_requests = 0
        self.n_refused = 0
        self.budget_exceeded: str | None = None
        self.errors: list[ProxyError] = []
        self.assertion_failures: list[str] = []
        self.usage_missing = 0
        self._seq = 0

    def next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def cap_reached(self) -> str | None:
        """The first cap already reached, or None."""
        b = self.budget
        if b.max_requests is not None and self.n_requests >= b.max_requests:
            return "max_requests"
        if b.max_tokens is not None and self.usage.total_tokens >= b.max_tokens:
            return "max_tokens"
        if b.max_cost_usd is not None and self.cost_usd >= b.max_cost_usd:
            return "max_cost_usd"
        return None

    def admit(self) -> str | None:
        """Count a new request; returns the cap that refuses it (and marks the episode), or None."""
        cap = self.cap_reached()
        if cap:
            self.n_refused += 1
            self.budget_exceeded = self.budget_exceeded or cap
            return cap
        self.n_requests += 1
        return None

    def add(self, usage: Usage) -> float:
        """Add one response's usage; returns its cost in USD."""
        cost = usage.cost(self.prices)
        self.usage = self.usage + usage
        self.cost_usd += cost
        return cost

    def record_error(self, kind: ErrorKind, message: str, status: int | None, seq: int) -> ProxyError:
        err = ProxyError(kind, message, status, seq, time.time())
        self.errors.append(err)
        return err

    def finalize(self) -> None:
        """Mark an overshoot of the token or cost cap (see module docstring)."""
        b = self.budget
        if self.budget_exceeded:
            return
        if b.max_tokens is not None and self.usage.total_tokens > b.max_tokens:
            self.budget_exceeded = "max_tokens"
        elif b.max_cost_usd is not None and self.cost_usd > b.max_cost_usd:
            self.budget_exceeded = "max_cost_usd"

    def snapshot(self) -> EpisodeUsage:
        u = self.usage
        return EpisodeUsage(self.episode_id, u.prompt_tokens, u.cached_tokens, u.completion_tokens,
                            u.reasoning_tokens, self.cost_usd, self.n_requests, self.n_refused,
                            self.budget_exceeded, list(self.errors), list(self.assertion_failures),
                            self.usage_missing)


def classify_status(status: int) -> ErrorKind | None:
    """The error kind of an upstream HTTP status (None for non-errors and other 4xx)."""
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "upstream_error"
    return None


def describe_cap(cap: str, budget: Any, meter: EpisodeMeter) -> str:
    """Human-readable refusal message naming the cap, its limit and the amount used."""
    used = {"max_requests": f"{meter.n_requests} requests", "max_tokens": f"{meter.usage.total_tokens} tokens",
            "max_cost_usd": f"${meter.cost_usd:.4f}"}[cap]
    return (f"episode budget exhausted: {cap}={getattr(budget, cap)} reached ({used} used); "
            "the harness refuses further model requests for this episode")


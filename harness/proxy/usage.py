"""Token usage normalised across providers (prompt incl. cached, completion incl. reasoning).

Every response's usage becomes one :class:`Usage` with

* ``prompt_tokens``: all input tokens, cached ones included;
* ``cached_tokens``: input tokens served from the provider's prompt cache;
* ``completion_tokens``: all output tokens, reasoning ones included;
* ``reasoning_tokens``: the reasoning ("thinking") share of ``completion_tokens``,
  0 where the provider does not report it separately.

Providers count differently: each wire format's module under :mod:`harness.proxy.wire` says how its
fields map onto these four counts (and reads a response's usage, streamed or not).

Cost per response is :meth:`harness.config.Prices.cost` (the token-cost formula).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    """Normalised token counts of one response (or a sum of responses)."""

    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens (G.3 "Total tokens")."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.cached_tokens + other.cached_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.reasoning_tokens + other.reasoning_tokens)

    def cost(self, prices: Any) -> float:
        """USD by the token-cost formula at ``prices`` (a :class:`harness.config.Prices`)."""
        return prices.cost(self.prompt_tokens, self.cached_tokens, self.completion_tokens)

    def to_dict(self) -> dict[str, int]:
        return {**asdict(self), "total_tokens": self.total_tokens}


def count(mapping: Any, *keys: str) -> int:
    """Integer at a nested key path; 0 when absent, null or not a number."""
    cur = mapping
    for key in keys:
        if not isinstance(cur, dict):
            return 0
        cur = cur.get(key)
    if isinstance(cur, bool) or not isinstance(cur, (int, float)):
        return 0
    return int(cur)

"""Run-wide limits shared by concurrent episodes: model rate limits, sandbox starts, the run's cost cap.

:class:`RateLimiter` is the one limiter of a provider in a run; every proxy of
the run (one per agent profile) asks it before sending a request upstream
(:meth:`harness.proxy.ModelProxy` ``limiter=``).  A request over a limit
waits; none fails.  Choices (the papers leave them open):

* Requests and tokens are counted in a sliding window of ``window_s`` seconds
  (60: the providers' "per minute"), at the time the request is sent upstream.
* A request's tokens are known only when its answer ends, so admission
  reserves the largest token count seen so far for one request of this
  provider for each request in flight (before the first answer, requests go
  one at a time); the reservation is replaced by the real count when the
  answer ends.  With
  requests no larger than the largest seen, the tokens in any window never
  exceed ``tokens_per_min``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from typing import Callable

from harness.config import RateLimit


class RateLimiter:
    """Requests/min, tokens/min and requests in flight of one provider, thread-safe.

    ``clock``: seconds (monotonic); tests may pass a fake one.
    """

    def __init__(self, limit: RateLimit, clock: Callable[[], float] = time.monotonic):
        self.limit = limit
        self.clock = clock
        self._lock = threading.Lock()
        self._sent: deque[tuple[float, list[int]]] = deque()  # (time sent, [tokens or reservation])
        self._in_flight: dict[object, list[int]] = {}
        self._largest = 0
        self.waited_s = 0.0

    def _prune(self, now: float) -> None:
        while self._sent and self._sent[0][0] <= now - self.limit.window_s:
            self._sent.popleft()

    def _wait_needed(self, now: float) -> float:
        """Seconds until a request may be sent (0: now)."""
        lim = self.limit
        self._prune(now)
        waits = [0.0]
        if lim.max_concurrent is not None and len(self._in_flight) >= lim.max_concurrent:
            waits.append(0.05)
        if lim.requests_per_min is not None and len(self._sent) >= lim.requests_per_min:
            waits.append(self._sent[len(self._sent) - lim.requests_per_min][0] + lim.window_s - now)
        if lim.tokens_per_min is not None and self._largest == 0 and self._in_flight:
            waits.append(0.05)  # no answer seen yet: one request at a time until its size is known
        elif lim.tokens_per_min is not None:
            total = sum(t[0] for _, t in self._sent) + self._largest
            if total > lim.tokens_per_min:
                if not self._sent:
                    return 0.0  # one request larger than the whole limit: send it alone
                excess, freed = total - lim.tokens_per_min, 0
                for when, tokens in self._sent:
                    freed += tokens[0]
                    if freed >= excess:
                        waits.append(when + lim.window_s - now)
                        break
                else:
                    waits.append(0.05)  # in-flight reservations: wait for them to settle
        return max(waits)

    def try_acquire(self, key: object) -> float:
        """Admit ``key`` now and return 0, or return the seconds to wait before trying again."""
        with self._lock:
            now = self.clock()
            wait = self._wait_needed(now)
            if wait > 0:
                return max(wait, 0.001)
            slot = [self._largest]
            self._sent.append((now, slot))
            self._in_flight[key] = slot
            return 0.0

    async def acquire(self, key: object) -> None:
        """Wait (without blocking the event loop) until ``key`` may be sent upstream."""
        while (wait := self.try_acquire(key)) > 0:
            self.waited_s += wait
            await asyncio.sleep(wait)

    def acquire_blocking(self, key: object) -> None:
        """:meth:`acquire` for threads without an event loop."""
        while (wait := self.try_acquire(key)) > 0:
            self.waited_s += wait
            time.sleep(wait)

    def settle(self, key: object, tokens: int) -> None:
        """``key``'s answer ended having used ``tokens`` (0 when unknown or failed)."""
        with self._lock:
            slot = self._in_flight.pop(key, None)
            if slot is not None:
                slot[0] = tokens
            self._largest = max(self._largest, tokens)


class InflightBytes:
    """Bytes of request bodies held by a run's proxies at once, at most ``limit``; thread-safe (each proxy
    has its own event loop thread).  :meth:`take` waits for room; a body larger than ``limit`` is refused
    by the caller (it could never fit)."""

    def __init__(self, limit: int):
        self.limit = int(limit)
        self.used = 0
        self.peak = 0
        self._lock = threading.Lock()

    def try_take(self, n: int) -> bool:
        with self._lock:
            if self.used + n > self.limit:
                return False
            self.used += n
            self.peak = max(self.peak, self.used)
            return True

    async def take(self, n: int, poll: float = 0.02) -> None:
        while not self.try_take(n):
            await asyncio.sleep(poll)

    def give(self, n: int) -> None:
        with self._lock:
            self.used -= n


class RunLimits:
    """The limiters of one run: one :class:`RateLimiter` per provider named in ``RunSettings.rate_limits``."""

    def __init__(self, rate_limits: dict[str, RateLimit]):
        self._limiters = {name: RateLimiter(limit) for name, limit in rate_limits.items()}

    def for_provider(self, name: str | None) -> RateLimiter | None:
        return self._limiters.get(name or "")

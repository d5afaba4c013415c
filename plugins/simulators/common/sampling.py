"""Baseline and intervention sampling from a ranges table (TraceBench Section 3.3, Appendix C.1).

The specification of a simulator's baseline values is its retained-pool table (Tables 10, 15):
every draw lies in the table's ``[min, max]``.  Each variable gets a :class:`Marginal`, a
two-piece distribution whose median is a chosen ``median``: with probability 1/2 uniform (or
log-uniform) on ``[low, median]``, with probability 1/2 on ``[median, high]``.  A plain uniform or
log-uniform law is the special case ``median = (low + high) / 2`` or ``sqrt(low high)``.  The
two-piece form is the simplest law that matches a table's min, median and max at once; where the
solvability filter shifts the retained median, the sampling median is moved to compensate (each
such choice is written next to the variable in the simulator's ``sampling`` module).
``zero_mass`` puts an atom at 0 (a variable whose table median is exactly 0, e.g. a level rail).

Baselines are drawn by a Latin hypercube on the unit cube mapped through each marginal's
quantile function.  An intervention's new value lies on the increase or decrease side of the old
one (a side with room chosen uniformly, then uniform on it), within ``[low, high]``, with
``|a - b| >= min_abs`` and ``SRD = 2|a-b| / (|a| + |b| + eps) >= min_srd``; signed ranges allowed.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness import Parameter, lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

#: eps in the symmetric relative difference.
SRD_EPS = 1e-12
#: Intervention time range as fractions of the horizon (uniform).
T_INT_RANGE = (0.2, 0.8)


def srd(a: float, b: float) -> float:
    """Symmetric relative difference ``2|a-b| / (|a| + |b| + eps)`` (dimensionless)."""
    return 2.0 * abs(a - b) / (abs(a) + abs(b) + SRD_EPS)


@dataclass(frozen=True)
class Marginal:
    """Two-piece (log-)uniform law on ``[low, high]`` with median ``median``; optional atom at 0.

    ``log`` needs ``low > 0``.  ``zero_mass`` in [0, 1) needs ``low <= 0 <= high`` and linear
    pieces: the central ``zero_mass`` of the probability sits at exactly 0, the rest is split
    evenly below and above (so the median is 0 and ``median`` must be 0).
    """

    low: float
    median: float
    high: float
    log: bool = False
    zero_mass: float = 0.0

    def __post_init__(self):
        if not self.low <= self.median <= self.high:
            raise ValueError(f"Marginal needs low <= median <= high, got {self.low}, {self.median}, {self.high}")
        if self.log and self.low <= 0:
            raise ValueError(f"log-uniform Marginal needs low > 0, got {self.low}")
        if self.zero_mass and (self.log or self.median != 0.0 or not 0.0 <= self.zero_mass < 1.0):
            raise ValueError("zero_mass needs a linear Marginal with median 0 and 0 <= zero_mass < 1")

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Quantile function on ``u`` in [0, 1] (any shape); values in ``[low, high]``."""
        u = np.asarray(u, dtype=float)
        if self.zero_mass:
            h = 0.5 * (1.0 - self.zero_mass)
            lo = self.low + (u / h) * (0.0 - self.low)
            hi = (u - 1.0 + h) / h * self.high
            return np.where(u < h, lo, np.where(u > 1.0 - h, hi, 0.0))
        f = (np.log, np.exp) if self.log else (lambda x: x, lambda x: x)
        a, m, b = f[0](self.low), f[0](self.median), f[0](self.high)
        z = np.where(u < 0.5, a + 2.0 * u * (m - a), m + (2.0 * u - 1.0) * (b - m))
        return np.clip(f[1](z), self.low, self.high)


def latin_hypercube_units(d: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` Latin-hypercube points in the unit cube, shape (n, d); seeded by one draw of ``rng``."""
    if n < 0:
        raise ValueError(f"number of configurations must be >= 0, got {n}")
    if n == 0:
        return np.zeros((0, d))
    seed = int(rng.integers(2**63 - 1))
    from scipy.stats import qmc  # imported on use: scipy.stats is slow to load

    key = "rng" if "rng" in inspect.signature(qmc.LatinHypercube).parameters else "seed"
    return qmc.LatinHypercube(d=d, **{key: np.random.default_rng(seed)}).random(n)


def _edge(old: float, limit: float, p: Parameter) -> float | None:
    """Closest admissible new value to ``old`` on the side of ``limit`` (None when the side is empty).

    On each side of ``old`` the SRD grows monotonically with the distance from ``old`` (it reaches
    2 once the sign flips), so the SRD bound is found by bisection on ``[old, limit]``.
    """
    direction = 1.0 if limit > old else -1.0
    start = old + direction * p.min_abs
    if direction * (limit - start) < 0:
        return None
    if srd(old, start) >= p.min_srd:
        return start
    if srd(old, limit) < p.min_srd:
        return None
    lo, hi = start, limit  # srd(old, lo) < s <= srd(old, hi)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if srd(old, mid) >= p.min_srd:
            hi = mid
        else:
            lo = mid
        if abs(hi - lo) <= 1e-15 * max(1.0, abs(hi)):
            break
    return hi


def admissible_sides(p: Parameter, old: float) -> list[tuple[float, float]]:
    """Closed intervals ``[lo, hi]`` of admissible new values above and below ``old`` (empty ones left out)."""
    sides = []
    up = _edge(old, p.high, p) if p.high > old else None
    if up is not None:
        sides.append((up, p.high))
    down = _edge(old, p.low, p) if p.low < old else None
    if down is not None:
        sides.append((p.low, down))
    return sides


def new_value(p: Parameter, old: float, rng: np.random.Generator,
              sides: list[tuple[float, float]] | None = None) -> float:
    """Draw a new value for ``p``: a side with room chosen uniformly, then uniform on that side.

    ``sides``: the admissible intervals (default :func:`admissible_sides`; a simulator with a
    closed form passes its own).  Raises ValueError naming the parameter when neither side has room.
    """
    sides = admissible_sides(p, old) if sides is None else sides
    if not sides:
        raise ValueError(
            f"parameter {p.name!r}: no admissible new value in [{p.low}, {p.high}] for old value {old} "
            f"(min_abs {p.min_abs}, min_srd {p.min_srd})")
    lo, hi = sides[int(rng.integers(len(sides)))]
    return float(rng.uniform(lo, hi)) if hi > lo else float(lo)


def intervention_time(horizon: float, rng: np.random.Generator) -> float:
    """``t_int ~ U[0.2, 0.8] * horizon`` (s)."""
    lo, hi = T_INT_RANGE
    t = float(rng.uniform(lo, hi)) * horizon
    if not math.isfinite(t):  # pragma: no cover - horizon is validated by the simulator
        raise ValueError(f"horizon must be finite, got {horizon}")
    return t

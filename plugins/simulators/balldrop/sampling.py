"""Configuration and intervention sampling (TraceBench Section 3.3, Appendix C.1).

Baselines are drawn by Latin hypercube over the generator ranges; an intervention time is
uniform in [0.2, 0.8] of the horizon; the new value lies on the increase or decrease side of
the old one, within the range, at least ``min_abs`` away and with symmetric relative
difference ``SRD = 2|a-b| / (|a| + |b| + eps) >= min_srd``.
"""

from __future__ import annotations

import inspect

import numpy as np

from harness import Parameter

#: eps in the symmetric relative difference.
SRD_EPS = 1e-12
#: Intervention time range as fractions of the horizon.
T_INT_RANGE = (0.2, 0.8)


def srd(a: float, b: float) -> float:
    """Symmetric relative difference ``2|a-b| / (|a| + |b| + eps)``."""
    return 2.0 * abs(a - b) / (abs(a) + abs(b) + SRD_EPS)


def latin_hypercube(ranges: list[tuple[float, float]], n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` Latin-hypercube points scaled to ``ranges``; shape (n, len(ranges)).

    The sampler is seeded from ``rng`` (one 63-bit draw), so results are reproducible from the
    generator state.
    """
    if n < 0:
        raise ValueError(f"number of configurations must be >= 0, got {n}")
    if n == 0:
        return np.zeros((0, len(ranges)))
    seed = int(rng.integers(2**63 - 1))
    from scipy.stats import qmc  # imported on use: scipy.stats is slow to load

    key = "rng" if "rng" in inspect.signature(qmc.LatinHypercube).parameters else "seed"
    unit = qmc.LatinHypercube(d=len(ranges), **{key: np.random.default_rng(seed)}).random(n)
    lo = np.array([r[0] for r in ranges])
    hi = np.array([r[1] for r in ranges])
    return lo + unit * (hi - lo)


def admissible_sides(p: Parameter, old: float) -> list[tuple[float, float]]:
    """Closed intervals ``[lo, hi]`` of admissible new values above and below ``old``.

    For a non-negative range, SRD is monotone in ``b`` on each side, so the admissible set on
    the increase side is ``[max(old + min_abs, b_srd_up), high]`` with
    ``b_srd_up = (old (2 + s) + s eps) / (2 - s)``, and on the decrease side
    ``[low, min(old - min_abs, b_srd_down)]`` with ``b_srd_down = (old (2 - s) - s eps) / (2 + s)``
    (``s = min_srd``).  Empty sides are left out.
    """
    if p.low < 0.0:
        raise ValueError(f"parameter {p.name!r}: closed-form SRD bounds need a non-negative range")
    s = p.min_srd
    sides = []
    up_lo = old + p.min_abs
    if s > 0.0:
        up_lo = max(up_lo, (old * (2.0 + s) + s * SRD_EPS) / (2.0 - s)) if s < 2.0 else np.inf
    if up_lo <= p.high:
        sides.append((up_lo, p.high))
    down_hi = old - p.min_abs
    if s > 0.0:
        down_hi = min(down_hi, (old * (2.0 - s) - s * SRD_EPS) / (2.0 + s))
    if down_hi >= p.low:
        sides.append((p.low, down_hi))
    return sides


def new_value(p: Parameter, old: float, rng: np.random.Generator) -> float:
    """Draw a new value for ``p``: a side with room chosen uniformly, then uniform on that side.

    Raises ValueError naming the parameter when neither side has room.
    """
    sides = admissible_sides(p, old)
    if not sides:
        raise ValueError(
            f"parameter {p.name!r}: no admissible new value in [{p.low}, {p.high}] for old value {old} "
            f"(min_abs {p.min_abs}, min_srd {p.min_srd})"
        )
    lo, hi = sides[int(rng.integers(len(sides)))]
    return float(rng.uniform(lo, hi)) if hi > lo else float(lo)

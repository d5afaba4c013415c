"""Paired statistics for report tables: within-group SD, sign-flip tests and intervals, win/tie/loss counts.

* :func:`within_simulator_sd` -- the aggregate tables' spread: subtract each
  simulator's mean, then the sample standard deviation (ddof = 1) of the
  pooled residuals, so simulator difficulty does not inflate it.
* :func:`sign_flip_pvalue` / :func:`sign_flip_ci` -- the exhaustive two-sided
  sign-flip (paired permutation) test of H0: mean(d) = delta, with the
  statistic |sum(d_i - delta)|, and the confidence interval obtained by
  inverting it: the set of shifts delta whose p-value exceeds alpha.

Exact inversion.  Flipping the signs of a set F of the centred differences
gives sum_i s_i (d_i - delta) = sum(d - delta) - 2 sum_F (d_i - delta), and
|flipped| >= |observed| reduces to

    |F| (delta - m_F) * |F^c| (m_{F^c} - delta) >= 0,

with m_F the mean of d over F: for a non-empty proper subset, delta lies in
the closed interval between m_F and m_{F^c}; the identity and the full flip
always count.  The overall mean lies in every such interval, so

    p(delta) = (2 + #{F : delta in [lo_F, hi_F]}) / 2^n

is non-increasing away from the mean, and changes only where delta crosses a
subset mean.  (For n <= 2 the subset means are the values d_i and the pairwise
midpoints (d_i + d_j)/2; for larger n they include the means of every subset.)
The interval {delta : p(delta) > alpha} is therefore exactly
[K-th smallest lo_F, K-th largest hi_F] with K the least count c for which
(2 + c) / 2^n > alpha -- computed over all 2^n - 2 subsets for n <= 20
(``method = "exact"``).  When K <= 0 every delta is accepted: the smallest
attainable p-value 2 / 2^n exceeds alpha (n <= 5 at alpha = 0.05) and the
interval is unbounded (``bounded = False``); reports must say so.

For n > 20 the test uses a Monte Carlo sample of 2^16 random sign vectors
from ``numpy.random.default_rng(seed)`` (seed 20240613 unless given), with
p(delta) = (1 + #{b : |T_b| >= |T|}) / (B + 1) and the same interval algebra
(``method = "monte-carlo"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

EXACT_LIMIT = 20
MC_SAMPLES = 2 ** 16
MC_SEED = 20240613
TIE_TOL = 1e-12


def within_simulator_sd(values: Sequence[float], simulators: Sequence[str]) -> float | None:
    """Sample SD (ddof = 1) of values minus their simulator's mean (the spread of the aggregate tables).

    None with fewer than 2 values, or when no simulator has 2 (every residual would be 0 by
    construction, which says nothing about variability)."""
    v = np.asarray(values, dtype=float)
    s = np.asarray(simulators, dtype=object)
    keep = ~np.isnan(v)
    v, s = v[keep], s[keep]
    if v.size < 2 or max(int(np.sum(s == sim)) for sim in set(s.tolist())) < 2:
        return None
    residuals = np.empty_like(v)
    for sim in set(s.tolist()):
        mask = s == sim
        residuals[mask] = v[mask] - v[mask].mean()
    return float(np.std(residuals, ddof=1))


def _subset_sums(d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sums and sizes of all 2^n subsets (index bit i set = d_i in the subset)."""
    sums = np.zeros(1)
    sizes = np.zeros(1, dtype=np.int16)
    for x in d:
        sums = np.concatenate([sums, sums + x])
        sizes = np.concatenate([sizes, sizes + 1])
    return sums, sizes


def _mc_masks(n: int, samples: int, seed: int) -> np.ndarray:
    """``samples`` random flip sets (rows of 0/1 floats; 1 = flipped) from a seeded generator."""
    return (np.random.default_rng(seed).random((samples, n)) < 0.5).astype(float)


def sign_flip_pvalue(d: Sequence[float], delta: float = 0.0, *, exact_limit: int = EXACT_LIMIT,
                     samples: int = MC_SAMPLES, seed: int = MC_SEED) -> float:
    """Two-sided sign-flip p-value of H0: mean(d) = ``delta`` (computed directly, not by inversion)."""
    x = np.asarray(d, dtype=float) - delta
    n = x.size
    if n == 0:
        return 1.0
    observed = abs(x.sum())
    tol = TIE_TOL * max(1.0, float(np.abs(x).sum()))
    if n <= exact_limit:
        sums, _ = _subset_sums(x)
        flipped = np.abs(x.sum() - 2.0 * sums)
        return float(np.mean(flipped >= observed - tol))
    signs = 1.0 - 2.0 * _mc_masks(n, samples, seed)
    flipped = np.abs(signs @ x)
    return float((1 + np.sum(flipped >= observed - tol)) / (samples + 1))


@dataclass(frozen=True)
class SignFlipCI:
    """Mean difference and its sign-flip confidence interval.

    ``low``/``high`` are -inf/inf when ``bounded`` is False; ``min_p`` is the
    smallest attainable p-value (2 / 2^n for the exact test).
    """

    n: int
    mean: float
    low: float
    high: float
    alpha: float
    method: str
    min_p: float

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)


def _kth_count(total: int, alpha: float, always: int) -> int:
    """Least count c with (always + c) / total > alpha (exact rational arithmetic)."""
    bound = Fraction(alpha).limit_denominator(10 ** 9) * total - always
    return math.floor(bound) + 1


def sign_flip_ci(d: Sequence[float], alpha: float = 0.05, *, exact_limit: int = EXACT_LIMIT,
                 samples: int = MC_SAMPLES, seed: int = MC_SEED) -> SignFlipCI:
    """The sign-flip test inverted: the shifts whose two-sided p-value exceeds ``alpha``."""
    x = np.asarray(d, dtype=float)
    if np.isnan(x).any():
        raise ValueError("paired differences contain NaN")
    n = x.size
    if n == 0:
        raise ValueError("no paired differences")
    mean = float(x.mean())
    if n <= exact_limit:
        sums, sizes = _subset_sums(x)
        proper = (sizes > 0) & (sizes < n)
        sums, sizes = sums[proper], sizes[proper].astype(float)
        m_in = sums / sizes
        m_out = (x.sum() - sums) / (n - sizes)
        total, always, method = 2 ** n, 2, "exact"
    else:
        masks = _mc_masks(n, samples, seed)
        sizes = masks.sum(axis=1)
        sums = masks @ x
        proper = (sizes > 0) & (sizes < n)
        safe_in, safe_out = np.where(proper, sizes, 1), np.where(proper, n - sizes, 1)
        m_in, m_out = sums / safe_in, (x.sum() - sums) / safe_out
        total, always, method = samples + 1, 1, "monte-carlo"
    lo = np.minimum(m_in, m_out)
    hi = np.maximum(m_in, m_out)
    if method == "monte-carlo":  # a sampled identity or full flip is accepted at every shift
        lo = np.where(proper, lo, -np.inf)
        hi = np.where(proper, hi, np.inf)
    k = _kth_count(total, alpha, always)
    min_p = always / total
    if k <= 0:
        return SignFlipCI(n, mean, -math.inf, math.inf, alpha, method, min_p)
    if k > hi.size:  # even the mean itself is rejected: cannot happen for alpha < 1
        return SignFlipCI(n, mean, mean, mean, alpha, method, min_p)
    high = float(np.partition(hi, hi.size - k)[hi.size - k])
    low = float(np.partition(lo, k - 1)[k - 1])
    return SignFlipCI(n, mean, low, high, alpha, method, min_p)


def win_tie_loss(d: Sequence[float], tol: float = TIE_TOL) -> tuple[int, int, int]:
    """Counts of positive, zero (|d| <= tol) and negative paired differences."""
    x = np.asarray(d, dtype=float)
    return int(np.sum(x > tol)), int(np.sum(np.abs(x) <= tol)), int(np.sum(x < -tol))

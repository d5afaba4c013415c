"""Within-simulator SD and the sign-flip CI (exact inversion checked against brute force)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.report.stats import sign_flip_ci, sign_flip_pvalue, win_tie_loss, within_simulator_sd


def test_within_simulator_sd_by_hand():
    # simulator means 0.8, 0.7, 1.0 -> residuals +-0.1, -+0.1, 0, 0 -> SD = sqrt(4 * 0.01 / 5)
    values = [0.9, 0.7, 0.6, 0.8, 1.0, 1.0]
    sims = ["a", "a", "b", "b", "c", "c"]
    assert within_simulator_sd(values, sims) == pytest.approx(math.sqrt(0.008))
    # differs from the plain SD, which mixes in simulator difficulty
    assert np.std(values, ddof=1) == pytest.approx(0.16330, abs=1e-5)
    assert within_simulator_sd([0.5], ["a"]) is None
    assert within_simulator_sd([0.5, 0.1, 0.9], ["a", "b", "c"]) is None  # one seed per simulator: no spread to see
    assert within_simulator_sd([0.5, float("nan"), 0.7], ["a", "a", "a"]) == pytest.approx(math.sqrt(0.02))


def test_pvalue_by_hand():
    d = [0.1, 0.2, 0.3]
    # all 8 sign vectors: |sums| = .6, .4, .2, 0, 0, .2, .4, .6 -> only the identity and the full flip reach .6
    assert sign_flip_pvalue(d) == pytest.approx(2 / 8)
    assert sign_flip_pvalue(d, delta=0.2) == 1.0  # centred at the mean: every flip ties or exceeds 0


def test_six_pairs_interval_is_min_to_max():
    """n = 6: K = 2, so the bounds are the 2nd-smallest/largest subset means = min and max of d."""
    d = [0.4, 0.2, 0.2, 0.2, 0.2, 0.1]
    ci = sign_flip_ci(d)
    assert (ci.low, ci.high) == pytest.approx((0.1, 0.4))
    assert ci.mean == pytest.approx(1.3 / 6)
    assert ci.method == "exact" and ci.bounded
    # at the bounds p = 4/64 > 0.05; just outside only the identity and full flip remain: 2/64 < 0.05
    assert sign_flip_pvalue(d, 0.4) == pytest.approx(4 / 64)
    assert sign_flip_pvalue(d, 0.4 + 1e-9) == pytest.approx(2 / 64)


@pytest.mark.parametrize("n", [5, 6, 7, 8, 10, 12])
def test_inversion_matches_brute_force_grid(n):
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(0.1, 0.2, n), 2)
    ci = sign_flip_ci(d)
    grid = np.linspace(d.min() - 0.3, d.max() + 0.3, 1201)
    step = grid[1] - grid[0]
    accepted = grid[[sign_flip_pvalue(d, g) > 0.05 for g in grid]]
    if n <= 5:
        assert not ci.bounded and ci.low == -math.inf and ci.high == math.inf
        assert ci.min_p == pytest.approx(2 / 2 ** n)
        assert accepted.size == grid.size  # no shift on the grid is rejected
        return
    assert ci.bounded
    assert accepted.min() - step <= ci.low <= accepted.min() + 1e-12
    assert accepted.max() - 1e-12 <= ci.high <= accepted.max() + step
    # the interval is contiguous on the grid
    assert np.all(np.diff(accepted) < step * 1.5)
    # exact bounds: inside at the bound, rejected just beyond
    assert sign_flip_pvalue(d, ci.high) > 0.05 >= sign_flip_pvalue(d, ci.high + 1e-7)
    assert sign_flip_pvalue(d, ci.low) > 0.05 >= sign_flip_pvalue(d, ci.low - 1e-7)


def test_breakpoints_are_subset_means_not_only_midpoints():
    """For n >= 3 the p-value also steps at means of larger subsets: here at 1/3, the mean of {0, 0, 1},
    which is neither a value nor a pairwise midpoint.  Crossing it adds F = {0, 0, 1} and its complement
    (interval [1/3, 6]) to the accepted flips: 8/64 -> 10/64."""
    d = [0.0, 0.0, 1.0, 5.0, 6.0, 7.0]
    midpoints = {(a + b) / 2 for a in d for b in d}
    assert not any(abs(m - 1 / 3) < 1e-9 for m in midpoints)
    assert sign_flip_pvalue(d, 1 / 3 - 1e-6) == pytest.approx(8 / 64)
    assert sign_flip_pvalue(d, 1 / 3 + 1e-6) == pytest.approx(10 / 64)


def test_monte_carlo_beyond_exact_limit_is_seeded_and_consistent():
    rng = np.random.default_rng(7)
    d = rng.normal(0.05, 0.1, 25)
    a, b = sign_flip_ci(d), sign_flip_ci(d)
    assert a == b and a.method == "monte-carlo"
    assert a.low < d.mean() < a.high
    assert sign_flip_pvalue(d, a.high) > 0.05 >= sign_flip_pvalue(d, a.high + 1e-6)
    # the exact test on the same data (forced) gives nearly the same interval
    exact = sign_flip_ci(d[:20])
    mc = sign_flip_ci(d[:20], exact_limit=10)
    assert mc.method == "monte-carlo" and exact.method == "exact"
    assert mc.low == pytest.approx(exact.low, abs=0.01) and mc.high == pytest.approx(exact.high, abs=0.01)


def test_errors_and_wtl():
    with pytest.raises(ValueError, match="no paired differences"):
        sign_flip_ci([])
    with pytest.raises(ValueError, match="NaN"):
        sign_flip_ci([0.1, float("nan")])
    assert win_tie_loss([0.1, 0.0, -0.2, 1e-15, 0.3]) == (2, 2, 1)

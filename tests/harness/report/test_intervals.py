"""The stratified t-interval of ``harness report --ci``: coverage on simulated runs with fixed seeds, by-hand
values, and the interval columns of the TraceBench tables in CSV and LaTeX."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from harness.report import build_report
from harness.report.intervals import mean_interval
from harness.report.render import to_csv, to_latex
from tests.support.report_runs import make_main_run

#: true accuracy per simulator (fixed strata of different difficulty)
TRUTH = np.array([0.35, 0.6, 0.8])


def test_one_stratum_is_scipys_t_interval():
    x = np.array([0.9, 0.7, 0.6, 0.8, 1.0])
    ours = mean_interval(x)
    ref = stats.ttest_1samp(x, 0).confidence_interval(0.95)
    assert (ours.low, ours.high) == pytest.approx((ref.low, ref.high)) and ours.df == 4


def test_strata_use_the_pooled_within_stratum_sd():
    # two strata: residuals +-.1 and +-.05 -> s_w^2 = (.02 + .005) / (4 - 2); half = t(.975, 2) s_w / 2
    interval = mean_interval([0.9, 0.7, 0.45, 0.35], ["a", "a", "b", "b"])
    half = stats.t.ppf(0.975, 2) * math.sqrt(0.025 / 2) / 2
    assert (interval.low, interval.high) == pytest.approx((0.6 - half, 0.6 + half))
    assert mean_interval([0.5, 0.6], ["a", "b"]) is None  # no degrees of freedom left
    assert interval.text(1, 100) == f"[{100 * (0.6 - half):.1f}, {100 * (0.6 + half):.1f}]"


@pytest.mark.parametrize("seeds", [5, 10])
def test_coverage_over_1000_simulated_runs(seeds):
    """Each run: 3 simulators x ``seeds`` seeds, one episode per pair scoring Binomial(10, p_sim) / 10 plus a
    seed effect; the interval of the cell mean must cover mean(p_sim) in 92-98 % of 1,000 runs."""
    rng = np.random.default_rng(20240613 + seeds)
    runs = 1000
    p = np.clip(TRUTH[None, :, None] + rng.normal(0, 0.08, size=(runs, 3, seeds)), 0, 1)
    acc = rng.binomial(10, p) / 10
    truth = np.mean(np.clip(TRUTH[:, None] + rng.normal(0, 0.08, size=(3, 200_000)), 0, 1))  # E p after clipping
    strata = np.repeat(np.arange(3), seeds)
    covered = 0
    for run in acc:
        interval = mean_interval(run.ravel(), strata)
        covered += interval.low <= truth <= interval.high
    assert 0.92 <= covered / runs <= 0.98, covered / runs


def test_ci_columns_in_the_tracebench_tables(tmp_path):
    run = make_main_run(tmp_path)
    report = build_report([run], with_figures=False, ci=True)
    t1 = report.table("table1")
    column = "low noise, direct, episode"
    assert t1.header[t1.header.index(column) + 1] == f"{column} 95% CI"
    row = next(r for i, r in enumerate(t1.rows) if r[0] == "alpha" and i not in t1.sections)
    # alpha low direct: .9 .7 | .6 .8 | 1 1 -> mean 5/6, residuals +-.1 +-.1 0 0 -> s_w^2 = .04 / 3, df 3
    half = stats.t.ppf(0.975, 3) * math.sqrt(0.04 / 3) / math.sqrt(6)
    assert row[t1.header.index(column) + 1] == f"[{5 / 6 - half:.3f}, {5 / 6 + half:.3f}]"
    csv = to_csv(t1).splitlines()
    assert f"{column} 95% CI" in csv[0] and f"[{5 / 6 - half:.3f}, {5 / 6 + half:.3f}]" in "\n".join(csv)
    assert f"{column} 95\\% CI" in to_latex(t1)
    per_sim = report.table("per-simulator-main-low-direct")
    row = next(r for r in per_sim.rows if r[0] == "alpha")
    half = stats.t.ppf(0.975, 1) * math.sqrt(0.02) / math.sqrt(2)  # balldrop .9, .7
    assert row[per_sim.header.index("balldrop 95% CI")] == f"[{0.8 - half:.3f}, {0.8 + half:.3f}]"
    plain = build_report([run], with_figures=False).table("table1")
    assert not any("CI" in h for h in plain.header)  # without --ci nothing changes

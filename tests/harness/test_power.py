"""``harness plan --power``: the detectable difference against a simulation of the same design (fixed seeds),
seeds needed, the sign-flip test's floor, the layout of a planned experiment and a pilot run's SD."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from harness.design import PairedDesign
from harness.power import (binomial_sd, detectable_difference, layouts, min_clusters, pilot_sd, seeds_needed)


def sign_flip_power(delta: float, clusters: int, pooled: int, trials: int, reps: int, seed: int) -> float:
    """Share of ``reps`` simulated comparisons the exhaustive sign-flip test rejects at .05: two independent
    agents scoring Binomial(trials, .5 +- delta / 2) / trials, ``pooled`` episodes per cluster.  Common random
    numbers (the same uniforms for every delta) make the power curve monotone in delta."""
    rng = np.random.default_rng(seed)
    u = rng.random((2, reps, clusters, pooled, trials))
    a = (u[0] < 0.5 + delta / 2).mean(axis=-1)
    b = (u[1] < 0.5 - delta / 2).mean(axis=-1)
    d = (a - b).mean(axis=-1)  # (reps, clusters)
    masks = ((np.arange(2 ** clusters)[:, None] >> np.arange(clusters)) & 1).astype(float)
    signs = 1.0 - 2.0 * masks
    rejected = 0
    for chunk in np.array_split(d, max(1, reps // 200)):  # 200 x 2^15 floats at a time
        flipped = np.abs(chunk @ signs.T)
        observed = np.abs(chunk.sum(axis=1, keepdims=True))
        rejected += int(np.sum(np.mean(flipped >= observed - 1e-9, axis=1) <= 0.05))
    return rejected / reps


def test_detectable_difference_agrees_with_a_simulation_of_the_design():
    """tracebench-main: 3 simulators x 5 seeds = 15 clusters, 2 noise levels pooled, 10 test samples."""
    sd = binomial_sd(10, 2)
    assert sd == pytest.approx(math.sqrt(0.5 / 20))
    planned = detectable_difference(15, sd)
    low, high = 0.05, 0.25  # bisection on the simulated power curve (to 0.001)
    for _ in range(8):
        mid = (low + high) / 2
        if sign_flip_power(mid, 15, 2, 10, reps=1500, seed=11) >= 0.8:
            high = mid
        else:
            low = mid
    assert abs(planned - high) <= 0.02, (planned, high)


def test_too_few_clusters_detect_nothing_and_seeds_needed_is_the_least():
    assert min_clusters(0.05) == 6  # 2 / 2^5 = .0625 > .05
    assert detectable_difference(5, 0.1) is None and detectable_difference(6, 0.1) is not None
    sd = binomial_sd(10, 2)
    seeds = seeds_needed(0.10, sd, 3)
    assert detectable_difference(3 * seeds, sd) <= 0.10 < detectable_difference(3 * (seeds - 1), sd)
    assert detectable_difference(30, sd) < detectable_difference(15, sd)


DESIGN = PairedDesign(metrics={"episode": "accuracy"}, factors=("profile", "noise", "submission", "simulator", "seed"),
                      clusters=("simulator", "seed"), strata=("submission",), trials="n_test")


def test_layout_of_a_planned_experiment():
    rows = [{"profile": p, "noise": n, "submission": s, "simulator": sim, "seed": k, "n_test": 10}
            for p in ("a", "b") for n in ("low", "high") for s in ("direct", "programmatic")
            for sim in ("x", "y", "z") for k in range(5)]
    found = layouts(rows, DESIGN)
    assert [(lay.stratum, lay.clusters, lay.pooled, lay.trials, lay.replicates) for lay in found] == [
        ("submission=direct", 15, 2, 10, 5), ("submission=programmatic", 15, 2, 10, 5)]


def test_pilot_sd_pools_the_residuals_of_each_condition():
    frame = pd.DataFrame({"profile": "a", "noise": "low", "submission": "direct",
                          "simulator": ["x", "x", "x", "y", "y"], "seed": [0, 1, 2, 0, 1],
                          "accuracy": [0.5, 0.7, 0.6, 0.2, 0.4]})
    sd, df = pilot_sd(frame, DESIGN)
    # residuals -.1 .1 0 | -.1 .1 -> sum of squares .04, df 5 - 2 = 3
    assert df == 3 and sd == pytest.approx(math.sqrt(0.04 / 3))

"""Dr-CiK forecasting metrics (Appendix H.2): energy-form CRPS, scaling, cap, aggregation, ranks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scoringrules

from tsagent_plugins.tasks.drcik.forecast.metrics import (CAP, FAILED, LABELS_HIDDEN, OK, UNDEFINED_SCALE, average_ranks,
                                         common_subset_table, common_tasks, crps_energy, sample_problem,
                                         score_task, summary_table)


def test_crps_two_point_ensemble():
    # samples {0, 1}, y = 0: (0 + 1)/2 - (1/(2*4)) * (|0-1| + |1-0|) = 0.5 - 0.25
    assert crps_energy(np.array([[0.0], [1.0]]), np.array([0.0])) == pytest.approx([0.25])


def test_crps_identical_samples_is_absolute_error():
    x = np.full((25, 4), 3.0)
    y = np.array([3.0, 5.0, -1.0, 2.5])
    assert crps_energy(x, y) == pytest.approx(np.abs(3.0 - y))


def test_crps_is_not_the_fair_form():
    x, y = np.array([[0.0], [1.0]]), np.array([0.0])
    fair = 0.5 - (1 / (2 * 2 * 1)) * 2          # pairwise term / (2 S (S-1))
    assert fair == 0.0 and crps_energy(x, y)[0] != fair


@pytest.mark.parametrize("seed, s, h", [(0, 25, 50), (1, 2, 7), (2, 100, 3), (3, 1, 5), (4, 31, 1)])
def test_crps_matches_scoringrules_nrg(seed, s, h):
    rng = np.random.default_rng(seed)
    x = rng.standard_t(3, size=(s, h)) * rng.uniform(0.1, 50)
    y = rng.normal(size=h) * 10
    ref = scoringrules.crps_ensemble(y, x, m_axis=0, estimator="nrg")
    np.testing.assert_allclose(crps_energy(x, y), ref, rtol=0, atol=1e-9)


def test_crps_with_ties_matches_bruteforce():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(9, 6)).astype(float)
    y = rng.integers(0, 4, size=6).astype(float)
    brute = np.abs(x - y).mean(0) - np.abs(x[:, None, :] - x[None, :, :]).sum((0, 1)) / (2 * 81)
    np.testing.assert_allclose(crps_energy(x, y), brute, atol=1e-12)


def test_score_task_values():
    y = np.array([2.0, -2.0, 4.0])                     # mean |y| = 8/3, a = 3/8
    x = np.array([[1.0, -1.0, 4.0], [3.0, -3.0, 6.0]])  # mean path (2, -2, 5): errors (0, 0, 1)
    s = score_task(x, y)
    assert s.status == OK and s.scale == pytest.approx(3 / 8)
    assert s.smae == pytest.approx(3 / 8 * 1 / 3)
    assert s.srmse == pytest.approx(3 / 8 * math.sqrt(1 / 3))
    per_step = [1 - 0.5, 1 - 0.5, 1 - 0.5]             # (|1|+|1|)/2 - (2*|d|)/(2*4) with d = 2, 2, 2
    assert s.scrps == pytest.approx(3 / 8 * np.mean(per_step))


def test_cap_each_metric_independently():
    y = np.array([1.0, 1.0])
    s = score_task(np.array([[8.0, 8.0], [8.0, 8.0]]), y)     # errors of 7: all three uncapped 7
    assert (s.smae, s.srmse, s.scrps) == (CAP, CAP, CAP)
    assert s.smae_uncapped == pytest.approx(7.0) and s.scrps_uncapped == pytest.approx(7.0)
    t = score_task(np.array([[1.0, 1.0], [10.0, 1.0]]), y)     # mean (5.5, 1): sMAE 2.25, sRMSE 3.18
    assert t.smae == pytest.approx(2.25) and t.srmse == pytest.approx(math.sqrt(4.5 ** 2 / 2))
    assert t.srmse < CAP


def test_statuses():
    y = np.array([0.0, 0.0])
    assert score_task(np.ones((3, 2)), y).status == UNDEFINED_SCALE
    assert score_task(np.ones((3, 2)), None).status == LABELS_HIDDEN
    assert score_task(None, np.ones(2), failure="ForecastError: boom").reason == "ForecastError: boom"
    bad = score_task(np.array([[np.nan, 1.0]]), np.ones(2))
    assert bad.status == FAILED and "NaN" in bad.reason
    assert sample_problem(np.ones((3, 5)), 4) == "samples cover 5 steps, the horizon is 4"
    assert sample_problem(np.ones(4), 4).startswith("samples must be 2-D")


# -- aggregation over a small hand-computed table ---------------------------------------

def _rows():
    data = [
        # forecaster, task, status, smae, srmse, scrps
        ("A", "t1", OK, 1.0, 2.0, 0.5),
        ("A", "t2", OK, 3.0, 4.0, 1.5),
        ("A", "t3", OK, 5.0, 5.0, 5.0),
        ("A", "t4", UNDEFINED_SCALE, None, None, None),
        ("B", "t1", OK, 2.0, 1.0, 1.0),
        ("B", "t2", OK, 1.0, 3.0, 0.5),
        ("B", "t3", FAILED, None, None, None),
        ("B", "t4", UNDEFINED_SCALE, None, None, None),
        ("C", "t1", OK, 0.5, 2.0, 0.2),
        ("C", "t2", OK, 2.0, 5.0, 2.5),
        ("C", "t3", OK, 1.0, 1.0, 1.0),
        ("C", "t4", LABELS_HIDDEN, None, None, None),
    ]
    return pd.DataFrame(data, columns=["forecaster", "benchmark_id", "status", "smae", "srmse", "scrps"])


def test_summary_table_mean_se_and_failures():
    table = summary_table(_rows(), ["forecaster"]).set_index("forecaster")
    a = table.loc["A"]
    assert a["n"] == 3 and a["fail"] == 0 and a["undefined"] == 1
    assert a["scrps_mean"] == pytest.approx(7.0 / 3)
    assert a["scrps_se"] == pytest.approx(np.std([0.5, 1.5, 5.0], ddof=1) / math.sqrt(3))
    b = table.loc["B"]
    assert b["n"] == 2 and b["fail"] == 1                        # failed task excluded, counted
    assert b["scrps_mean"] == pytest.approx(0.75) and b["smae_mean"] == pytest.approx(1.5)
    assert b["scrps_se"] == pytest.approx(0.25)                  # std([1, .5], ddof=1) / sqrt(2)
    assert table.loc["C", "hidden"] == 1 and table.loc["C", "n"] == 3


def test_common_subset_table():
    assert common_tasks(_rows(), ["forecaster"]) == ["t1", "t2"]
    table = common_subset_table(_rows(), ["forecaster"]).set_index("forecaster")
    assert table["n"].tolist() == [2, 2, 2]
    assert table.loc["A", "scrps_mean"] == pytest.approx(1.0)
    assert table.loc["C", "srmse_mean"] == pytest.approx(3.5)


def test_average_ranks_point_and_distributional():
    ranks = average_ranks(_rows(), ["forecaster"]).set_index("forecaster")
    # t1: sRMSE A 2, B 1, C 2 -> ranks A 2.5, B 1, C 2.5;  t2: A 4, B 3, C 5 -> 2, 1, 3
    assert ranks.loc["A", "point_rank"] == pytest.approx(2.25)
    assert ranks.loc["B", "point_rank"] == pytest.approx(1.0)
    assert ranks.loc["C", "point_rank"] == pytest.approx(2.75)
    assert ranks.loc["A", "point_rank_se"] == pytest.approx(np.std([2.5, 2.0], ddof=1) / math.sqrt(2))
    # t1: sCRPS A .5, B 1, C .2 -> 2, 3, 1;  t2: A 1.5, B .5, C 2.5 -> 2, 1, 3
    assert ranks["dist_rank"].to_dict() == pytest.approx({"A": 2.0, "B": 2.0, "C": 2.0})
    assert ranks.loc["A", "dist_rank_se"] == pytest.approx(0.0)
    assert ranks.loc["B", "dist_rank_se"] == pytest.approx(1.0)
    assert (ranks["n"] == 2).all()


def test_two_cell_columns_and_bad_rows():
    rows = _rows().assign(context="no-context")
    table = summary_table(rows, ["forecaster", "context"])
    assert list(table.columns[:2]) == ["forecaster", "context"] and len(table) == 3
    with pytest.raises(ValueError, match="more than one row"):
        summary_table(pd.concat([rows, rows.iloc[:1]]), ["forecaster", "context"])
    with pytest.raises(ValueError, match="lack columns"):
        summary_table(rows.drop(columns="scrps"), ["forecaster"])

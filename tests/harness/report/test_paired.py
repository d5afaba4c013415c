"""Paired comparisons (``harness report --compare``): pairing, the sign-flip interval computed by hand, Table 23
rows reproduced, error rates on simulated agents with fixed seeds, Holm correction, dropped pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from harness.design import PairedDesign
from harness.report import build_report
from harness.report.load import ReportError
from harness.report.paired import Selector, compare, holm
from harness.report.stats import sign_flip_pvalue
from tests.support.report_runs import make_main_run

SIMS = ("balldrop", "bounceball", "massslide")
DESIGN = PairedDesign(metrics={"episode": "accuracy"}, factors=("rep", "profile", "noise", "simulator", "seed"),
                      clusters=("simulator", "seed"), strata=("rep",))


def by_hand_frame() -> tuple[pd.DataFrame, np.ndarray]:
    """Two agents on 3 simulators x 2 seeds x 2 noise levels; a − b per (simulator, seed) averaged over noise is
    d = (.4, .2, .2, .2, .2, .1) -- except that b misses one (high noise) episode, whose pair is dropped."""
    rows = []
    diffs = {"low": [0.5, 0.2, 0.1, 0.3, 0.2, 0.1], "high": [0.3, 0.2, 0.3, 0.1, 0.2, 0.1]}
    for noise, d in diffs.items():
        for i, (sim, seed) in enumerate((s, k) for s in SIMS for k in (0, 1)):
            base = 0.3 + 0.05 * i
            rows.append({"profile": "a", "noise": noise, "simulator": sim, "seed": seed, "accuracy": base + d[i]})
            rows.append({"profile": "b", "noise": noise, "simulator": sim, "seed": seed, "accuracy": base})
    rows.append({"profile": "a", "noise": "high", "simulator": "massslide", "seed": 2, "accuracy": 0.9})  # no b
    return pd.DataFrame(rows).assign(rep=0), np.array([0.4, 0.2, 0.2, 0.2, 0.2, 0.1])


def test_the_sign_flip_interval_of_a_hand_made_set():
    frame, d = by_hand_frame()
    [c] = compare(frame, DESIGN, Selector.parse("a", frame), Selector.parse("b", frame))
    assert np.sort(c.differences) == pytest.approx(np.sort(d))
    assert c.ci.mean == pytest.approx(1.3 / 6) and (c.wins, c.ties, c.losses) == (6, 0, 0)
    # By hand: 2^6 = 64 sign vectors.  For a shift below min(d) = .1 every centred difference is positive, so
    # only the identity and the full flip reach |sum|: p = 2/64 = .031 < .05, rejected.  At exactly .1 one
    # centred difference is 0 and flipping it changes nothing: 4/64 = .0625 > .05, kept.  Likewise at max(d).
    assert (c.ci.low, c.ci.high) == pytest.approx((0.1, 0.4))
    assert sign_flip_pvalue(d, 0.0999) == pytest.approx(2 / 64) and sign_flip_pvalue(d, 0.1) == pytest.approx(4 / 64)
    assert c.p == pytest.approx(2 / 64)  # no difference: all six positive
    assert c.pairs == 12 and c.unpaired == (1, 0)  # the episode b never ran is dropped and counted


def test_sign_flip_pvalue_agrees_with_scipy_permutation_test():
    d = np.array([0.4, 0.2, 0.2, 0.2, 0.2, 0.1, -0.05, 0.3])
    ref = stats.permutation_test((d,), lambda x, axis: np.sum(x, axis=axis), permutation_type="samples",
                                 n_resamples=np.inf, vectorized=True, axis=-1)
    assert sign_flip_pvalue(d) == pytest.approx(ref.pvalue)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    run = make_main_run(tmp_path_factory.mktemp("paired"))
    pairs = [("alpha", "beta"), ("noise=low", "noise=high"), ("submission=direct", "submission=programmatic"),
             ("profile=alpha,setting=main", "profile=alpha,setting=no-context")]
    return build_report([run], with_figures=False, compare=pairs)


def test_compare_reproduces_the_table23_rows(report):
    """Every Table 23 row is a --compare contrast of the same episodes: same effect, interval and W/T/L."""
    t23 = {row[0]: row[1:] for i, row in enumerate(report.table("table23").rows)
           if i not in report.table("table23").sections}
    shown = {row[0]: row[1:] for row in report.table("compare").rows}
    expected = {
        "alpha − beta, direct, episode": "alpha − beta, setting=main, submission=direct, episode",
        "alpha − beta, programmatic, held-out": "alpha − beta, setting=main, submission=programmatic, held-out",
        "Agent average: low − high noise, direct, episode":
            "noise=low − noise=high, setting=main, submission=direct, episode",
        "alpha: with − without text, direct, episode":
            "profile=alpha,setting=main − profile=alpha,setting=no-context, submission=direct, episode",
    }
    for t23_label, compare_label in expected.items():
        assert shown[compare_label][:3] == t23[t23_label], t23_label  # effect [CI], W/T/L, n
    assert t23["alpha − beta, direct, episode"][:2] == ["21.7 [10.0, 40.0]", "6/0/0"]
    # direct − programmatic is averaged over noise levels here (Table 23 shows it per noise level)
    assert "submission=direct − submission=programmatic, setting=main, episode" in shown


def test_holm_and_dropped_pairs_are_reported(report):
    table = report.table("compare")
    records = table.data
    ps = [r["p"] for r in records]
    from statsmodels.stats.multitest import multipletests
    assert [r["p_holm"] for r in records] == pytest.approx(list(multipletests(ps, method="holm")[1]))
    assert all(r["p_holm"] >= r["p"] for r in records)
    ablation = next(r for r in records if r["contrast"].startswith("profile=alpha,setting=main")
                    and r["metric"] == "episode" and r["submission"] == "direct")
    # alpha ran main, high noise, direct on 6 pairs and without context on 5: low noise and one pair dropped
    assert (ablation["dropped_a"], ablation["dropped_b"], ablation["n"]) == (7, 0, 5)
    assert any("without a partner" in n for n in table.notes) and any("unbounded" in n for n in table.notes)


def test_a_selector_nothing_matches_is_a_clear_error(tmp_path):
    run = make_main_run(tmp_path, with_ablation=False)
    with pytest.raises(ReportError, match="'gamma': no episode has it"):
        build_report([run], with_figures=False, compare=[("alpha", "gamma")])
    with pytest.raises(ReportError, match="share episodes"):
        build_report([run], with_figures=False, compare=[("alpha", "profile=alpha")])


def simulated(reps: int, shift: float, seed: int) -> pd.DataFrame:
    """``reps`` simulated experiments (the ``rep`` stratum): agents a and b on 3 simulators x 5 seeds x 2 noise
    levels, accuracy = Binomial(10, p) / 10 with p per simulator and seed (shared by both agents) and a's p
    higher by ``shift``."""
    rng = np.random.default_rng(seed)
    shape = (reps, 3, 5, 2)
    p = np.clip(rng.uniform(0.3, 0.7, size=shape), 0, 1)
    acc_a = rng.binomial(10, np.clip(p + shift, 0, 1)) / 10
    acc_b = rng.binomial(10, p) / 10
    r, s, k, n = np.meshgrid(*(np.arange(x) for x in shape), indexing="ij")
    base = {"rep": r.ravel(), "simulator": np.array(SIMS)[s.ravel()], "seed": k.ravel(),
            "noise": np.array(["low", "high"])[n.ravel()]}
    return pd.concat([pd.DataFrame({**base, "profile": "a", "accuracy": acc_a.ravel()}),
                      pd.DataFrame({**base, "profile": "b", "accuracy": acc_b.ravel()})], ignore_index=True)


def test_identical_agents_are_rarely_called_different():
    frame = simulated(400, 0.0, seed=20240613)
    found = compare(frame, DESIGN, Selector.parse("a", frame), Selector.parse("b", frame))
    assert len(found) == 400
    rejected = np.mean([c.p <= 0.05 for c in found])
    assert rejected <= 0.08
    assert np.mean([not (c.ci.low <= 0 <= c.ci.high) for c in found]) <= 0.08  # the interval excludes 0 as rarely


def test_a_constructed_difference_is_found():
    frame = simulated(20, 0.25, seed=7)  # 25 points: about 6 standard errors of the mean cluster difference
    found = compare(frame, DESIGN, Selector.parse("a", frame), Selector.parse("b", frame))
    assert all(c.p <= 0.05 and c.ci.low > 0 for c in found)
    assert np.mean([c.ci.low <= 0.25 <= c.ci.high for c in found]) >= 0.9
    holm(found)
    assert all(c.p_holm <= 0.05 for c in found)


def test_runs_are_compared_by_their_folder_paths(tmp_path, monkeypatch):
    """``--compare runs/old runs/new`` (as the docs write it): two runs whose folders share a name are told
    apart by their paths, relative (with ``./`` or a trailing slash) or absolute; a path that is none of the
    report's runs is the usual error."""
    old, new = make_main_run(tmp_path / "old"), make_main_run(tmp_path / "new")
    monkeypatch.chdir(tmp_path)
    for a, b in (("old/run-main", "./new/run-main/"), (str(old), str(new))):
        report = build_report([old, new], with_figures=False, compare=[(a, b)])
        records = report.table("compare").data
        assert records and all(r["contrast"].startswith(f"{a} − {b}") for r in records)
        assert all(r["n"] > 0 and r["effect_pp"] == 0 and r["ties"] == r["n"] for r in records), records  # paired
    with pytest.raises(ReportError, match="'other/run-main': no episode has it"):
        build_report([old, new], with_figures=False, compare=[("old/run-main", "other/run-main")])

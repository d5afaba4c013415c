"""BallDrop rejection rules (TraceBench Table 4)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.contracts import Configuration, Intervention, Trajectory
from tsagent_plugins.simulators.balldrop import BallDrop, dynamics, rules

SIM = BallDrop()
DT = SIM.dt


def cfg(h=2.0, v=0.0, e=0.8, m=1.0, c=0.0, g=9.81) -> Configuration:
    return Configuration({"initial_height": h, "initial_velocity": v},
                         {"restitution": e, "mass": m, "drag_coeff": c, "gravity": g})


def outcomes(c: Configuration, iv: Intervention) -> dict[str, object]:
    target, base = SIM.simulate(c, iv), SIM.simulate(c)
    return {r.rule: r for r in SIM.rejection_rules(c, iv, target, base)}


# ------------------------------------------------------------------ building blocks
def test_first_divergence_is_the_first_impact_after_a_restitution_change():
    c = cfg(h=5.0, e=0.9)
    iv = Intervention("restitution", 3.0, 0.6)
    target, base = SIM.simulate(c, iv), SIM.simulate(c)
    s = c.initial_state
    path = dynamics.solve(s["initial_height"], s["initial_velocity"], dynamics.Params(**c.parameters), SIM.time[-1])
    t_imp = next(i.time for i in path.impacts if i.time >= 3.0)
    assert rules.first_divergence(target, base) == math.ceil(t_imp / DT) - 1
    assert rules.first_divergence(base, base) is None


def synthetic(impulse_at: dict[int, float], v: np.ndarray | None = None) -> Trajectory:
    n = 400
    t = np.arange(1, n + 1) * DT
    y = np.zeros((n, 3))
    y[:, 0] = 1.0
    y[:, 1] = -2.0 if v is None else v
    for i, j in impulse_at.items():
        y[i, 2] = j
        y[i:, 1] = -y[i - 1, 1] if v is None else y[i:, 1]
    return Trajectory(t, y)


def test_contact_events_merge_within_30_ms_and_apply_thresholds():
    tr = synthetic({100: 5.0, 106: 3.0, 200: 4.0})  # 15 ms apart: merged; 235 ms apart: separate
    ev = rules.contact_events(tr, v0=0.0)
    assert [(e.i0, e.i1) for e in ev] == [(100, 106), (200, 200)]
    tr = synthetic({100: 5.0, 112: 3.0})  # exactly 30 ms apart: not merged (< 0.03 s merges)
    assert len(rules.contact_events(tr, 0.0)) == 2
    assert rules.contact_events(synthetic({100: 1.0}), 0.0) == []  # must exceed 1 N s
    v = np.full(400, -0.5)
    v[100:] = 0.3
    assert not rules.contact_events(synthetic({100: 2.0}, v), 0.0)[0].qualifies  # incoming must exceed 0.5
    v[:100] = -0.51
    v[100:] = 0.1
    assert not rules.contact_events(synthetic({100: 2.0}, v), 0.0)[0].qualifies  # rebound must exceed 0.1
    v[100:] = 0.11
    assert rules.contact_events(synthetic({100: 2.0}, v), 0.0)[0].qualifies


def plain_dtw(a, b):
    n, m = len(a), len(b)
    d = np.full((n, m), np.inf)
    for i in range(n):
        for j in range(m):
            c = abs(a[i] - b[j])
            if i == 0 and j == 0:
                d[i, j] = 2 * c
                continue
            best = np.inf
            if i and j:
                best = d[i - 1, j - 1] + 2 * c
            if i:
                best = min(best, d[i - 1, j] + c)
            if j:
                best = min(best, d[i, j - 1] + c)
            d[i, j] = best
    return d[-1, -1] / (n + m)


def test_normalized_dtw_matches_the_plain_recurrence():
    rng = np.random.default_rng(1)
    for n, m in ((1, 1), (5, 9), (30, 30), (17, 4)):
        a, b = rng.normal(size=n), rng.normal(size=m)
        assert rules.normalized_dtw(a, b) == pytest.approx(plain_dtw(a, b), rel=1e-12)
        assert rules.normalized_dtw(a, b) == pytest.approx(rules.normalized_dtw(b, a), rel=1e-12)
    x = np.sin(np.linspace(0, 3, 80))
    assert rules.normalized_dtw(x, x) == 0.0
    assert rules.normalized_dtw(np.zeros(80), np.full(60, 0.25)) == pytest.approx(0.25)  # mean mismatch
    shifted = np.sin(np.linspace(0.3, 3.3, 80))
    assert rules.normalized_dtw(x, shifted) < 0.5 * np.mean(np.abs(x - shifted))  # warping absorbs a time shift


# ------------------------------------------------------------------ Table 4, each rule both ways
def test_rule_sets_per_parameter():
    c = cfg(h=5.0, e=0.9, c=0.5)
    names = {p: list(outcomes(c, Intervention(p, 3.0, v))) for p, v in
             (("gravity", 4.0), ("mass", 3.0), ("restitution", 0.5), ("drag_coeff", 5.0))}
    assert names["gravity"] == ["apex_after_divergence", "max_rebounds"]
    assert names["mass"] == names["restitution"] == ["apex_after_divergence", "max_rebounds", "rebound_before_and_after"]
    assert names["drag_coeff"] == names["mass"] + ["drag_dtw_or_terminal"]


def test_apex_after_divergence():
    ok = outcomes(cfg(h=5.0, e=0.9), Intervention("gravity", 3.0, 4.0))["apex_after_divergence"]
    assert ok.passed
    # a mass change once the ball rests only changes the contact signal m g: no apex follows
    bad = outcomes(cfg(h=1.0, e=0.3), Intervention("mass", 3.0, 4.0))["apex_after_divergence"]
    assert not bad.passed and "target none, baseline none" in bad.detail
    none = outcomes(cfg(h=3.0, e=0.9), Intervention("gravity", 9.999, 3.0))  # after the last sample
    assert all(not r.passed and "no divergence" in r.detail for r in none.values() if r.rule != "max_rebounds")


def test_apex_must_exceed_ten_centimetres_in_one_trace():
    # low hops: a restitution change at small bounce heights
    c = cfg(h=0.12, e=0.7, m=5.0)
    r = outcomes(c, Intervention("restitution", 0.3, 0.4))  # between the first and second bounce
    assert not r["apex_after_divergence"].passed
    assert "target 0.00" in r["apex_after_divergence"].detail and "baseline 0.02" in r["apex_after_divergence"].detail
    assert rules.first_apex(SIM.simulate(c), 0) == pytest.approx(0.12 * 0.49, rel=0.01)


def test_max_rebounds():
    few = outcomes(cfg(h=5.0, e=0.9), Intervention("gravity", 3.0, 4.0))["max_rebounds"]
    assert few.passed
    c = cfg(h=0.5, e=0.95, m=5.0, g=15.0)
    many = outcomes(c, Intervention("gravity", 5.0, 10.0))["max_rebounds"]
    assert not many.passed
    assert len(rules.qualifying_rebounds(SIM.simulate(c), 0.0)) >= 25


def test_rebound_before_and_after():
    ok = outcomes(cfg(h=5.0, e=0.9), Intervention("restitution", 3.0, 0.6))["rebound_before_and_after"]
    assert ok.passed
    # restitution changed before the first bounce: no rebound shows the old value (Section 3.4 (ii))
    bad = outcomes(cfg(h=6.0, e=0.9, g=2.0), Intervention("restitution", 1.0, 0.5))["rebound_before_and_after"]
    assert not bad.passed and bad.detail.endswith("0/3")


def test_drag_dtw_passes_a_large_change_in_flight():
    r = outcomes(cfg(h=5.0, e=0.9), Intervention("drag_coeff", 3.0, 20.0))["drag_dtw_or_terminal"]
    assert r.passed and "DTW" in r.detail and float(r.detail.split()[2]) > 0.1


def test_drag_small_change_without_terminal_descent_is_rejected():
    r = outcomes(cfg(h=3.0, e=0.9, m=20.0), Intervention("drag_coeff", 3.0, 2.0))["drag_dtw_or_terminal"]
    assert not r.passed and "no qualifying near-terminal descent" in r.detail


def test_terminal_rule_descent_still_high_at_the_end():
    # v_T = sqrt(0.5 * 9.81 / 27) = 0.43 m/s: from 6 m the ball is still falling at 10 s
    c = cfg(h=6.0, e=0.9, m=0.5, c=30.0)
    r = outcomes(c, Intervention("drag_coeff", 5.0, 27.0))["drag_dtw_or_terminal"]
    assert r.passed and "still above 0.1 m at the end" in r.detail


def test_terminal_rule_descent_after_a_rebound():
    c = Configuration({"initial_height": 2.781804300573631, "initial_velocity": -0.06127183506129796},
                      {"restitution": 0.9538806060927433, "mass": 12.072972400510649,
                       "drag_coeff": 2.0799152437146637, "gravity": 8.691862891391025})
    iv = Intervention("drag_coeff", 2.7164547833728605, 9.601156501501695)  # v_T 7.1 -> 3.3 m/s
    r = outcomes(c, iv)
    assert r["drag_dtw_or_terminal"].passed and "after a rebound" in r["drag_dtw_or_terminal"].detail
    assert "<= 0.1" in r["drag_dtw_or_terminal"].detail  # the DTW part alone would reject
    # the same descents are not near-terminal for the old drag's terminal speed
    target = SIM.simulate(c, iv)
    i_div = rules.first_divergence(target, SIM.simulate(c))
    old = dict(c.parameters)
    assert rules.terminal_descent(target, i_div, rules.qualifying_rebounds(target, 0.0), old) is None
    assert rules.terminal_descent(target, i_div, [], {**old, "drag_coeff": iv.new_value}) is None


# ------------------------------------------------------------------ early rejection
def test_early_rejection_agrees_with_the_full_rules():
    """Whenever the apex rule is decided before simulating, the full rules fail it first;
    and it catches most apex failures (the speed it exists for)."""
    sim = BallDrop()
    rng = np.random.default_rng(11)
    early = apex_first = 0
    for c in sim.sample_configurations(120, rng):
        base = sim.simulate(c)
        for p in sim.parameters:
            try:
                iv = sim.sample_intervention(c, p.name, rng)
            except ValueError:
                continue
            out = sim.rejection_rules(c, iv, sim.simulate(c, iv), base)
            failed = [o.rule for o in out if not o.passed]
            apex_first += bool(failed) and failed[0] == "apex_after_divergence"
            e = sim.early_rejection(c, iv, base)
            if e is not None:
                early += 1
                assert not e.passed and e.rule == "apex_after_divergence" == failed[0], (c, iv)
    assert early >= 0.7 * apex_first and apex_first > 20


def test_early_rejection_keeps_the_filter_verdicts():
    from tsagent_plugins.tasks.tracebench.filtering import SolvabilityFilter

    sim = BallDrop()
    filt = SolvabilityFilter(sim)
    rng = np.random.default_rng(3)
    seen = 0
    for c in sim.sample_configurations(25, rng):
        base = sim.simulate(c)
        for p in sim.parameters:
            try:
                iv = sim.sample_intervention(c, p.name, rng)
            except ValueError:
                continue
            fast = filt.evaluate(c, iv, ni_probe=base)
            slow = filt.evaluate(c, iv, ni_probe=base, full=True)  # never takes the early exit
            assert (fast.accepted, fast.stage) == (slow.accepted, slow.stage)
            seen += fast.target is None
    assert seen > 0

"""BallDrop physics, sampling and registration (TraceBench Appendix A, Table 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from harness import plugins
from harness.contracts import NO_CHANGE, Configuration, Intervention
from tsagent_plugins.simulators.balldrop import BallDrop, dynamics, flight, sampling

SIM = BallDrop()
DT = 1.0 / 400.0


def cfg(h=2.0, v=0.0, e=0.8, m=1.0, c=0.0, g=9.81) -> Configuration:
    return Configuration({"initial_height": h, "initial_velocity": v},
                         {"restitution": e, "mass": m, "drag_coeff": c, "gravity": g})


def path(c: Configuration, change=None) -> dynamics.Path:
    s, p = c.initial_state, c.parameters
    return dynamics.solve(s["initial_height"], s["initial_velocity"], dynamics.Params(**p), SIM.time[-1], change)


# ------------------------------------------------------------------ attributes
def test_registered_and_attributes_match_the_paper():
    sim = plugins.get("simulator", "balldrop")
    assert isinstance(sim, BallDrop)
    assert sim.labels == ["coefficient of restitution", "mass", "drag coefficient", "gravity acceleration", NO_CHANGE]
    assert [p.name for p in sim.parameters] == ["restitution", "mass", "drag_coeff", "gravity"]
    # sampling bounds are Table 5's retained-pool [min, max]
    assert [(p.low, p.high, p.min_srd, p.min_abs) for p in sim.parameters] == [
        (0.377, 0.99, 0.0, 0.3), (0.5, 19.434, 0.1, 1.0), (0.0, 6.0, 0.0, 2.0), (2.0, 10.0, 0.3, 3.0)]
    assert [(p.name, p.low, p.high) for p in sim.state_variables] == [
        ("initial_height", 0.19122, 5.769), ("initial_velocity", -9.7276, 1.1469)]
    for p in sim.state_variables + sim.parameters:
        t = sim.reference.ranges[p.name]
        assert (p.low, p.high) == (t[0], t[2])
    assert [(ch.name, ch.description, ch.unit, ch.impulse) for ch in sim.channels] == [
        ("Position", "ball height", "m", False), ("Velocity", "ball velocity", "m/s", False),
        ("Hard_Stop_f", "contact impulse (N*s)", "N*s", True)]
    assert sim.description.startswith("a 1D vertical point-mass ball model under gravity. While")
    assert sim.description.endswith("instead enters static contact at the ground.")
    assert "impact speed at or above 0.5 m/s" in sim.description
    assert sim.kappa_ref == 1.0


def test_time_grid_is_table3():
    tr = SIM.simulate(cfg())
    assert tr.values.shape == (3999, 3)
    assert tr.time[0] == pytest.approx(0.0025) and tr.time[-1] == pytest.approx(9.9975)
    np.testing.assert_allclose(np.diff(tr.time), DT, rtol=1e-9)


# ------------------------------------------------------------------ free fall and impacts
def test_drop_from_rest_hits_ground_at_sqrt_2h_over_g():
    h, g, m, e = 2.0, 9.81, 1.7, 0.8
    tr = SIM.simulate(cfg(h=h, e=e, m=m, g=g))
    t1 = math.sqrt(2 * h / g)
    assert abs(tr.events[0] - t1) < 1e-9
    u = math.sqrt(2 * g * h)
    k = math.ceil(t1 / DT)  # impact lies in (t_{k-1}, t_k] -> row k-1
    j = tr.values[:, 2]
    assert j[k - 1] == pytest.approx(m * (1 + e) * u, rel=1e-12)
    assert np.all(j[: k - 1] == 0.0) and j[k] == 0.0
    # before the impact the samples follow x = h - g t^2 / 2
    pre = tr.time < t1
    np.testing.assert_allclose(tr.values[pre, 0], h - 0.5 * g * tr.time[pre] ** 2, atol=1e-12)
    np.testing.assert_allclose(tr.values[pre, 1], -g * tr.time[pre], atol=1e-12)


def test_rebound_leaves_with_e_times_impact_speed():
    h, g, e = 3.0, 9.81, 0.7
    p = path(cfg(h=h, e=e, g=g))
    first, second = p.impacts[0], p.impacts[1]
    assert first.speed_out == pytest.approx(e * first.speed_in, rel=1e-14)
    assert first.speed_in == pytest.approx(math.sqrt(2 * g * h), rel=1e-12)
    # without drag the ball returns after 2 e u / g with the same speed
    assert second.time - first.time == pytest.approx(2 * e * first.speed_in / g, rel=1e-11)
    assert second.speed_in == pytest.approx(first.speed_out, rel=1e-11)
    tr = SIM.simulate(cfg(h=h, e=e, g=g))
    k = math.ceil(first.time / DT) - 1  # first sample after the impact: post-impact state
    assert tr.values[k, 1] == pytest.approx(e * first.speed_in - g * (tr.time[k] - first.time), abs=1e-9)


def test_slow_impact_enters_static_contact():
    g, m, e = 9.81, 2.0, 0.9
    h = 0.01  # impact speed sqrt(2 g h) = 0.443 m/s < 0.5
    tr = SIM.simulate(cfg(h=h, e=e, m=m, g=g))
    p = path(cfg(h=h, e=e, m=m, g=g))
    assert len(p.impacts) == 1 and not p.impacts[0].rebound
    t1, u = p.impacts[0].time, p.impacts[0].speed_in
    assert u == pytest.approx(math.sqrt(2 * g * h)) and u < 0.5
    np.testing.assert_array_equal(tr.events, [t1])
    after = tr.time > t1
    assert np.all(tr.values[after, 0] == 0.0) and np.all(tr.values[after, 1] == 0.0)
    k = math.ceil(t1 / DT) - 1
    # the rest interval gets m u plus the pro-rated weight; every later interval m g dt
    assert tr.values[k, 2] == pytest.approx(m * u + m * g * (tr.time[k] - t1), rel=1e-12)
    np.testing.assert_allclose(tr.values[k + 1:, 2], m * g * DT, rtol=1e-9)


def test_threshold_is_inclusive_at_half_a_metre_per_second():
    rebound = path(cfg(h=0.0, v=-0.5, e=0.6))
    assert rebound.impacts[0].time == 0.0 and rebound.impacts[0].speed_out == pytest.approx(0.3)
    rest = path(cfg(h=0.0, v=-0.4999, e=0.6))
    assert len(rest.impacts) == 1 and not rest.impacts[0].rebound


def test_initial_states_on_the_ground():
    m, g, e = 3.0, 9.81, 0.5
    still = SIM.simulate(cfg(h=0.0, v=0.0, m=m, g=g, e=e))
    assert still.events.size == 0
    assert np.all(still.values[:, :2] == 0.0)
    np.testing.assert_allclose(still.values[:, 2], m * g * DT, rtol=1e-9)  # first interval is [0, dt]
    launched = SIM.simulate(cfg(h=0.0, v=1.5, m=m, g=g, e=e))
    assert launched.values[0, 0] == pytest.approx(1.5 * DT - 0.5 * g * DT**2, rel=1e-12)
    assert launched.events[0] == pytest.approx(2 * 1.5 / g, rel=1e-12)
    hit = SIM.simulate(cfg(h=0.0, v=-3.0, m=m, g=g, e=e))
    assert hit.events[0] == 0.0
    assert hit.values[0, 2] == pytest.approx(m * (1 + e) * 3.0, rel=1e-12)
    assert hit.values[0, 1] == pytest.approx(e * 3.0 - g * DT, rel=1e-12)


# ------------------------------------------------------------------ drag
def test_terminal_speed_with_drag():
    for m, c, g, v0 in ((1.0, 30.0, 9.81, 0.0), (20.0, 5.0, 2.0, -10.0), (0.5, 2.0, 15.0, -10.0)):
        vt = math.sqrt(m * g / c)
        tf = flight.fall_time(1e6, -v0, c / m, g)[0]  # the far-away ground is never reached
        assert tf > 10.0
        drop, u = flight.descent(-v0, c / m, g, 40.0)
        assert u == pytest.approx(vt, rel=1e-9)
    tr = SIM.simulate(cfg(h=6.0, v=-10.0, m=1.0, c=30.0, g=9.81))  # starts above terminal speed
    vt = math.sqrt(9.81 / 30.0)
    assert tr.values[400, 1] == pytest.approx(-vt, rel=1e-9)
    assert np.all(np.diff(tr.values[:100, 1]) > 0)  # decelerates towards -v_T from below


def test_analytic_solution_matches_numerical_integration():
    c = cfg(h=4.0, v=1.5, e=0.85, m=0.8, c=0.9, g=7.0)
    k, g = 0.9 / 0.8, 7.0
    p = path(c)
    rhs = lambda t, s: [s[1], -g - k * s[1] * abs(s[1])]  # noqa: E731
    hit = lambda t, s: s[0]  # noqa: E731
    hit.terminal, hit.direction = True, -1
    sol = solve_ivp(rhs, (0, 10), [4.0, 1.5], events=hit, rtol=1e-12, atol=1e-12, dense_output=True)
    assert abs(sol.t_events[0][0] - p.impacts[0].time) < 1e-9
    assert abs(-sol.y_events[0][0][1] - p.impacts[0].speed_in) < 1e-8
    tr = SIM.simulate(c)
    pre = tr.time < p.impacts[0].time
    np.testing.assert_allclose(tr.values[pre, :2].T, sol.sol(tr.time[pre]), atol=1e-9)


@pytest.mark.parametrize("c_small", [1e-6, 1e-10, 1e-14, 1e-200])
def test_small_drag_converges_to_the_ballistic_limit(c_small):
    base = SIM.simulate(cfg(h=5.0, v=2.0, e=0.9, c=0.0))
    small = SIM.simulate(cfg(h=5.0, v=2.0, e=0.9, c=c_small))
    # drag effects are O(k) = O(c/m) and accumulate over ~20 bounces; no loss of precision beyond that
    tol = 1e-12 + 2000 * c_small
    np.testing.assert_allclose(small.values[:, :2], base.values[:, :2], rtol=0, atol=tol)
    np.testing.assert_allclose(small.events, base.events, rtol=0, atol=tol)
    assert small.values[:, 2].sum() == pytest.approx(base.values[:, 2].sum(), rel=tol)


def test_fall_time_is_exact_for_large_drag_and_heights():
    for h, u0, k, g in ((6.0, 0.0, 60.0, 15.0), (0.3, 10.0, 40.0, 2.0), (5.0, 0.2, 1e-3, 9.81)):
        tau, u = flight.fall_time(h, u0, k, g)
        drop, u2 = flight.descent(u0, k, g, tau)
        assert drop == pytest.approx(h, rel=1e-13)
        assert u == u2 > 0.0


# ------------------------------------------------------------------ interventions
def test_state_is_continuous_across_an_airborne_intervention():
    c = cfg(h=5.0, v=0.0, e=0.9, m=2.0, c=0.5, g=9.81)
    t_int = 0.5  # falling
    base = path(c)
    p = path(c, ("gravity", t_int, 4.0))
    row = next(r for r in p.segments if r[0] == t_int)
    x_b, v_b = dynamics.sample(base, np.array([t_int]), DT)[0, :2]
    assert row[2] == pytest.approx(x_b, rel=1e-13) and row[3] == pytest.approx(v_b, rel=1e-13)
    assert row[5] == 4.0
    # the first impact follows the new gravity from the state at t_int
    tau, _ = flight.fall_time(x_b, -v_b, 0.5 / 2.0, 4.0)
    assert p.impacts[0].time == pytest.approx(t_int + tau, abs=1e-12)
    tb, ti = SIM.simulate(c), SIM.simulate(c, Intervention("gravity", t_int, 4.0))
    before = tb.time < t_int
    np.testing.assert_array_equal(tb.values[before], ti.values[before])
    flying = ti.time < ti.events[0]
    steps = np.abs(np.diff(ti.values[flying, 0]))
    assert steps.max() <= np.abs(ti.values[flying, 1]).max() * DT * (1 + 1e-9)


def test_contact_impulse_follows_mass_and_gravity_changes_at_rest():
    c = cfg(h=0.0, v=0.0, m=2.0, g=9.81)
    t_int = 3.0 + 0.4 * DT  # inside an interval: pro-rated
    tr = SIM.simulate(c, Intervention("mass", t_int, 5.0))
    k = math.ceil(t_int / DT) - 1
    assert np.all(tr.values[:, :2] == 0.0)
    np.testing.assert_allclose(tr.values[:k, 2], 2.0 * 9.81 * DT, rtol=1e-9)
    assert tr.values[k, 2] == pytest.approx(2.0 * 9.81 * 0.4 * DT + 5.0 * 9.81 * 0.6 * DT, rel=1e-9)
    np.testing.assert_allclose(tr.values[k + 1:, 2], 5.0 * 9.81 * DT, rtol=1e-9)
    tg = SIM.simulate(c, Intervention("gravity", t_int, 3.0))
    np.testing.assert_allclose(tg.values[k + 1:, 2], 2.0 * 3.0 * DT, rtol=1e-9)
    assert np.all(tg.values[:, 0] == 0.0)


def test_restitution_change_acts_from_the_next_impact():
    c = cfg(h=2.0, e=0.8)
    p0 = path(c)
    t_int = (p0.impacts[0].time + p0.impacts[1].time) / 2
    p = path(c, ("restitution", t_int, 0.4))
    assert p.impacts[0].speed_out == pytest.approx(0.8 * p.impacts[0].speed_in)
    assert p.impacts[1].time == pytest.approx(p0.impacts[1].time, abs=1e-12)
    assert p.impacts[1].speed_out == pytest.approx(0.4 * p.impacts[1].speed_in)
    m = 1.0
    assert p.impacts[1].impulse == pytest.approx(m * 1.4 * p.impacts[1].speed_in)


def test_intervention_after_the_last_sample_has_no_effect():
    c = cfg(h=3.0, e=0.9)
    a = SIM.simulate(c)
    b = SIM.simulate(c, Intervention("gravity", 9.999, 3.0))
    np.testing.assert_array_equal(a.values, b.values)


# ------------------------------------------------------------------ sampling
def test_latin_hypercube_stratifies_every_dimension():
    n = 50
    unit = sampling.latin_hypercube_units(6, n, np.random.default_rng(4))
    for j in range(6):
        assert sorted(np.floor(unit[:, j] * n).astype(int)) == list(range(n))
    # configurations are those unit points through each variable's distribution, in order
    cfgs = SIM.sample_configurations(n, np.random.default_rng(4))
    specs = SIM.state_variables + SIM.parameters
    for j, p in enumerate(specs):
        vals = np.array([{**c.initial_state, **c.parameters}[p.name] for c in cfgs])
        np.testing.assert_array_equal(vals, sampling.DISTRIBUTIONS[p.name].ppf(unit[:, j]))
        assert np.all((vals >= p.low) & (vals <= p.high))
    again = SIM.sample_configurations(n, np.random.default_rng(4))
    assert again == cfgs


def test_distributions_quantiles_and_medians():
    d = sampling.Distribution
    u = np.array([0.0, 0.5, 0.999999])
    np.testing.assert_allclose(d("uniform", 2.0, 10.0).ppf(u), [2.0, 6.0, 10.0], atol=1e-4)
    assert d("log-uniform", 0.5, 18.0).median() == pytest.approx(3.0)  # geometric mean
    assert d("log-power", 0.5, 18.0, k=1.0).median() == pytest.approx(3.0)
    assert d("power-high", 0.0, 1.0, k=2.0).median() == pytest.approx(0.75)
    assert d("power-low", 0.0, 1.0, k=2.0).median() == pytest.approx(0.25)
    z = d("zero-uniform", 0.0, 6.0, p_low=0.2)
    np.testing.assert_allclose(z.ppf(np.array([0.1, 0.2, 0.6])), [0.0, 0.0, 3.0])
    zl = d("zero-log-uniform", 0.0, 6.0, p_low=0.5, start=0.06)
    np.testing.assert_allclose(zl.ppf(np.array([0.25, 0.75])), [0.0, 0.6])
    m = sampling.Mixture(((0.25, d("uniform", 0.0, 1.0)), (0.75, d("uniform", 2.0, 3.0))))
    np.testing.assert_allclose(m.ppf(np.array([0.0, 0.125, 0.25, 0.625, 1.0])), [0.0, 0.5, 2.0, 2.5, 3.0])
    assert (m.low, m.high) == (0.0, 3.0)
    with pytest.raises(ValueError, match="Mixture"):
        sampling.Mixture(((0.5, d("uniform", 0.0, 1.0)),))
    for bad in (dict(kind="nope", low=0, high=1), dict(kind="log-uniform", low=0.0, high=1.0),
                dict(kind="uniform", low=2.0, high=1.0)):
        with pytest.raises(ValueError, match="Distribution"):
            d(**bad)
    # every BallDrop distribution stays inside Table 5's bounds
    for p in SIM.state_variables + SIM.parameters:
        v = sampling.DISTRIBUTIONS[p.name].ppf(np.linspace(0, 1, 1001))
        assert v.min() >= p.low and v.max() <= p.high


def test_intervention_values_respect_distance_rules():
    rng = np.random.default_rng(9)
    cfgs = SIM.sample_configurations(60, rng)
    sides = {p.name: set() for p in SIM.parameters}
    for c in cfgs:
        for p in SIM.parameters:
            old = c.parameters[p.name]
            if not sampling.admissible_sides(p, old):
                with pytest.raises(ValueError, match=p.name):
                    SIM.sample_intervention(c, p.name, rng)
                continue
            iv = SIM.sample_intervention(c, p.name, rng)
            assert 2.0 <= iv.time <= 8.0
            assert p.low <= iv.new_value <= p.high
            assert abs(iv.new_value - old) >= p.min_abs - 1e-12
            assert sampling.srd(old, iv.new_value) >= p.min_srd - 1e-9
            sides[p.name].add(iv.new_value > old)
    assert all(s == {True, False} for s in sides.values())


def test_srd_bounds_are_the_closed_form():
    g = SIM.parameters[3]
    assert sampling.admissible_sides(g, 10.0) == [(2.0, pytest.approx(7.0))]  # nothing above the max
    m = SIM.parameters[1]
    (up_lo, up_hi), (dn_lo, dn_hi) = sampling.admissible_sides(m, 15.0)
    assert up_lo == pytest.approx(15.0 * 2.1 / 1.9) and up_hi == 19.434  # SRD binds above
    assert dn_lo == 0.5 and dn_hi == pytest.approx(15.0 * 1.9 / 2.1)  # and below
    assert sampling.srd(15.0, up_lo) == pytest.approx(0.1) == sampling.srd(15.0, dn_hi)
    (up_lo, _), (_, dn_hi) = sampling.admissible_sides(m, 3.0)
    assert (up_lo, dn_hi) == (pytest.approx(4.0), pytest.approx(2.0))  # min_abs binds both sides
    (up_lo, _), (dn_lo, dn_hi) = sampling.admissible_sides(g, 5.0)
    assert dn_hi == pytest.approx(2.0) and up_lo == pytest.approx(8.0)  # min_abs binds both sides
    e = SIM.parameters[0]
    assert sampling.admissible_sides(e, 0.5) == [(0.8, 0.99)]
    assert sampling.admissible_sides(e, 0.75) == [(0.377, pytest.approx(0.45))]
    with pytest.raises(ValueError, match="no admissible new value"):
        sampling.new_value(type(e)("x", "x", "-", 0.0, 1.0, min_abs=0.6), 0.5, np.random.default_rng(0))


def test_bad_input_names_the_field():
    with pytest.raises(ValueError, match="initial_height"):
        SIM.simulate(Configuration({"initial_velocity": 0.0}, cfg().parameters))
    with pytest.raises(ValueError, match=r"parameters\['mass'\]"):
        SIM.simulate(cfg(m=-1.0))
    with pytest.raises(ValueError, match="restitution"):
        SIM.simulate(cfg(e=1.5))
    with pytest.raises(ValueError, match="no parameter 'spin'"):
        SIM.simulate(cfg(), Intervention("spin", 1.0, 1.0))
    with pytest.raises(ValueError, match="intervention.new_value"):
        SIM.simulate(cfg(), Intervention("gravity", 1.0, 0.0))
    with pytest.raises(ValueError, match="unknown"):
        SIM.simulate(Configuration({**cfg().initial_state, "spin": 1.0}, cfg().parameters))

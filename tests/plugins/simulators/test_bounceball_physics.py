"""BounceBall physics (TraceBench Appendix A, Table 8): exact values on the event-driven solution."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.contracts import Configuration, Intervention
from harness.plugins import get
from harness.testing import SimulatorTests
from tsagent_plugins.simulators.bounceball import BounceBall, dynamics

SIM = BounceBall()


def cfg(x=5.0, v=-4.0, theta=0.0, m=2.0, el=0.8, er=0.6, c=0.0) -> Configuration:
    return Configuration({"initial_position": x, "initial_velocity": v},
                         {"inclination_angle": theta, "mass": m, "restitution_left": el,
                          "restitution_right": er, "viscous_damping": c})


def path(c: Configuration, change=None) -> dynamics.Path:
    s = c.initial_state
    return dynamics.solve(s["initial_position"], s["initial_velocity"], dynamics.Params(**c.parameters),
                          SIM.time[-1], change)


class TestBounceBallConformance(SimulatorTests):
    n_configurations = 4

    @pytest.fixture
    def simulator(self):
        return get("simulator", "bounceball")


def test_table8_grid():
    tr = SIM.simulate(cfg())
    assert tr.values.shape == (2999, 3)
    assert tr.time[0] == pytest.approx(0.02) and tr.time[-1] == pytest.approx(59.98)


def test_level_frictionless_rail_keeps_the_speed_between_impacts():
    c = cfg(v=-4.0, el=1.0, er=1.0)
    tr = SIM.simulate(c)
    np.testing.assert_allclose(np.abs(tr.values[:, 1]), 4.0, rtol=0, atol=1e-12)
    # first impact on the left wall after 5 m at 4 m/s, then 10 m per crossing
    np.testing.assert_allclose(tr.events[:4], [1.25, 3.75, 6.25, 8.75], atol=1e-11)


def test_each_wall_returns_its_restitution_times_the_incoming_speed():
    c = cfg(v=-4.0, el=0.8, er=0.6)
    p = path(c)
    assert [i.wall for i in p.impacts[:3]] == ["L", "R", "L"]
    for imp in p.impacts[:6]:
        e = 0.8 if imp.wall == "L" else 0.6
        assert imp.speed_out == pytest.approx(e * imp.speed_in, rel=1e-14)
        assert imp.impulse == pytest.approx(2.0 * (1 + e) * imp.speed_in, rel=1e-14)
    tr = SIM.simulate(c)
    v = tr.values[:, 1]
    # sampled speeds: 4, then 3.2 after the left wall, then 1.92 after the right wall
    assert np.abs(v[tr.time < 1.25]) == pytest.approx(4.0)
    between = (tr.time > 1.26) & (tr.time < p.impacts[1].time)
    np.testing.assert_allclose(v[between], 3.2, atol=1e-12)
    after = (tr.time > p.impacts[1].time) & (tr.time < p.impacts[2].time)
    np.testing.assert_allclose(v[after], -1.92, atol=1e-12)


def test_damping_on_a_level_rail_decays_the_speed_as_exp_minus_c_t_over_m():
    c = cfg(v=-3.0, m=2.0, c=0.5, el=0.9)
    tr = SIM.simulate(c)
    first = tr.events[0]
    before = tr.time < first
    np.testing.assert_allclose(tr.values[before, 1], -3.0 * np.exp(-0.5 * tr.time[before] / 2.0), rtol=1e-12)
    # after the rebound at t1 the decay restarts from 0.9 times the incoming speed
    u1 = 3.0 * math.exp(-0.25 * first)
    seg = (tr.time > first) & (tr.time < tr.events[1] if len(tr.events) > 1 else tr.time > first)
    np.testing.assert_allclose(tr.values[seg, 1], 0.9 * u1 * np.exp(-0.25 * (tr.time[seg] - first)), rtol=1e-10)


def test_velocity_is_the_time_derivative_of_position_away_from_impacts():
    c = cfg(v=6.0, theta=0.8, m=1.5, c=0.3, el=0.7, er=0.9)
    p = path(c)
    seg = np.asarray(p.segments)
    h = 1e-6
    for t in np.linspace(0.5, 50, 200):
        if any(abs(t - i.time) < 2 * h for i in p.impacts):
            continue
        j = np.searchsorted(seg[:, 0], t, side="right") - 1
        t0, x0, v0, k, a = seg[j]
        xp, _ = dynamics.state(x0, v0, k, a, t + h - t0)
        xm, _ = dynamics.state(x0, v0, k, a, t - h - t0)
        _, v = dynamics.state(x0, v0, k, a, t - t0)
        assert (xp - xm) / (2 * h) == pytest.approx(v, abs=1e-6)


def test_positions_stay_between_the_walls_and_impacts_happen_at_them():
    for c in SIM.sample_configurations(20, np.random.default_rng(3)):
        tr = SIM.simulate(c)
        x = tr.values[:, 0]
        assert x.min() >= dynamics.X_LEFT and x.max() <= dynamics.X_RIGHT
        for imp in path(c).impacts[:5]:
            seg = [s for s in path(c).segments if s[0] <= imp.time][-1]
            xi, _ = dynamics.state(seg[1], seg[2], seg[3], seg[4], imp.time - seg[0])
            assert float(xi) == pytest.approx(dynamics.X_RIGHT if imp.wall == "R" else dynamics.X_LEFT, abs=1e-9)


def test_right_force_is_the_right_wall_impulse_per_sample_interval():
    c = cfg(v=5.0, m=3.0, er=0.5)  # right wall first, after 1 s
    tr = SIM.simulate(c)
    k = int(np.argmax(tr.values[:, 2]))
    assert tr.time[k - 1] < 1.0 <= tr.time[k]
    assert tr.values[k, 2] == pytest.approx(3.0 * 1.5 * 5.0 / 0.02, rel=1e-12)
    # left-wall impacts leave no force
    left = [i.time for i in path(c).impacts if i.wall == "L"]
    kl = np.searchsorted(tr.time, left[0])
    assert tr.values[kl, 2] == 0.0


def test_a_tilted_rail_brings_the_mass_to_rest_against_the_lower_wall():
    c = cfg(x=5.0, v=0.0, theta=-0.9, m=4.0, er=0.5, c=0.0)  # right end lower: gravity pulls right
    tr = SIM.simulate(c)
    a = 9.81 * math.sin(math.radians(0.9))
    assert tr.values[-1, 0] == dynamics.X_RIGHT and tr.values[-1, 1] == 0.0
    assert tr.values[-1, 2] == pytest.approx(4.0 * a, rel=1e-12)  # the wall carries m g sin(theta)
    # an inclination intervention that reverses the tilt releases it towards the left wall
    tr2 = SIM.simulate(c, Intervention("inclination_angle", 40.0, 0.5))
    after = (tr2.time > 40.5) & (tr2.time < 50.0)  # 10 m at 0.086 m/s^2 takes 15 s
    assert (tr2.values[after, 0] < dynamics.X_RIGHT).all() and (tr2.values[after, 1] < 0).all()


def test_intervention_changes_nothing_before_t_int_and_steps_the_damping():
    c = cfg(v=-3.0, c=0.1)
    iv = Intervention("viscous_damping", 0.5, 1.0)
    tr, base = SIM.simulate(c, iv), SIM.simulate(c)
    early = tr.time < 0.5
    np.testing.assert_array_equal(tr.values[early], base.values[early])
    v_int = -3.0 * math.exp(-0.05 * 0.5)
    late = (tr.time >= 0.5) & (tr.time < tr.events[0])
    np.testing.assert_allclose(tr.values[late, 1], v_int * np.exp(-0.5 * (tr.time[late] - 0.5)), rtol=1e-12)


def test_bad_configuration_names_the_field():
    with pytest.raises(ValueError, match=r"initial_state\['initial_position'\].*between the walls"):
        SIM.simulate(cfg(x=12.0))
    with pytest.raises(ValueError, match=r"restitution_left must be in \[0, 1\]"):
        SIM.simulate(cfg(el=1.5))
    with pytest.raises(ValueError, match="no parameter 'gravity'"):
        SIM.simulate(cfg(), Intervention("gravity", 1.0, 2.0))


def test_the_radians_reading_tilts_the_rail_by_the_angle_in_radians():
    """``bounceball-radians`` (Table 10's inclination read as radians): the same configuration rests against
    the right wall with the load m g sin(0.9 rad), where BounceBall takes 0.9 degrees."""
    rad = get("simulator", "bounceball-radians")
    assert rad.inclination_unit == "rad" and SIM.inclination_unit == "deg"
    assert [p.unit for p in rad.parameters if p.name == "inclination_angle"] == ["rad"]
    assert rad.labels == SIM.labels and rad.name != SIM.name  # its pools are cached under their own name
    c = cfg(x=5.0, v=0.0, theta=-0.9, m=4.0, er=0.5, c=0.0)
    tr = rad.simulate(c)
    assert tr.values[-1, 0] == dynamics.X_RIGHT
    assert tr.values[-1, 2] == pytest.approx(4.0 * 9.81 * math.sin(0.9), rel=1e-12)
    with pytest.raises(ValueError, match="radians"):
        rad.simulate(cfg(theta=2.0))

"""MassSlide physics (TraceBench Appendix A, Table 13): exact values on the event-driven solution."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.contracts import Configuration, Intervention
from harness.plugins import get
from harness.testing import SimulatorTests
from tsagent_plugins.simulators.massslide import MassSlide

SIM = MassSlide()


def cfg(v=0.0, A=10.0, P=2.0, m=2.0, g=9.81, th=20.0, mk=0.5, ms=2.0) -> Configuration:
    return Configuration({"initial_velocity": v, "Amplitude": A, "Period": P, "mass": m},
                         {"breakaway_friction_coefficient": ms, "coulomb_friction_coefficient": mk,
                          "gravity_constant": g, "plane_inclination": th})


def drive(c: Configuration, t):
    s, p = c.initial_state, c.parameters
    return (s["mass"] * p["gravity_constant"] * math.sin(math.radians(p["plane_inclination"]))
            + s["Amplitude"] * np.sin(2 * np.pi * np.asarray(t) / s["Period"]))


def normal(c: Configuration) -> float:
    p = c.parameters
    return c.initial_state["mass"] * p["gravity_constant"] * math.cos(math.radians(p["plane_inclination"]))


class TestMassSlideConformance(SimulatorTests):
    n_configurations = 4

    @pytest.fixture
    def simulator(self):
        return get("simulator", "massslide")


def test_table13_grid():
    tr = SIM.simulate(cfg())
    assert tr.values.shape == (499, 3)
    assert tr.time[0] == pytest.approx(0.02) and tr.time[-1] == pytest.approx(9.98)


def test_a_block_at_rest_stays_at_rest_below_the_breakaway_limit():
    c = cfg(v=0.0, A=10.0, mk=0.5, ms=2.0)  # |F_d| <= 6.7 + 10 N, limit 2 * 18.4 = 36.9 N
    assert np.abs(drive(c, SIM.time)).max() < 2.0 * normal(c)
    tr = SIM.simulate(c)
    assert (tr.values[:, 0] == 0.0).all()
    np.testing.assert_allclose(tr.values[:, 1], -drive(c, tr.time), rtol=1e-12)  # static friction balances
    assert tr.events.size == 0


def test_breakaway_happens_when_the_driving_force_first_exceeds_the_limit():
    c = cfg(v=0.0, A=40.0, P=2.0, mk=0.3, ms=1.0)
    lim = normal(c)
    t = np.linspace(0, 2, 200001)
    t_b = t[np.argmax(np.abs(drive(c, t)) > lim)]
    tr = SIM.simulate(c)
    assert tr.events[0] == pytest.approx(t_b, abs=1e-4)
    assert (tr.values[tr.time < t_b - 1e-3, 0] == 0.0).all()
    assert tr.values[np.searchsorted(tr.time, t_b) + 1, 0] > 0.0


def test_normal_force_is_m_g_cos_theta_in_every_clean_sample():
    for c in SIM.sample_configurations(30, np.random.default_rng(4)):
        np.testing.assert_allclose(SIM.simulate(c).values[:, 2], normal(c), rtol=1e-13)
    c = cfg()
    iv = Intervention("plane_inclination", 4.0, 40.0)
    tr = SIM.simulate(c, iv)
    after = cfg(th=40.0)
    np.testing.assert_allclose(tr.values[tr.time < 4.0, 2], normal(c), rtol=1e-13)
    np.testing.assert_allclose(tr.values[tr.time >= 4.0, 2], normal(after), rtol=1e-13)


def test_sliding_follows_newton_with_kinetic_friction():
    c = cfg(v=3.0, A=5.0, P=1.5, m=1.5, th=30.0, mk=0.2, ms=1.5)  # slides down all along
    tr = SIM.simulate(c)
    assert (tr.values[:, 0] > 0).all()
    np.testing.assert_allclose(tr.values[:, 1], -0.2 * normal(c), rtol=1e-13)
    # dv/dt = (F_d + friction) / m: the exact velocity change over each interval
    t = tr.time
    g_sin = 9.81 * math.sin(math.radians(30.0))
    acc = g_sin - 0.2 * 9.81 * math.cos(math.radians(30.0))
    w = 2 * math.pi / 1.5
    expected = 3.0 + acc * t + 5.0 / (1.5 * w) * (1 - np.cos(w * t))
    np.testing.assert_allclose(tr.values[:, 0], expected, rtol=1e-12)


def test_a_sliding_block_sticks_when_its_velocity_reaches_zero_below_the_limit():
    c = cfg(v=2.0, A=0.0, th=10.0, mk=0.8, ms=2.0)  # friction exceeds the slope: decelerates
    a = 9.81 * (math.sin(math.radians(10.0)) - 0.8 * math.cos(math.radians(10.0)))
    t_stop = -2.0 / a
    tr = SIM.simulate(c)
    assert tr.events[0] == pytest.approx(t_stop, abs=1e-9)
    assert (tr.values[tr.time > t_stop, 0] == 0.0).all()
    np.testing.assert_allclose(tr.values[tr.time > t_stop, 1], -drive(c, tr.time[tr.time > t_stop]), rtol=1e-12)


def test_intervention_changes_nothing_before_t_int():
    c = cfg(v=3.0, A=5.0, P=1.5, m=1.5, th=30.0, mk=0.2, ms=1.5)  # slides all along
    iv = Intervention("coulomb_friction_coefficient", 5.0, 0.05)
    tr, base = SIM.simulate(c, iv), SIM.simulate(c)
    np.testing.assert_array_equal(tr.values[tr.time < 5.0], base.values[tr.time < 5.0])
    assert not np.array_equal(tr.values[tr.time >= 5.0], base.values[tr.time >= 5.0])


def test_mass_is_a_baseline_value_not_a_class():
    assert "mass" in [v.name for v in SIM.state_variables]
    assert SIM.labels == ["breakaway friction", "Coulomb friction", "gravity constant", "plane inclination",
                          "no parameter change"]
    with pytest.raises(ValueError, match="no parameter 'mass'"):
        SIM.simulate(cfg(), Intervention("mass", 1.0, 3.0))


def test_bad_configuration_names_the_field():
    with pytest.raises(ValueError, match=r"initial_state\['Period'\].*> 0"):
        SIM.simulate(cfg(P=0.0))
    with pytest.raises(ValueError, match=r"missing 'plane_inclination'"):
        SIM.simulate(Configuration(cfg().initial_state, {k: v for k, v in cfg().parameters.items()
                                                         if k != "plane_inclination"}))

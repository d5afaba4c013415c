"""BounceBall rejection rules (TraceBench Table 9), each tested on both sides."""

from __future__ import annotations

import numpy as np
import pytest

from harness.contracts import Configuration, Intervention, Trajectory
from tsagent_plugins.simulators.bounceball import BounceBall, rules

SIM = BounceBall()
T = SIM.time


def trace(reversal_at=(), speed=1.0, force_at=None) -> Trajectory:
    """Velocity +speed, flipping sign at each index in ``reversal_at``; force spikes {index: N}."""
    v = np.full(T.size, speed)
    for k in reversal_at:
        v[k:] *= -1.0
    y = np.zeros((T.size, 3))
    y[:, 1] = v
    for k, f in (force_at or {}).items():
        y[k, 2] = f
    return Trajectory(T.copy(), y)


def by_rule(parameter: str, t_int: float, target: Trajectory, baseline: Trajectory) -> dict:
    return {o.rule: o.passed for o in rules.evaluate(parameter, t_int, target, baseline)}


def test_fewer_than_20_impacts_in_both_traces():
    few, many = trace(range(100, 2000, 100)), trace(range(100, 2100, 100))  # 19 and 20 reversals
    assert rules.impact_count(few) == 19 and rules.impact_count(many) == 20
    assert by_rule("restitution_left", 30.0, few, few) == {"max_impacts": True}
    assert by_rule("restitution_left", 30.0, many, few) == {"max_impacts": False}
    assert by_rule("restitution_left", 30.0, few, many) == {"max_impacts": False}


def test_only_reversals_faster_than_0_1_m_s_count():
    assert rules.impact_count(trace(range(100, 3000, 100), speed=0.1)) == 0  # not above 0.1
    assert rules.impact_count(trace(range(100, 3000, 100), speed=0.1001)) == 29


def test_force_samples_count_when_velocity_reversals_cannot_be_computed():
    tr = trace(force_at={k: 1e-9 * 2 for k in range(10, 410, 20)})  # 20 samples above 1e-9 N
    tr.values[5, 1] = np.nan
    assert rules.impact_count(tr) == 20
    tr.values[10, 2] = 1e-9  # not above the threshold
    assert rules.impact_count(tr) == 19
    assert by_rule("mass", 30.0, tr, trace())["max_impacts"] is True


@pytest.mark.parametrize("parameter", ["mass", "viscous_damping"])
def test_mass_and_damping_need_a_reversal_before_and_after_t_int(parameter):
    forces = {100: 600.0, 2000: 600.0}
    both = trace([1000, 2000], force_at=forces)
    only_before = trace([1000], force_at=forces)
    t_int = float(T[1500])
    assert by_rule(parameter, t_int, both, both)["reversal_before_and_after"] is True
    assert by_rule(parameter, t_int, only_before, both)["reversal_before_and_after"] is False
    # a reversal exactly at the intervention sample counts as after
    assert by_rule(parameter, float(T[2000]), both, both)["reversal_before_and_after"] is True


@pytest.mark.parametrize("parameter", ["mass", "viscous_damping"])
def test_mass_and_damping_need_more_than_500_n_on_both_sides(parameter):
    t_int = float(T[1500])
    ok = trace([1000, 2000], force_at={1000: 500.001, 2000: 7000.0})
    low_before = trace([1000, 2000], force_at={1000: 500.0, 2000: 7000.0})
    none_after = trace([1000, 2000], force_at={1000: 900.0})
    assert by_rule(parameter, t_int, ok, ok)["force_before_and_after"] is True
    assert by_rule(parameter, t_int, low_before, ok)["force_before_and_after"] is False
    assert by_rule(parameter, t_int, none_after, ok)["force_before_and_after"] is False


@pytest.mark.parametrize("parameter", ["inclination_angle", "restitution_left", "restitution_right"])
def test_other_classes_only_have_the_impact_rule(parameter):
    bare = trace()
    assert by_rule(parameter, 30.0, bare, bare) == {"max_impacts": True}


def test_the_500_n_rule_rejects_a_light_slow_mass_on_the_simulator():
    def cfg(m, v):
        return Configuration({"initial_position": 5.0, "initial_velocity": v},
                             {"inclination_angle": 0.0, "mass": m, "restitution_left": 0.9,
                              "restitution_right": 0.9, "viscous_damping": 0.001})

    def forces(m, v):
        c = cfg(m, v)
        iv = Intervention("mass", 25.0, m * 1.5)
        return {o.rule: o.passed for o in SIM.rejection_rules(c, iv, SIM.simulate(c, iv), SIM.simulate(c))}

    assert forces(0.3, 3.0)["force_before_and_after"] is False  # 0.3 kg * 1.9 * 3 m/s * 50 Hz = 86 N
    assert forces(20.0, 3.0)["force_before_and_after"] is True

"""MassSlide rejection rules (TraceBench Table 14), each tested on both sides."""

from __future__ import annotations

import numpy as np

from harness.contracts import Trajectory
from tsagent_plugins.simulators.massslide import MassSlide, rules

SIM = MassSlide()
T = SIM.time


def trace(v=None, friction=None) -> Trajectory:
    y = np.zeros((T.size, 3))
    y[:, 0] = 0.0 if v is None else v
    y[:, 1] = 1.0 if friction is None else friction
    y[:, 2] = 20.0
    return Trajectory(T.copy(), y)


def outcome(parameter, t_int, target, baseline) -> dict:
    return {o.rule: o.passed for o in rules.evaluate(parameter, t_int, target, baseline)}


def test_breakaway_needs_five_consecutive_samples_with_srd_above_0_2():
    base = trace()
    f = np.ones(T.size)
    f[100:105] = 1.3  # SRD = 0.26 for five samples
    assert outcome("breakaway_friction_coefficient", 4.0, trace(friction=f), base) == {"breakaway_srd_run": True}
    f[104] = 1.0  # four only
    f[200:204] = 1.3
    assert outcome("breakaway_friction_coefficient", 4.0, trace(friction=f), base) == {"breakaway_srd_run": False}
    f = np.ones(T.size)
    f[100:110] = 11.0 / 9.0  # SRD exactly 0.2 (up to eps): not above
    assert outcome("breakaway_friction_coefficient", 4.0, trace(friction=f), base) == {"breakaway_srd_run": False}


def test_breakaway_run_may_be_in_any_channel():
    v = np.zeros(T.size)
    v[300:305] = 0.5  # SRD 2 against a resting baseline
    assert outcome("breakaway_friction_coefficient", 4.0, trace(v=v), trace()) == {"breakaway_srd_run": True}


def test_gravity_needs_five_moving_samples_before_and_after_in_one_trace():
    k = int(np.searchsorted(T, 4.0))
    v = np.zeros(T.size)
    v[k - 5:k + 5] = 0.3
    assert outcome("gravity_constant", 4.0, trace(v=v), trace()) == {"gravity_motion": True}
    assert outcome("gravity_constant", 4.0, trace(), trace(v=v)) == {"gravity_motion": True}  # baseline suffices
    v[k - 5] = 0.0  # four before
    assert outcome("gravity_constant", 4.0, trace(v=v), trace()) == {"gravity_motion": False}
    v = np.zeros(T.size)
    v[k - 5:k + 4] = 0.3  # four after
    assert outcome("gravity_constant", 4.0, trace(v=v), trace()) == {"gravity_motion": False}
    v = np.zeros(T.size)
    v[k - 5:k + 5] = np.nan  # not finite
    assert outcome("gravity_constant", 4.0, trace(v=v), trace()) == {"gravity_motion": False}


def test_gravity_falls_back_to_the_first_divergence_without_an_intervention_time():
    v = np.full(T.size, 0.3)
    f = np.ones(T.size)
    f[250:] = 2.0  # first divergence at sample 250
    assert outcome("gravity_constant", None, trace(v=v, friction=f), trace(v=v)) == {"gravity_motion": True}
    f[2:] = 2.0  # diverges at sample 2: fewer than five samples before
    assert outcome("gravity_constant", None, trace(v=v, friction=f), trace(v=v)) == {"gravity_motion": False}
    assert outcome("gravity_constant", None, trace(v=v), trace(v=v)) == {"gravity_motion": False}


def test_remaining_classes_have_no_rule():
    for p in ("coulomb_friction_coefficient", "plane_inclination"):
        assert rules.evaluate(p, 4.0, trace(), trace()) == []

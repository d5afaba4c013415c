"""The MassSlide simulator (TraceBench Appendix A, Tables 13-17)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness import (Channel, Configuration, Intervention, Parameter, RuleOutcome,
                     SimulatedTrajectory as Trajectory)
from harness import lazy_module
from tsagent_plugins.simulators.common.base import TableSimulator
from tsagent_plugins.simulators.common.reference import ReferenceTables
from tsagent_plugins.simulators.massslide import noise, sampling

if TYPE_CHECKING:
    import numpy as np

    from tsagent_plugins.simulators.massslide import dynamics, rules
else:  # physics and rules load with the first simulation: registering the simulator needs neither
    np = lazy_module("numpy")
    dynamics = lazy_module("tsagent_plugins.simulators.massslide.dynamics")
    rules = lazy_module("tsagent_plugins.simulators.massslide.rules")

#: Appendix A's system description from "a block of mass m" on.
DESCRIPTION = (
    "a block of mass m moving along an infinitely long rigid plane inclined at an angle theta under "
    "gravitational acceleration g and Coulomb friction. The coordinate axis is aligned with the plane. The "
    "block is also subject to an externally applied periodic force along the plane. The friction force acts "
    "along the plane and opposes motion. When the block is moving, that is, when v(t) is nonzero, friction "
    "is modeled as kinetic Coulomb friction. A breakaway static-friction threshold is also modeled: when the "
    "block is at rest, motion starts only if the net driving force along the plane exceeds a breakaway limit."
)


def _var(name: str, label: str, unit: str, intervenable: bool = True) -> Parameter:
    lo, _, hi = sampling.TABLE15[name]
    if not intervenable:
        return Parameter(name, label, unit, lo, hi)
    return Parameter(name, label, unit, lo, hi, min_srd=sampling.MIN_SRD, min_abs=sampling.MIN_ABS)


class MassSlide(TableSimulator):
    """A block on an inclined plane under gravity, periodic forcing and static/kinetic friction.

    Output: T = 499 samples at ``t_k = k / 50`` s (k = 1..499, Table 13), channels mass_velocity
    (m/s, positive down-slope), friction_force (N, along the same axis), normal_force (N).
    ``mass``, ``Amplitude`` and ``Period`` are baseline values of the configuration
    (``initial_state``) but not intervention classes.  Physics in :mod:`.dynamics`, observation
    model in :mod:`.noise`, Table 14 rules in :mod:`.rules`, sampling in :mod:`.sampling`.
    The prompt's channel descriptions are Appendix A's observed channels in the form of BallDrop's
    Appendix H text (the paper prints no MassSlide prompt).
    """

    name = "massslide"
    version = "3"  # 3: normal-force noise scale is the RMS (noise.NORMAL_SCALE)
    horizon = 10.0
    dt = 1.0 / 50.0
    state_variables = (
        _var("initial_velocity", "initial velocity", "m/s", False),
        _var("Amplitude", "forcing amplitude", "N", False),
        _var("Period", "forcing period", "s", False),
        _var("mass", "mass", "kg", False),
    )
    parameters = (
        _var("breakaway_friction_coefficient", "breakaway friction", "-"),
        _var("coulomb_friction_coefficient", "Coulomb friction", "-"),
        _var("gravity_constant", "gravity constant", "m/s^2"),
        _var("plane_inclination", "plane inclination", "deg"),
    )
    #: Display names in reports (Appendix A's candidate labels).
    display_names = {"breakaway_friction_coefficient": "breakaway friction",
                     "coulomb_friction_coefficient": "Coulomb friction",
                     "gravity_constant": "gravity constant", "plane_inclination": "plane inclination"}
    channels = (
        Channel("mass_velocity", "block velocity", "m/s"),
        Channel("friction_force", "friction force (N)", "N"),
        Channel("normal_force", "normal force (N)", "N"),
    )
    description = DESCRIPTION
    kappa_ref = 1.0
    reference = ReferenceTables(
        ranges=sampling.TABLE15,
        snr={"mass_velocity": ((35.64, 6.58), (23.60, 6.58)), "friction_force": ((42.03, 9.75), (29.99, 9.75)),
             "normal_force": ((59.90, 0.40), (47.86, 0.40))},
        source="TraceBench Tables 15 and 17",
    )
    marginals = sampling.MARGINALS
    checks = {
        "mass": (lambda v: v > 0, "> 0"),
        "Period": (lambda v: v > 0, "> 0"),
        "gravity_constant": (lambda v: v > 0, "> 0"),
        "plane_inclination": (lambda v: 0 <= v < 90, "in [0, 90) degrees"),
        "coulomb_friction_coefficient": (lambda v: v >= 0, ">= 0"),
        "breakaway_friction_coefficient": (lambda v: v >= 0, ">= 0"),
    }
    noise_model = noise.model(1.0 / 50.0)

    def simulate(self, config: Configuration, intervention: Intervention | None = None) -> Trajectory:
        """Event-driven exact simulation (equations in :mod:`.dynamics`).

        Returns ``time`` (T,) s, ``values`` (T, 3): velocity (m/s), friction force (N), normal
        force (N), and ``events`` (E,): stick/slip transition times (s).  Raises ValueError naming
        the field for a bad configuration or intervention.
        """
        state, params = self._values(config)
        change = self._change(intervention)
        p = dynamics.Params(mass=state["mass"], amplitude=state["Amplitude"], period=state["Period"], **params)
        time = self.time
        path = dynamics.solve(state["initial_velocity"], p, float(time[-1]), change)
        values = dynamics.sample(path, time)
        events = np.array([t for t in path.transitions if t <= time[-1]], dtype=float)
        return Trajectory(time=time, values=values, events=events)

    def rejection_rules(self, config: Configuration, intervention: Intervention,
                        target: Trajectory, baseline: Trajectory) -> list[RuleOutcome]:
        """TraceBench Table 14 (definitions in :mod:`.rules`); ``baseline`` is the no-intervention probe."""
        self._parameter(intervention.parameter)
        return rules.evaluate(intervention.parameter, float(intervention.time), target, baseline)

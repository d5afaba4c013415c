"""The BallDrop simulator (TraceBench Section 4.1, Appendix A, Tables 3-7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness import (
    Channel,
    Configuration,
    Intervention,
    Parameter,
    RuleOutcome,
    SimulatedTrajectory as Trajectory,
)
from harness import lazy_module
from tsagent_plugins.simulators.balldrop import sampling
from tsagent_plugins.simulators.common.base import SampledSimulator
from tsagent_plugins.simulators.common.reference import ReferenceTables

if TYPE_CHECKING:
    import numpy as np

    from tsagent_plugins.simulators.balldrop import dynamics, noise, rules
else:  # physics, noise and rules load with the first simulation: registering the simulator needs none of them
    np = lazy_module("numpy")
    dynamics = lazy_module("tsagent_plugins.simulators.balldrop.dynamics")
    noise = lazy_module("tsagent_plugins.simulators.balldrop.noise")
    rules = lazy_module("tsagent_plugins.simulators.balldrop.rules")

DESCRIPTION = (
    "a 1D vertical point-mass ball model under gravity. While the ball is above the ground, its motion is "
    "governed by gravity and quadratic air drag acting opposite the direction of travel, and the position "
    "evolves according to the current velocity. Ground interaction is modeled with a restitution-based "
    "hard-stop law. When the ball reaches the ground with impact speed at or above 0.5 m/s, the impact is "
    "treated as instantaneous and the post-impact speed is set by the coefficient of restitution e in [0,1]. "
    "The rebound points upward and its magnitude equals e times the pre-impact speed. When the impact speed "
    "is below the threshold, the ball does not rebound and instead enters static contact at the ground."
)


class BallDrop(SampledSimulator):
    """A point-mass ball dropped onto the ground: gravity, quadratic drag, restitution hard stop.

    Output: T = 3,999 samples at ``t_k = k / 400`` s (k = 1..3999, Table 3), channels
    Position (m), Velocity (m/s), Hard_Stop_f (contact impulse per sample interval, N s).
    Physics in :mod:`.dynamics`, observation model in :mod:`.noise`, Table 4 rules in :mod:`.rules`;
    the choices the paper leaves open (sampling, intervention time and size) are listed in
    :mod:`.sampling` ("BallDrop's choices").
    """

    name = "balldrop"
    version = "2"
    horizon = 10.0
    dt = 1.0 / 400.0
    # Sampling bounds: the retained-pool [min, max] of Table 5, for baseline and new values alike.
    state_variables = (
        Parameter("initial_height", "initial height", "m", 0.19122, 5.769),
        Parameter("initial_velocity", "initial velocity", "m/s", -9.7276, 1.1469),
    )
    parameters = (
        Parameter("restitution", "coefficient of restitution", "-", 0.377, 0.99, min_srd=0.0, min_abs=0.3),
        Parameter("mass", "mass", "kg", 0.5, 19.434, min_srd=0.1, min_abs=1.0),
        Parameter("drag_coeff", "drag coefficient", "kg/m", 0.0, 6.0, min_srd=0.0, min_abs=2.0),
        Parameter("gravity", "gravity acceleration", "m/s^2", 2.0, 10.0, min_srd=0.3, min_abs=3.0),
    )
    channels = (
        Channel("Position", "ball height", "m"),
        Channel("Velocity", "ball velocity", "m/s"),
        Channel("Hard_Stop_f", "contact impulse (N*s)", "N*s", impulse=True),
    )
    description = DESCRIPTION
    kappa_ref = 1.0
    reference = ReferenceTables(
        ranges={"initial_height": (0.19122, 3.0483, 5.769), "initial_velocity": (-9.7276, -4.8861, 1.1469),
                "mass": (0.5, 3.2, 19.434), "drag_coeff": (0.0, 0.5, 6.0), "restitution": (0.377, 0.93, 0.99),
                "gravity": (2.0, 5.0, 10.0)},
        snr={"Position": ((42.41, 3.19), (30.58, 3.14)), "Velocity": ((36.58, 2.60), (24.54, 2.60)),
             "Hard_Stop_f": ((21.07, 2.55), (9.03, 2.55))},
        source="TraceBench Tables 5 and 7",
    )

    # Baselines: a Latin hypercube over the 2 state + 4 parameter coordinates (in that order), each
    # mapped through the variable's distribution in :data:`.sampling.DISTRIBUTIONS`.
    marginals = sampling.DISTRIBUTIONS
    checks = {
        "restitution": (lambda v: 0.0 <= v <= 1.0, "in [0, 1]"),
        "mass": (lambda v: v > 0.0, "> 0"),
        "drag_coeff": (lambda v: v >= 0.0, ">= 0"),
        "gravity": (lambda v: v > 0.0, "> 0"),
        "initial_height": (lambda v: v >= 0.0, ">= 0"),
    }

    def admissible_sides(self, p: Parameter, old: float) -> list[tuple[float, float]]:
        """BallDrop's ranges are non-negative: the closed-form sides of :func:`.sampling.admissible_sides`."""
        return sampling.admissible_sides(p, old)

    # ------------------------------------------------------------------ physics
    def simulate(self, config: Configuration, intervention: Intervention | None = None) -> Trajectory:
        """Exact piecewise-analytic simulation (Appendix A; equations and events in :mod:`.dynamics`).

        Returns ``time`` (T,) s, ``values`` (T, 3): height (m), velocity (m/s), contact impulse per
        sample interval (N s), and ``events`` (E,): every ground impact time (s) up to the last
        sample, including the one that brings the ball to rest.  Raises ValueError naming the
        field for a missing/unknown/non-physical configuration value or a bad intervention.
        """
        state, params = self._values(config)
        change = self._change(intervention)
        time = self.time
        path = dynamics.solve(state["initial_height"], state["initial_velocity"],
                              dynamics.Params(**params), float(time[-1]), change)
        values = dynamics.sample(path, time, self.dt)
        events = np.array([i.time for i in path.impacts if i.time <= time[-1]], dtype=float)
        return Trajectory(time=time, values=values, events=events)

    # ------------------------------------------------------------------ observation model
    def observe(self, clean: Trajectory, kappa: float, seed: int) -> np.ndarray:
        """One draw of ``p_kappa(. | clean)`` (Section 4.1, Table 6; forms in :mod:`.noise`), shape (T, 3).

        Depends only on ``(clean.time, clean.values, clean.events, kappa, seed)``; ``kappa = 0``
        returns a copy of the clean values.  Raises ValueError for ``kappa < 0`` or ``seed < 0``.
        """
        return noise.observe(clean.time, clean.values, clean.events, float(kappa), int(seed))

    def noise_power(self, clean: Trajectory, kappa: float, n_seeds: int) -> np.ndarray:
        """Exact per-sample mean squared corruption over seeds ``0..n_seeds-1``, shape (T, 3).

        Equals the contract's naive definition up to floating-point rounding; see :func:`.noise.noise_power`.
        """
        return noise.noise_power(clean.time, clean.values, clean.events, float(kappa), int(n_seeds))

    # ------------------------------------------------------------------ Table 4
    def rejection_rules(self, config: Configuration, intervention: Intervention,
                        target: Trajectory, baseline: Trajectory) -> list[RuleOutcome]:
        """TraceBench Table 4 (definitions in :mod:`.rules`); ``baseline`` is the no-intervention probe.

        Returns one :class:`RuleOutcome` per applicable rule, in this order:
        ``apex_after_divergence``, ``max_rebounds`` (every parameter),
        ``rebound_before_and_after`` (drag, mass, restitution), ``drag_dtw_or_terminal`` (drag).
        """
        self._parameter(intervention.parameter)
        state, params = self._values(config)
        new = dict(params)
        new[intervention.parameter] = float(intervention.new_value)
        return rules.evaluate(intervention.parameter, state, new, target, baseline)

    def events_from_clean(self, time: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Ground impacts read off sampled clean values (for released files without event times).

        An impact is placed at the sample time ``t_k`` where the velocity goes from negative at
        ``t_{k-1}`` to non-negative at ``t_k`` with the ball on the ground (height <= 1 mm), or
        at ``t_1`` when the trace starts on the ground with a contact impulse.  Exact impact
        times lie within one sample interval before; shape (E,), seconds."""
        t = np.asarray(time, float)
        y = np.asarray(values, float)
        if y.ndim != 2 or y.shape[1] != 3 or y.shape[0] != t.shape[0]:
            raise ValueError(f"BallDrop values must have shape (T, 3) matching time (T,), got {y.shape}")
        k = np.flatnonzero((y[:-1, 1] < 0.0) & (y[1:, 1] >= 0.0) & (y[1:, 0] <= 1e-3)) + 1
        if y.shape[0] and y[0, 0] <= 1e-3 and y[0, 1] >= 0.0 and y[0, 2] > 0.0:
            k = np.concatenate([[0], k])
        return t[k]

    def early_rejection(self, config: Configuration, intervention: Intervention,
                        baseline: Trajectory) -> RuleOutcome | None:
        """Table 4's apex rule decided before the target is simulated (:meth:`Simulator.early_rejection`).

        Every sample of the target from the first one at or after ``t_int`` (index ``i0``) lies
        at most ``H = x + v^2 / (2 g')`` high, with ``(x, v)`` the exact state at ``t_int`` and
        ``g'`` the gravity in force after it: after ``t_int`` the parameters are constant, and
        drag (``c >= 0``) and impacts (``e <= 1``) only lose energy.  The first divergence is at
        or after ``i0`` (the traces coincide before ``t_int``), so every apex the rule can see
        is at most ``max(H, x[i0 - 1])`` in the target and at most the highest apex of the
        baseline from ``i0`` on.  When all of these are <= 0.1 m the rule fails (it is the first
        rule :meth:`rejection_rules` reports), and the outcome says so; otherwise None.
        """
        self._parameter(intervention.parameter)
        state, params = self._values(config)
        time = np.asarray(baseline.time, float)
        i0 = int(np.searchsorted(time, intervention.time - 1e-9, side="left"))
        if i0 >= time.size:
            return None  # never observable: the full rules decide
        path = dynamics.solve(state["initial_height"], state["initial_velocity"], dynamics.Params(**params),
                              float(intervention.time))
        x, v = dynamics.sample(path, np.array([float(intervention.time)]), self.dt)[0, :2]
        g_new = float(intervention.new_value) if intervention.parameter == "gravity" else params["gravity"]
        bound = max(0.0, float(x)) + float(v) ** 2 / (2.0 * g_new)
        y = np.asarray(baseline.values, float)
        before = float(y[i0 - 1, 0]) if i0 > 0 else state["initial_height"]
        vb = y[:, 1]
        i = np.arange(max(i0, 1), vb.size)
        apex = i[(vb[i - 1] > 0.0) & (vb[i] <= 0.0)]
        base = float(np.maximum(y[apex - 1, 0], y[apex, 0]).max()) if apex.size else 0.0
        top = max(bound, before, base)
        if top * (1.0 + 1e-9) + 1e-12 <= rules.APEX_MIN:
            return RuleOutcome("apex_after_divergence", False,
                               f"decided before simulation: every apex after t_int is <= {top:.4f} m "
                               f"(need > {rules.APEX_MIN} m in one)")
        return None

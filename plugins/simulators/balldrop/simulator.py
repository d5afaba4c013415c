"""The BallDrop simulator (TraceBench Section 4.1, Appendix A, Tables 3-7)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from harness import (
    Channel,
    Configuration,
    Intervention,
    Parameter,
    RuleOutcome,
    Simulator,
    SimulatedTrajectory as Trajectory,
)
from tsagent_plugins.simulators.balldrop import dynamics, noise, rules, sampling

DESCRIPTION = (
    "a 1D vertical point-mass ball model under gravity. While the ball is above the ground, its motion is "
    "governed by gravity and quadratic air drag acting opposite the direction of travel, and the position "
    "evolves according to the current velocity. Ground interaction is modeled with a restitution-based "
    "hard-stop law. When the ball reaches the ground with impact speed at or above 0.5 m/s, the impact is "
    "treated as instantaneous and the post-impact speed is set by the coefficient of restitution e in [0,1]. "
    "The rebound points upward and its magnitude equals e times the pre-impact speed. When the impact speed "
    "is below the threshold, the ball does not rebound and instead enters static contact at the ground."
)


class BallDrop(Simulator):
    """A point-mass ball dropped onto the ground: gravity, quadratic drag, restitution hard stop.

    Output: T = 3,999 samples at ``t_k = k / 400`` s (k = 1..3999, Table 3), channels
    Position (m), Velocity (m/s), Hard_Stop_f (contact impulse per sample interval, N s).
    Physics in :mod:`.dynamics`, observation model in :mod:`.noise`, Table 4 rules in :mod:`.rules`.
    """

    name = "balldrop"
    version = "1"
    horizon = 10.0
    dt = 1.0 / 400.0
    state_variables = (
        Parameter("initial_height", "initial height", "m", 0.0, 6.0),
        Parameter("initial_velocity", "initial velocity", "m/s", -10.0, 2.0),
    )
    parameters = (
        Parameter("restitution", "coefficient of restitution", "-", 0.15, 1.0, min_srd=0.0, min_abs=0.3),
        Parameter("mass", "mass", "kg", 0.5, 20.0, min_srd=0.1, min_abs=1.0),
        Parameter("drag_coeff", "drag coefficient", "kg/m", 0.0, 30.0, min_srd=0.0, min_abs=2.0),
        Parameter("gravity", "gravity acceleration", "m/s^2", 2.0, 15.0, min_srd=0.3, min_abs=3.0),
    )
    channels = (
        Channel("Position", "ball height", "m"),
        Channel("Velocity", "ball velocity", "m/s"),
        Channel("Hard_Stop_f", "contact impulse (N*s)", "N*s", impulse=True),
    )
    description = DESCRIPTION
    kappa_ref = 1.0

    # ------------------------------------------------------------------ grid
    @property
    def n_samples(self) -> int:
        """Number of rows T: samples strictly inside (0, horizon) (3,999)."""
        return int(round(self.horizon / self.dt)) - 1

    @property
    def time(self) -> np.ndarray:
        """Sample times ``t_k = k dt``, k = 1..T, shape (T,), seconds."""
        return np.arange(1, self.n_samples + 1) * self.dt

    # ------------------------------------------------------------------ sampling
    def sample_configurations(self, n: int, rng: np.random.Generator) -> list[Configuration]:
        """``n`` baselines by Latin hypercube over the 2 state + 4 parameter ranges (in that order)."""
        specs = self.state_variables + self.parameters
        pts = sampling.latin_hypercube([(p.low, p.high) for p in specs], n, rng)
        ns = len(self.state_variables)
        return [
            Configuration(
                initial_state={p.name: float(r[i]) for i, p in enumerate(self.state_variables)},
                parameters={p.name: float(r[ns + i]) for i, p in enumerate(self.parameters)},
            )
            for r in pts
        ]

    def sample_intervention(self, config: Configuration, parameter: str, rng: np.random.Generator) -> Intervention:
        """``t_int ~ U[0.2, 0.8] * horizon``; new value per :func:`.sampling.new_value`.

        Raises ValueError for an unknown parameter or when no admissible value exists.
        """
        spec = self._parameter(parameter)
        old = self._values(config)[1][parameter]
        lo, hi = sampling.T_INT_RANGE
        t_int = float(rng.uniform(lo, hi)) * self.horizon
        return Intervention(parameter, t_int, sampling.new_value(spec, old, rng))

    # ------------------------------------------------------------------ physics
    def simulate(self, config: Configuration, intervention: Intervention | None = None) -> Trajectory:
        """Exact piecewise-analytic simulation (Appendix A; equations and events in :mod:`.dynamics`).

        Returns ``time`` (T,) s, ``values`` (T, 3): height (m), velocity (m/s), contact impulse per
        sample interval (N s), and ``events`` (E,): every ground impact time (s) up to the last
        sample, including the one that brings the ball to rest.  Raises ValueError naming the
        field for a missing/unknown/non-physical configuration value or a bad intervention.
        """
        state, params = self._values(config)
        change = None
        if intervention is not None:
            self._parameter(intervention.parameter)
            self._check_value(intervention.parameter, intervention.new_value, "intervention.new_value")
            if not math.isfinite(intervention.time) or intervention.time < 0:
                raise ValueError(f"intervention.time must be a finite time >= 0 s, got {intervention.time}")
            change = (intervention.parameter, float(intervention.time), float(intervention.new_value))
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

    # ------------------------------------------------------------------ validation
    def _parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.parameters)
        raise ValueError(f"BallDrop has no parameter {name!r} (known: {known})")

    @staticmethod
    def _check_value(name: str, value: float, where: str) -> None:
        ok = math.isfinite(value) and {
            "restitution": 0.0 <= value <= 1.0,
            "mass": value > 0.0,
            "drag_coeff": value >= 0.0,
            "gravity": value > 0.0,
            "initial_height": value >= 0.0,
            "initial_velocity": True,
        }[name]
        if not ok:
            need = {"restitution": "in [0, 1]", "mass": "> 0", "drag_coeff": ">= 0", "gravity": "> 0",
                    "initial_height": ">= 0", "initial_velocity": "finite"}[name]
            raise ValueError(f"{where}: {name} must be {need}, got {value!r}")

    def _values(self, config: Configuration) -> tuple[dict[str, float], dict[str, float]]:
        """Validated ``(initial_state, parameters)`` as float dicts; errors name the field."""
        out = []
        for attr, specs in (("initial_state", self.state_variables), ("parameters", self.parameters)):
            given: Mapping[str, float] = getattr(config, attr)
            vals = {}
            for p in specs:
                if p.name not in given:
                    raise ValueError(f"configuration.{attr}: missing {p.name!r}")
                try:
                    v = float(given[p.name])
                except (TypeError, ValueError):
                    raise ValueError(f"configuration.{attr}[{p.name!r}]: not a number: {given[p.name]!r}") from None
                self._check_value(p.name, v, f"configuration.{attr}[{p.name!r}]")
                vals[p.name] = v
            extra = set(given) - {p.name for p in specs}
            if extra:
                raise ValueError(f"configuration.{attr}: unknown field(s) {sorted(extra)}")
            out.append(vals)
        return out[0], out[1]

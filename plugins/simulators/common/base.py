"""Simulator plumbing shared by the simulators: time grid, validation, sampling, and field noise.

:class:`SampledSimulator` (all three) holds the uniform time grid, Latin-hypercube baselines mapped
through per-variable marginals, intervention draws (Section 3.3) and field validation;
:class:`TableSimulator` (BounceBall, MassSlide) adds an observation model given as a :class:`FieldNoise`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Mapping, Protocol

from harness import Configuration, Intervention, Parameter, Simulator, SimulatedTrajectory as Trajectory, lazy_module
from tsagent_plugins.simulators.common import sampling
from tsagent_plugins.simulators.common.noise import FieldNoise
from tsagent_plugins.simulators.common.reference import ReferenceTables

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")


class Quantiles(Protocol):
    """A sampling law given by its quantile function (``Marginal``, BallDrop's ``Distribution``, ...)."""

    def ppf(self, u: np.ndarray) -> np.ndarray: ...


class SampledSimulator(Simulator):
    """A simulator on a uniform grid whose baselines and interventions are drawn per Section 3.3.

    Subclasses set the :class:`Simulator` attributes plus ``marginals`` (name -> a law with ``ppf``,
    for every state variable and parameter) and ``checks`` (name -> (predicate, "must be ...")) for
    physical validity, and may override :meth:`admissible_sides` (default: bisection on the SRD
    bound, :func:`.sampling.admissible_sides`).
    """

    marginals: Mapping[str, Quantiles]
    checks: Mapping[str, tuple[Callable[[float], bool], str]] = {}
    #: published retained-pool summaries (ranges, SNR at both noise levels), read by the pool summary
    reference: ReferenceTables | None = None

    # ------------------------------------------------------------------ grid
    @property
    def n_samples(self) -> int:
        """Number of rows T: samples strictly inside (0, horizon)."""
        return int(round(self.horizon / self.dt)) - 1

    @property
    def time(self) -> np.ndarray:
        """Sample times ``t_k = k dt``, k = 1..T, shape (T,), seconds."""
        return np.arange(1, self.n_samples + 1) * self.dt

    # ------------------------------------------------------------------ sampling
    def sample_configurations(self, n: int, rng: np.random.Generator) -> list[Configuration]:
        """``n`` baselines: a Latin hypercube mapped through each variable's marginal (state, then parameters)."""
        specs = self.state_variables + self.parameters
        units = sampling.latin_hypercube_units(len(specs), n, rng)
        cols = [self.marginals[p.name].ppf(units[:, i]) for i, p in enumerate(specs)]
        ns = len(self.state_variables)
        return [
            Configuration(
                initial_state={p.name: float(cols[i][j]) for i, p in enumerate(self.state_variables)},
                parameters={p.name: float(cols[ns + i][j]) for i, p in enumerate(self.parameters)},
            )
            for j in range(n)
        ]

    def sample_intervention(self, config: Configuration, parameter: str, rng: np.random.Generator) -> Intervention:
        """``t_int ~ U[0.2, 0.8] * horizon``; new value per :func:`.sampling.new_value` (Section 3.3).

        Raises ValueError for an unknown parameter or when no admissible value exists.
        """
        spec = self._parameter(parameter)
        old = self._values(config)[1][parameter]
        t_int = sampling.intervention_time(self.horizon, rng)
        return Intervention(parameter, t_int, sampling.new_value(spec, old, rng, self.admissible_sides(spec, old)))

    def admissible_sides(self, p: Parameter, old: float) -> list[tuple[float, float]]:
        """Intervals of admissible new values of ``p`` above and below ``old`` (empty ones left out)."""
        return sampling.admissible_sides(p, old)

    # ------------------------------------------------------------------ validation
    def _parameter(self, name: str) -> Parameter:
        for p in self.parameters:
            if p.name == name:
                return p
        known = ", ".join(p.name for p in self.parameters)
        raise ValueError(f"{type(self).__name__} has no parameter {name!r} (known: {known})")

    def _check_value(self, name: str, value: float, where: str) -> None:
        ok, need = self.checks.get(name, (lambda v: True, "finite"))
        if not (math.isfinite(value) and ok(value)):
            raise ValueError(f"{where}: {name} must be {need}, got {value!r}")

    def _values(self, config: Configuration) -> tuple[dict[str, float], dict[str, float]]:
        """Validated ``(initial_state, parameters)`` as float dicts; errors name the field."""
        return validated_values(config, self.state_variables, self.parameters, self._check_value)

    def _change(self, intervention: Intervention | None) -> tuple[str, float, float] | None:
        """Validated ``(parameter, t_int, new value)`` or None."""
        if intervention is None:
            return None
        self._parameter(intervention.parameter)
        self._check_value(intervention.parameter, intervention.new_value, "intervention.new_value")
        if not math.isfinite(intervention.time) or intervention.time < 0:
            raise ValueError(f"intervention.time must be a finite time >= 0 s, got {intervention.time}")
        return intervention.parameter, float(intervention.time), float(intervention.new_value)


class TableSimulator(SampledSimulator):
    """A :class:`SampledSimulator` whose observation model is a :class:`FieldNoise` (``noise_model``);
    subclasses implement :meth:`simulate` and :meth:`rejection_rules`."""

    noise_model: FieldNoise

    # ------------------------------------------------------------------ noise
    def observe(self, clean: Trajectory, kappa: float, seed: int) -> np.ndarray:
        """One draw of ``p_kappa(. | clean)`` (forms in :mod:`tsagent_plugins.simulators.common.noise`), shape (T, C).

        Depends only on ``(clean, kappa, seed)``; ``kappa = 0`` returns a copy of the clean values.
        Raises ValueError for ``kappa < 0`` or ``seed < 0``.
        """
        return self.noise_model.observe(clean.time, clean.values, clean.events, float(kappa), int(seed))

    def noise_power(self, clean: Trajectory, kappa: float, n_seeds: int) -> np.ndarray:
        """Exact per-sample mean squared corruption over seeds ``0..n_seeds-1``, shape (T, C)."""
        return self.noise_model.noise_power(clean.time, clean.values, clean.events, float(kappa), int(n_seeds))


def validated_values(config: Configuration, state_variables, parameters,
                     check: Callable[[str, float, str], None]) -> tuple[dict[str, float], dict[str, float]]:
    """``(initial_state, parameters)`` of ``config`` as float dicts, every declared field present, numeric
    and accepted by ``check(name, value, where)``, no unknown field; ValueError naming the field otherwise."""
    out = []
    for attr, specs in (("initial_state", state_variables), ("parameters", parameters)):
        given: Mapping[str, float] = getattr(config, attr)
        vals = {}
        for p in specs:
            if p.name not in given:
                raise ValueError(f"configuration.{attr}: missing {p.name!r}")
            try:
                v = float(given[p.name])
            except (TypeError, ValueError):
                raise ValueError(f"configuration.{attr}[{p.name!r}]: not a number: {given[p.name]!r}") from None
            check(p.name, v, f"configuration.{attr}[{p.name!r}]")
            vals[p.name] = v
        extra = set(given) - {p.name for p in specs}
        if extra:
            raise ValueError(f"configuration.{attr}: unknown field(s) {sorted(extra)}")
        out.append(vals)
    return out[0], out[1]

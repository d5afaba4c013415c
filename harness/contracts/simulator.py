"""Simulator contract: initial configuration and intervention -> trajectory -> noisy observation.

A simulator turns an initial configuration (initial state ``x0`` and parameter
vector ``theta``) and an optional intervention into a clean trajectory, and
defines the observation model ``p_kappa`` that corrupts it.  Everything about
physics lives in the plugin; the harness only sees this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from harness.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # loading the plugins, which subclass these classes, needs none of numpy

NO_CHANGE = "no parameter change"


@dataclass(frozen=True)
class Parameter:
    """One sampled quantity.

    ``name`` is the machine name (``"restitution"``), ``label`` the agent-facing
    class label (``"coefficient of restitution"``), ``low``/``high`` the generator
    range in ``unit``.  For intervenable parameters, ``min_srd`` and ``min_abs`` are
    how far a new value must lie from the old one: ``|a-b| >= min_abs`` and
    ``2|a-b|/(|a|+|b|+eps) >= min_srd``.
    """

    name: str
    label: str
    unit: str
    low: float
    high: float
    min_srd: float = 0.0
    min_abs: float = 0.0


@dataclass(frozen=True)
class Channel:
    """One observed column.  ``impulse`` marks an impulse/force channel (e.g. a contact
    force that is zero except at impacts): it is compared only near impacts in the
    solvability filter, and the classical baselines divide it by the trajectory's
    maximum absolute value."""

    name: str  # release column name, e.g. "Position"
    description: str  # prompt text, e.g. "ball height"
    unit: str
    impulse: bool = False


@dataclass(frozen=True)
class Configuration:
    """An initial configuration: initial state and baseline parameters."""

    initial_state: Mapping[str, float]
    parameters: Mapping[str, float]


@dataclass(frozen=True)
class Intervention:
    """A single step change of ``parameter`` to ``new_value`` at ``time`` seconds."""

    parameter: str
    time: float
    new_value: float


@dataclass
class Trajectory:
    """A clean simulated trajectory.

    ``time``: shape (T,), seconds, ``t_k = k*dt`` for k = 1..T, every ``t_k`` before the horizon
    (``T = round(horizon / dt) - 1``: ``np.arange(1, round(horizon / dt)) * dt``; the first sample one step in).
    ``values``: shape (T, C), channels in :attr:`Simulator.channels` order.
    ``events``: shape (E,), times in seconds of impacts/transitions (used for
    impulse-channel comparison windows), possibly empty.
    """

    time: np.ndarray
    values: np.ndarray
    events: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class RuleOutcome:
    """Result of one simulator-specific rejection rule (a physical-plausibility check of one sample)."""

    rule: str
    passed: bool
    detail: str = ""


class Simulator(ABC):
    """Contract every simulator plugin implements.

    Class attributes to set: ``name`` (registry key, lower-case), ``version``
    (generator version: bump when outputs change; keys the pool cache),
    ``horizon`` and ``dt`` (seconds), ``state_variables`` and ``parameters``
    (:class:`Parameter` tuples; every parameter is an intervention target),
    ``channels`` (:class:`Channel` tuple), ``description`` (the domain-context
    paragraph of the prompt), ``kappa_ref`` (reference noise scale).  Optional:
    :meth:`early_rejection` (a cheap rule verdict before simulating) and
    :meth:`events_from_clean` (event times of a trajectory known only by its samples).
    """

    name: str
    version: str
    horizon: float
    dt: float
    state_variables: tuple[Parameter, ...]
    parameters: tuple[Parameter, ...]
    channels: tuple[Channel, ...]
    description: str
    kappa_ref: float = 1.0

    @property
    def labels(self) -> list[str]:
        """Class labels in prompt order: parameter labels, then ``no parameter change``."""
        return [p.label for p in self.parameters] + [NO_CHANGE]

    @abstractmethod
    def sample_configurations(self, n: int, rng: np.random.Generator) -> list[Configuration]:
        """Draw ``n`` initial configurations within the generator ranges."""

    @abstractmethod
    def sample_intervention(
        self, config: Configuration, parameter: str, rng: np.random.Generator
    ) -> Intervention:
        """Draw an intervention on ``parameter``: time and a new value far enough from the old."""

    @abstractmethod
    def simulate(self, config: Configuration, intervention: Intervention | None = None) -> Trajectory:
        """Simulate the clean trajectory.  ``intervention=None`` is the no-intervention run."""

    @abstractmethod
    def observe(self, clean: Trajectory, kappa: float, seed: int) -> np.ndarray:
        """Sample ``p_kappa(. | y)``: a noisy copy of ``clean.values``, shape (T, C).

        Must depend only on ``(clean, kappa, seed)``; ``kappa=0`` returns the clean values.
        """

    def noise_power(self, clean: Trajectory, kappa: float, n_seeds: int) -> np.ndarray:
        """Per-sample mean squared corruption over noise seeds ``0..n_seeds-1``.

        Returns shape (T, C): ``mean_s (observe(clean, kappa, s) - clean.values)**2``.
        This direct default is the definition; simulators may override it with a
        faster computation that must agree with it (the noise sigma estimate).
        """
        acc = np.zeros_like(clean.values, dtype=float)
        for s in range(n_seeds):
            acc += (self.observe(clean, kappa, s) - clean.values) ** 2
        return acc / n_seeds

    def rejection_rules(
        self, config: Configuration, intervention: Intervention, target: Trajectory, baseline: Trajectory
    ) -> list[RuleOutcome]:
        """Simulator-specific rejection rules; ``baseline`` is the no-intervention probe."""
        return []

    def events_from_clean(self, time: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Optional: event times (s) recovered from a clean trajectory given only as samples
        (``time`` (T,), ``values`` (T, C)), e.g. a released dataset's Parquet file without the
        simulator's exact event times.  Used where the observation model needs ``events``.
        Default: no events (shape (0,))."""
        return np.zeros(0)

    def early_rejection(
        self, config: Configuration, intervention: Intervention, baseline: Trajectory
    ) -> RuleOutcome | None:
        """Optional, for speed: a rule verdict reached *before* the target is simulated.

        Return a failing :class:`RuleOutcome` only when :meth:`rejection_rules` would certainly
        fail that same rule, and it is the first failing rule it would report, for this
        candidate (the filter then skips the target simulation; the decision and the recorded
        rejecting rule are unchanged).  Return None when unsure.  Default: always None.
        ``baseline`` is the no-intervention probe ``simulate(config)``.
        """
        return None

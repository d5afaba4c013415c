"""BounceBall rejection rules (TraceBench Table 9).

All interventions
    Each of the intervention (target) and baseline traces must contain fewer than
    :data:`MAX_IMPACTS` (20) impacts.  Impacts are counted from velocity reversals of the sampled
    velocity channel -- consecutive samples of opposite sign -- whose incoming speed (the absolute
    velocity of the sample before the reversal) exceeds :data:`REVERSAL_SPEED` (0.1 m/s).  When
    the velocity channel is not finite (reversals cannot be computed) the samples with absolute
    right-contact force above :data:`FORCE_EPS` (1e-9 N) are counted instead.
Mass and viscous damping
    In the target trace a qualifying velocity reversal must occur both before and after the
    intervention time (sample time ``< t_int`` / ``>= t_int``; a reversal is placed at the sample
    after the sign change), and the right-contact force must exceed :data:`FORCE_MIN` (500 N) in
    at least one sample on each side of ``t_int``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness import RuleOutcome, SimulatedTrajectory as Trajectory, lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

MAX_IMPACTS = 20
REVERSAL_SPEED = 0.1
FORCE_EPS = 1e-9
FORCE_MIN = 500.0
POSITION, VELOCITY, FORCE = 0, 1, 2


def reversals(traj: Trajectory) -> np.ndarray | None:
    """Sample indices ``k`` (>= 1) with ``v[k-1] v[k] < 0`` and ``|v[k-1]| > 0.1`` m/s; None when the
    velocity channel is not finite."""
    v = np.asarray(traj.values[:, VELOCITY], dtype=float)
    if not np.isfinite(v).all():
        return None
    k = np.nonzero((v[:-1] * v[1:] < 0) & (np.abs(v[:-1]) > REVERSAL_SPEED))[0] + 1
    return k


def impact_count(traj: Trajectory) -> int:
    """Impacts of a trace per Table 9 (velocity reversals, else force samples above 1e-9 N)."""
    k = reversals(traj)
    if k is None:
        return int(np.count_nonzero(np.abs(traj.values[:, FORCE]) > FORCE_EPS))
    return int(k.size)


def evaluate(parameter: str, t_int: float, target: Trajectory, baseline: Trajectory) -> list[RuleOutcome]:
    """Table 9 outcomes: ``max_impacts`` (every parameter); ``reversal_before_and_after`` and
    ``force_before_and_after`` (mass, viscous_damping)."""
    n_t, n_b = impact_count(target), impact_count(baseline)
    out = [RuleOutcome("max_impacts", n_t < MAX_IMPACTS and n_b < MAX_IMPACTS,
                       f"impacts: target {n_t}, baseline {n_b} (need < {MAX_IMPACTS})")]
    if parameter in ("mass", "viscous_damping"):
        t = np.asarray(target.time, dtype=float)
        k = reversals(target)
        k = np.zeros(0, dtype=int) if k is None else k
        before, after = int(np.sum(t[k] < t_int)), int(np.sum(t[k] >= t_int))
        out.append(RuleOutcome("reversal_before_and_after", before > 0 and after > 0,
                               f"qualifying reversals before/after t_int: {before}/{after}"))
        f = np.abs(np.asarray(target.values[:, FORCE], dtype=float))
        fb = float(f[t < t_int].max(initial=0.0))
        fa = float(f[t >= t_int].max(initial=0.0))
        out.append(RuleOutcome("force_before_and_after", fb > FORCE_MIN and fa > FORCE_MIN,
                               f"peak right-contact force before/after t_int: {fb:.1f}/{fa:.1f} N "
                               f"(need > {FORCE_MIN:g} N on both sides)"))
    return out

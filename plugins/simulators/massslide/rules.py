"""MassSlide rejection rules (TraceBench Table 14).

Breakaway friction
    At least one common non-time channel must have symmetric relative difference
    ``2|y - y0| / (|y| + |y0| + eps_SRD) > 0.2`` (``y`` target, ``y0`` baseline,
    ``eps_SRD = 1e-12``) for :data:`RUN` (5) consecutive samples.
Gravity
    At least one of the target and baseline traces must contain :data:`RUN` (5) finite, non-zero
    velocity samples before and five after the reference change time: the intervention time (a
    sample at ``t < t_int`` is before, ``t >= t_int`` after), or, when it is unavailable, the
    earliest sample where the two traces differ.
Remaining classes
    No simulator-specific rule.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from harness import RuleOutcome, SimulatedTrajectory as Trajectory, lazy_module
from tsagent_plugins.simulators.common.sampling import SRD_EPS

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

SRD_MIN = 0.2
RUN = 5
VELOCITY = 0


def longest_srd_run(target: Trajectory, baseline: Trajectory) -> tuple[int, int]:
    """Longest run of consecutive samples with SRD > 0.2, and the channel it is in."""
    y, y0 = np.asarray(target.values, dtype=float), np.asarray(baseline.values, dtype=float)
    srd = 2.0 * np.abs(y - y0) / (np.abs(y) + np.abs(y0) + SRD_EPS)
    best, best_c = 0, 0
    for c in range(y.shape[1]):
        run = longest = 0
        for hit in srd[:, c] > SRD_MIN:
            run = run + 1 if hit else 0
            longest = max(longest, run)
        if longest > best:
            best, best_c = longest, c
    return best, best_c


def first_divergence_time(target: Trajectory, baseline: Trajectory) -> float | None:
    """Time (s) of the first sample where the traces differ in any channel; None if identical."""
    diff = np.any(np.asarray(target.values) != np.asarray(baseline.values), axis=1)
    k = np.nonzero(diff)[0]
    return float(target.time[k[0]]) if k.size else None


def moving_samples(traj: Trajectory, t_ref: float) -> tuple[int, int]:
    """Finite non-zero velocity samples before (t < t_ref) and after (t >= t_ref)."""
    v = np.asarray(traj.values[:, VELOCITY], dtype=float)
    ok = np.isfinite(v) & (v != 0.0)
    t = np.asarray(traj.time, dtype=float)
    return int(np.sum(ok & (t < t_ref))), int(np.sum(ok & (t >= t_ref)))


def evaluate(parameter: str, t_int: float | None, target: Trajectory, baseline: Trajectory) -> list[RuleOutcome]:
    """Table 14 outcomes: ``breakaway_srd_run`` (breakaway friction), ``gravity_motion`` (gravity)."""
    out = []
    if parameter == "breakaway_friction_coefficient":
        n, c = longest_srd_run(target, baseline)
        out.append(RuleOutcome("breakaway_srd_run", n >= RUN,
                               f"longest run with SRD > {SRD_MIN}: {n} samples in channel {c} (need {RUN})"))
    elif parameter == "gravity_constant":
        t_ref = t_int if t_int is not None and math.isfinite(t_int) else first_divergence_time(target, baseline)
        if t_ref is None:
            out.append(RuleOutcome("gravity_motion", False, "no reference change time (traces identical)"))
        else:
            counts = {"target": moving_samples(target, t_ref), "baseline": moving_samples(baseline, t_ref)}
            ok = any(b >= RUN and a >= RUN for b, a in counts.values())
            out.append(RuleOutcome("gravity_motion", ok, "moving samples before/after t_ref: " + ", ".join(
                f"{k} {b}/{a}" for k, (b, a) in counts.items()) + f" (need {RUN}/{RUN} in one)"))
    return out

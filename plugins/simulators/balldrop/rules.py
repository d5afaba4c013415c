"""BallDrop simulator-specific rejection rules (TraceBench Table 4, Section 3.4 case iii).

All rules read the sampled clean traces (target = with the intervention, baseline = the
no-intervention probe), channels Position x (m), Velocity v (m/s), Hard_Stop_f J (N s).

First detected divergence ``i_div``
    The first sample where target and baseline differ by more than
    ``DIVERGENCE_RTOL * max(1, peak |value| of that channel in either trace)`` in any channel.
    Before the intervention both traces are computed identically, so any difference is real.

Qualifying rebound
    Samples with ``J > CONTACT_MIN`` (1 N s) are contact samples; contact samples less than
    ``MERGE_WINDOW`` (0.03 s) apart are merged into one event spanning samples ``i0..i1``.  The
    incoming speed is ``-v[i0 - 1]`` (the last sample before contact; the initial velocity when
    ``i0 = 0``) and the rebound speed ``v[i1]`` (the first sample after it).  The event
    qualifies when incoming speed > ``SPEED_IN_MIN`` (0.5 m/s) and rebound speed >
    ``SPEED_OUT_MIN`` (0.1 m/s).  A rebound is *before* the divergence when ``i0 < i_div``,
    otherwise *after* it.

``apex_after_divergence`` (all parameters)
    In each trace the first apex at or after ``i_div`` is the first sample ``i >= i_div`` with
    ``v[i-1] > 0 >= v[i]``, of height ``max(x[i-1], x[i])``; a trace without one has none.  Passes
    when that apex exceeds ``APEX_MIN`` (0.1 m) in at least one of target and baseline.  Fails
    when no divergence is detected.

``max_rebounds`` (all parameters)
    Each trace has fewer than ``MAX_REBOUNDS`` (25) qualifying rebounds.

``rebound_before_and_after`` (drag, mass, restitution)
    The target trace has a qualifying rebound before and one after the divergence (before it
    the traces coincide, so "before" holds for both).

``drag_dtw_or_terminal`` (drag)
    Passes when the normalised DTW velocity distance over the ``DTW_WINDOW`` (0.2 s) from
    ``i_div`` exceeds ``DTW_MIN`` (0.1), or the terminal-velocity rule holds.

    Normalised DTW distance: dynamic time warping of the two velocity windows with local cost
    ``|a_i - b_j|``, the symmetric step pattern (diagonal steps weigh 2, start cell 2 d(1,1)),
    unconstrained warping; the accumulated cost divided by ``n + m`` (the standard normalisation
    of this step pattern: the mean absolute difference when no warping is needed) and then by
    the window's velocity scale ``max |v|`` over both windows.  It is the mean velocity mismatch
    after the best alignment as a fraction of the peak speed, so it is scale-free across
    gravities and drop heights, insensitive to small timing shifts (which mass/gravity changes
    also cause), and 0.1 means a 10 % shape difference.

    Terminal-velocity rule: with the post-intervention terminal speed ``v_T = sqrt(m g / c)``
    (not applicable for ``c = 0``), a descent (maximal run of samples with ``v < 0`` and
    ``x > 0`` in the target) is near-terminal when some sample at or after ``i_div`` in it has
    ``-v >= NEAR_TERMINAL * v_T`` (0.9).  The rule holds for a near-terminal descent that starts
    after a qualifying rebound of the target, or that is still under way at the last sample
    with the ball above ``APEX_MIN`` (0.1 m) (it ends above 0.1 m before the trace ends).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from harness import RuleOutcome, SimulatedTrajectory as Trajectory, lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

DIVERGENCE_RTOL = 1e-9
CONTACT_MIN = 1.0
SPEED_IN_MIN = 0.5
SPEED_OUT_MIN = 0.1
MERGE_WINDOW = 0.03
APEX_MIN = 0.1
MAX_REBOUNDS = 25
DTW_WINDOW = 0.2
DTW_MIN = 0.1
NEAR_TERMINAL = 0.9

POSITION, VELOCITY, IMPULSE = 0, 1, 2


@dataclass(frozen=True)
class Rebound:
    """A merged contact event: first/last sample index, incoming and rebound speed (m/s)."""

    i0: int
    i1: int
    speed_in: float
    speed_out: float

    @property
    def qualifies(self) -> bool:
        return self.speed_in > SPEED_IN_MIN and self.speed_out > SPEED_OUT_MIN


def first_divergence(target: Trajectory, baseline: Trajectory) -> int | None:
    """Index of the first sample where the traces differ beyond tolerance, or None."""
    a, b = np.asarray(target.values, float), np.asarray(baseline.values, float)
    if a.shape != b.shape:
        raise ValueError(f"target and baseline shapes differ: {a.shape} vs {b.shape}")
    first = None
    for c in range(a.shape[1]):
        ac, bc = a[:, c], b[:, c]
        peak = max(np.abs(ac).max(initial=0.0), np.abs(bc).max(initial=0.0))
        hit = np.abs(ac - bc) > DIVERGENCE_RTOL * max(1.0, peak)
        i = int(hit.argmax()) if hit.size else 0
        if hit.size and hit[i] and (first is None or i < first):
            first = i
    return first


def contact_events(traj: Trajectory, v0: float) -> list[Rebound]:
    """Merged contact events of one trace (qualifying or not); ``v0`` is the initial velocity."""
    t = np.asarray(traj.time, float)
    y = np.asarray(traj.values, float)
    idx = np.flatnonzero(y[:, IMPULSE] > CONTACT_MIN)
    if idx.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(t[idx]) >= MERGE_WINDOW)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [idx.size - 1]])
    out = []
    for s, e in zip(starts, ends):
        i0, i1 = int(idx[s]), int(idx[e])
        v_in = y[i0 - 1, VELOCITY] if i0 > 0 else v0
        out.append(Rebound(i0, i1, float(-v_in), float(y[i1, VELOCITY])))
    return out


def qualifying_rebounds(traj: Trajectory, v0: float) -> list[Rebound]:
    """The qualifying rebounds of one trace (Table 4)."""
    return [r for r in contact_events(traj, v0) if r.qualifies]


def first_apex(traj: Trajectory, start: int) -> float | None:
    """Height (m) of the first apex at or after sample ``start``, or None."""
    v = np.asarray(traj.values, float)[:, VELOCITY]
    x = np.asarray(traj.values, float)[:, POSITION]
    i = np.arange(max(start, 1), v.size)
    hit = i[(v[i - 1] > 0.0) & (v[i] <= 0.0)]
    if hit.size == 0:
        return None
    j = int(hit[0])
    return float(max(x[j - 1], x[j]))


def normalized_dtw(a: np.ndarray, b: np.ndarray) -> float:
    """Symmetric-pattern DTW of 1-D series with cost ``|a_i - b_j|``, divided by ``len(a) + len(b)``.

    Row-vectorised: within a row, ``D[j] = min_k<=j (cand_k + P_j - P_k)`` with ``P`` the row's
    prefix cost sums, computed with ``np.minimum.accumulate``.
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    if a.size == 0 or b.size == 0:
        raise ValueError("normalized_dtw needs two non-empty series")
    prev = None
    for i in range(a.size):
        c = np.abs(a[i] - b)
        p = np.cumsum(c)
        cand = np.full(b.size, np.inf)
        if prev is None:
            cand[0] = 2.0 * c[0]
        else:
            cand[0] = prev[0] + c[0]
            cand[1:] = np.minimum(prev[:-1] + 2.0 * c[1:], prev[1:] + c[1:])
        prev = np.minimum.accumulate(cand - p) + p
    return float(prev[-1] / (a.size + b.size))


def dtw_velocity_distance(target: Trajectory, baseline: Trajectory, start: int, dt: float) -> float:
    """Normalised DTW velocity distance over ``DTW_WINDOW`` seconds from sample ``start``."""
    n = int(round(DTW_WINDOW / dt))
    a = np.asarray(target.values, float)[start:start + n, VELOCITY]
    b = np.asarray(baseline.values, float)[start:start + n, VELOCITY]
    scale = max(np.abs(a).max(initial=0.0), np.abs(b).max(initial=0.0))
    if scale <= 1e-12:
        return 0.0
    return normalized_dtw(a, b) / scale


def terminal_descent(target: Trajectory, start: int, rebounds: list[Rebound], params: dict[str, float]) -> str | None:
    """Why the terminal-velocity rule holds (a short reason), or None when it does not."""
    c = params["drag_coeff"]
    if c <= 0.0:
        return None
    vt = math.sqrt(params["mass"] * params["gravity"] / c)
    y = np.asarray(target.values, float)
    falling = (y[:, VELOCITY] < 0.0) & (y[:, POSITION] > 0.0)
    edges = np.diff(np.concatenate([[0], falling.astype(np.int8), [0]]))
    for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1):
        lo = max(int(a), start)
        if lo > b or -y[lo:b + 1, VELOCITY].min() < NEAR_TERMINAL * vt:
            continue
        if any(r.i1 < a for r in rebounds):
            return f"near-terminal descent (v_T={vt:.3g} m/s) after a rebound at sample {a}"
        if b == y.shape[0] - 1 and y[b, POSITION] > APEX_MIN:
            return f"near-terminal descent (v_T={vt:.3g} m/s) still above {APEX_MIN} m at the end"
    return None


def evaluate(parameter: str, state: dict[str, float], new_params: dict[str, float],
             target: Trajectory, baseline: Trajectory) -> list[RuleOutcome]:
    """All Table 4 rules that apply to ``parameter``; ``new_params`` are the post-intervention values."""
    v0 = state["initial_velocity"]
    dt = float(target.time[1] - target.time[0]) if len(target.time) > 1 else 1.0 / 400.0
    i_div = first_divergence(target, baseline)
    reb_t = qualifying_rebounds(target, v0)
    reb_b = qualifying_rebounds(baseline, v0)
    out = []

    if i_div is None:
        out.append(RuleOutcome("apex_after_divergence", False, "no divergence between target and baseline"))
    else:
        at, ab = first_apex(target, i_div), first_apex(baseline, i_div)
        ok = any(h is not None and h > APEX_MIN for h in (at, ab))
        out.append(RuleOutcome("apex_after_divergence", ok,
                               f"first apex after divergence at t={target.time[i_div]:.4f}s: "
                               f"target {_m(at)}, baseline {_m(ab)} (need > {APEX_MIN} m in one)"))

    ok = len(reb_t) < MAX_REBOUNDS and len(reb_b) < MAX_REBOUNDS
    out.append(RuleOutcome("max_rebounds", ok,
                           f"qualifying rebounds: target {len(reb_t)}, baseline {len(reb_b)} (need < {MAX_REBOUNDS})"))

    if parameter in ("drag_coeff", "mass", "restitution"):
        if i_div is None:
            out.append(RuleOutcome("rebound_before_and_after", False, "no divergence"))
        else:
            before = sum(r.i0 < i_div for r in reb_t)
            after = len(reb_t) - before
            out.append(RuleOutcome("rebound_before_and_after", before > 0 and after > 0,
                                   f"qualifying rebounds before/after divergence: {before}/{after}"))

    if parameter == "drag_coeff":
        if i_div is None:
            out.append(RuleOutcome("drag_dtw_or_terminal", False, "no divergence"))
        else:
            d = dtw_velocity_distance(target, baseline, i_div, dt)
            if d > DTW_MIN:
                out.append(RuleOutcome("drag_dtw_or_terminal", True, f"normalised DTW {d:.3f} > {DTW_MIN}"))
            else:
                why = terminal_descent(target, i_div, reb_t, new_params)
                out.append(RuleOutcome("drag_dtw_or_terminal", why is not None,
                                       f"normalised DTW {d:.3f} <= {DTW_MIN}; "
                                       + (why or "no qualifying near-terminal descent")))
    return out


def _m(h: float | None) -> str:
    return "none" if h is None else f"{h:.3f} m"

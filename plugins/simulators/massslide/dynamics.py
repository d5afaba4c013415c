"""Event-driven MassSlide dynamics: a block on an incline with periodic forcing and Coulomb friction.

TraceBench Appendix A (MassSlide system description, Table 13).  The axis ``x`` runs along the
plane, positive down-slope (the paper only says it is aligned with the plane; down-slope makes
gravity's component positive); the block's velocity ``v`` (m/s).  Parameters: mass ``m`` (kg),
gravity ``g`` (m/s^2), plane inclination ``theta`` (degrees), Coulomb (kinetic) friction
coefficient ``mu_k`` and breakaway (static) friction coefficient ``mu_s`` (dimensionless); the
applied force ``F(t) = A sin(2 pi t / P)`` (amplitude ``A`` in N, period ``P`` in s; sine phase,
so ``F(0) = 0`` -- the paper gives no phase).

* normal force ``N = m g cos(theta)`` (N), the ``normal_force`` channel;
* driving force ``F_d(t) = m g sin(theta) + F(t)`` (N);
* sliding (``v != 0``, direction ``s = sign(v)``): friction ``-s mu_k N`` and, exactly,
  ``v(t) = v(t0) + (g sin(theta) - s mu_k g cos(theta)) (t - t0) + A P / (2 pi m) (cos(w t0) - cos(w t))``;
* at rest (``v = 0``): the block stays at rest while ``|F_d(t)| <= F_brk``; static friction
  ``-F_d(t)`` balances the driving force.  It breaks away, in the direction of ``F_d``, at the first
  time ``|F_d| > F_brk``.  ``F_brk = max(mu_s, mu_k) N``: the paper's breakaway limit is
  ``mu_s N``; when the sampled ``mu_s`` is below ``mu_k`` (the two ranges of Table 15 overlap) a
  driving force between the two limits cannot accelerate the block against kinetic friction, so
  the block stays at rest until it exceeds both;
* a sliding block whose velocity reaches 0 comes to rest unless ``|F_d| > F_brk`` at that instant,
  in which case it keeps moving in the direction of ``F_d``.

Root finding (velocity zero crossings, breakaway times) scans the analytic expressions on a grid of
``min(P / 256, 5 ms)`` and refines each sign change with Brent's method to 1e-12 s; a crossing that
opens and closes between two grid points (a dip below zero shorter than the grid step) is not seen.

Intervention: one parameter steps at ``t_int``; ``v`` is continuous (a resting block re-checks
breakaway against the new limit and driving force).
Sampling: ``t_k = k dt`` right-continuous; channels mass_velocity (m/s), friction_force (N, along
+x), normal_force (N).  Events: the stick and slip transition times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

_MAX_STEPS = 100_000
_XTOL = 1e-12


@dataclass
class Params:
    """Parameters in force: mass (kg), amplitude (N), period (s), gravity_constant (m/s^2),
    plane_inclination (deg), coulomb_friction_coefficient, breakaway_friction_coefficient (-)."""

    mass: float
    amplitude: float
    period: float
    gravity_constant: float
    plane_inclination: float
    coulomb_friction_coefficient: float
    breakaway_friction_coefficient: float

    @property
    def normal(self) -> float:
        """Normal force m g cos(theta) (N)."""
        return self.mass * self.gravity_constant * math.cos(math.radians(self.plane_inclination))

    @property
    def slope(self) -> float:
        """Gravity component down the plane m g sin(theta) (N)."""
        return self.mass * self.gravity_constant * math.sin(math.radians(self.plane_inclination))

    @property
    def breakaway(self) -> float:
        """Breakaway limit max(mu_s, mu_k) N (N)."""
        return max(self.breakaway_friction_coefficient, self.coulomb_friction_coefficient) * self.normal

    @property
    def omega(self) -> float:
        return 2.0 * math.pi / self.period

    def drive(self, t):
        """Driving force F_d(t) = m g sin(theta) + A sin(w t) (N)."""
        return self.slope + self.amplitude * np.sin(self.omega * np.asarray(t, dtype=float))


@dataclass
class Path:
    """Piecewise solution: ``segments`` rows ``(t0, kind, v0, s, p)`` valid to the next row, where
    kind is 0 (rest) or 1 (sliding with direction s) and ``p`` the :class:`Params` in force;
    ``transitions``: stick/slip transition times (s)."""

    segments: list[tuple[float, int, float, float, Params]] = field(default_factory=list)
    transitions: list[float] = field(default_factory=list)


def velocity(p: Params, t0: float, v0: float, s: float, t):
    """Sliding velocity at ``t`` from ``v0`` at ``t0`` in direction ``s`` (closed form above)."""
    t = np.asarray(t, dtype=float)
    acc = (p.slope - s * p.coulomb_friction_coefficient * p.normal) / p.mass
    w = p.omega
    return v0 + acc * (t - t0) + p.amplitude / (p.mass * w) * (np.cos(w * t0) - np.cos(w * t))


def _first_root(f, t0: float, t1: float, step: float) -> float | None:
    """First ``t`` in (t0, t1] with ``f(t) <= 0`` given ``f > 0`` just after ``t0``; None if none."""
    if t1 <= t0:
        return None
    n = max(2, int(math.ceil((t1 - t0) / step)) + 1)
    grid = np.linspace(t0, t1, n)
    vals = f(grid)
    vals[0] = max(vals[0], 0.0)
    bad = np.nonzero(vals[1:] <= 0.0)[0]
    if bad.size == 0:
        return None
    j = int(bad[0]) + 1
    a, b = grid[j - 1], grid[j]
    if vals[j] == 0.0:
        return float(b)
    fa = float(f(a))
    if fa <= 0.0:  # only possible at t0 itself (vals[0] was clamped)
        return float(a) if a > t0 else float(b)
    from scipy.optimize import brentq  # imported on use: scipy is slow to load

    return float(brentq(lambda x: float(f(x)), a, b, xtol=_XTOL))


def solve(v0: float, params: Params, t_stop: float, change: tuple[str, float, float] | None = None) -> Path:
    """Integrate from ``v0`` at t = 0 to ``t_stop`` (s); ``change``: ``(parameter, t_int, new value)``."""
    p = Params(**vars(params))
    path = Path()
    t, v = 0.0, float(v0)
    pending = change
    for _ in range(_MAX_STEPS):
        if pending is not None and t >= pending[1]:
            p = Params(**vars(p))
            setattr(p, pending[0], float(pending[2]))
            pending = None
        if t >= t_stop:
            break
        t_next = min(pending[1], t_stop) if pending is not None else t_stop
        step = min(p.period / 256.0, 0.005)
        if v == 0.0:
            fd = float(p.drive(t))
            if abs(fd) > p.breakaway:
                s = math.copysign(1.0, fd)
                path.transitions.append(t)
            else:
                path.segments.append((t, 0, 0.0, 0.0, p))
                lim = p.breakaway
                tb = _first_root(lambda x: lim - np.abs(p.drive(x)), t, t_next, step)
                if tb is None:
                    t = t_next
                    continue
                # just past the root the driving force exceeds the limit
                t = tb
                s = math.copysign(1.0, float(p.drive(tb)))
                path.transitions.append(t)
            path.segments.append((t, 1, 0.0, s, p))
            t0 = t
            tz = _first_root(lambda x: s * velocity(p, t0, 0.0, s, x), t0 + 1e-9, t_next, step)
        else:
            s = math.copysign(1.0, v)
            path.segments.append((t, 1, v, s, p))
            t0, vv = t, v
            tz = _first_root(lambda x: s * velocity(p, t0, vv, s, x), t0, t_next, step)
        if tz is None:
            v = float(velocity(p, path.segments[-1][0], path.segments[-1][2], s, t_next))
            t = t_next
            continue
        # velocity reaches 0: the rest branch decides at this instant whether the block sticks
        # (a transition) or, with |F_d| above the limit, reverses at once (the same branch logs it)
        t, v = tz, 0.0
        if abs(float(p.drive(t))) <= p.breakaway:
            path.transitions.append(t)
    else:  # pragma: no cover
        raise RuntimeError("MassSlide event loop did not terminate")
    return path


def sample(path: Path, time: np.ndarray) -> np.ndarray:
    """Evaluate ``path`` on ``time`` (T,): (T, 3) velocity (m/s), friction force (N), normal force (N)."""
    n = time.shape[0]
    out = np.zeros((n, 3))
    starts = np.array([s[0] for s in path.segments])
    idx = np.searchsorted(starts, time, side="right") - 1
    for j in np.unique(idx):
        m = idx == j
        t0, kind, v0, s, p = path.segments[max(j, 0)]
        tt = time[m]
        if kind == 0:
            out[m, 0] = 0.0
            out[m, 1] = -p.drive(tt)
        else:
            out[m, 0] = velocity(p, t0, v0, s, tt)
            out[m, 1] = -s * p.coulomb_friction_coefficient * p.normal
        out[m, 2] = p.normal
    return out

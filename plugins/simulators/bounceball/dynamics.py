"""Event-driven BounceBall dynamics: free motion on a tilted damped rail, wall impacts, rest at a wall.

TraceBench Appendix A (BounceBall system description, Table 8).  A point mass ``m`` (kg) at
position ``x`` (m) on a rail between rigid walls at :data:`X_LEFT` and :data:`X_RIGHT`, velocity
``v`` (m/s, positive towards the right wall).

Free motion (no wall contact)::

    m dv/dt = -c v + m a,        a = -G sin(theta)   (m/s^2)

with viscous damping ``c`` >= 0 (N s/m), inclination angle ``theta`` in degrees (positive raises
the right end, so gravity pulls towards the left wall) and ``G`` = :data:`GRAVITY`.  With
``k = c / m`` the exact solution is ``v(tau) = v0 e^{-k tau} + a E1(tau)`` and
``x(tau) = x0 + v0 E1(tau) + a E2(tau)``, ``E1 = (1 - e^{-k tau}) / k``, ``E2 = (tau - E1) / k``
(evaluated with ``expm1`` and a series for small ``k tau``; ``k = 0`` is the ballistic limit).
On a level rail the speed decays as ``exp(-c t / m)``.

Wall impact (instantaneous): impact times are root-found on the analytic position.  With incoming
speed ``u`` the mass leaves at ``e u`` in the opposite direction (``e`` = that wall's restitution)
and the wall takes the impulse ``m (1 + e) u``.  Below :data:`REST_SPEED` (0.1 m/s, Table 9's
impact-counting threshold, so every counted impact is a real rebound), when the gravity component
presses the mass into that wall, the mass comes to rest against the wall (impulse ``m u``) and
stays there, the wall carrying ``m |a|``, until the gravity component reverses (an inclination
intervention); otherwise it rebounds as above.  Without this cut-off a mass bouncing against a
wall under gravity would need infinitely many impacts in finite time.

Right-wall contact force (the Right_Hard_Stop_f channel), N: the mean contact force over each
sample interval ``(t_{k-1}, t_k]``: the right-wall impulses in it divided by ``dt`` plus the
resting load pro-rated.  The paper gives no contact model; an instantaneous impact has no finite
force, and the interval mean is the force a sensor integrating over the sample period reads
(its integral over time is the exact impulse).  At 50 Hz a right-wall impact of a mass ``m`` at
speed ``u`` reads ``50 m (1 + e) u`` N, so Table 9's 500 N threshold needs ``m (1 + e) u > 10``
N s: it rejects light or slow masses (e.g. 0.3 kg needs u > 18 m/s).

Intervention: one parameter steps at ``t_int``; ``(x, v)`` is continuous.
Sampling: ``t_k = k dt``; position and velocity right-continuous (post-impact state at an
impact instant).
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

#: Wall positions (m).  The paper gives none; Table 10's initial positions (3 to 9.3 m) and the
#: older generator's range [3, 10] lie between walls at 0 and 10 m.
X_LEFT, X_RIGHT = 0.0, 10.0
#: Gravitational acceleration (m/s^2): standard gravity; BounceBall has no gravity parameter
#: (Table 10 lists none), so the inclination alone sets the gravity component along the rail.
GRAVITY = 9.81
#: Impact speed (m/s) below which a mass pressed into a wall by gravity comes to rest there.
REST_SPEED = 0.1
_SMALL = 1e-4
_MAX_STEPS = 200_000


@dataclass
class Params:
    """Parameter values in force: inclination_angle (deg; rad when ``radians``), mass (kg),
    restitution_left/right (-), viscous_damping (N s/m)."""

    inclination_angle: float
    mass: float
    restitution_left: float
    restitution_right: float
    viscous_damping: float
    radians: bool = False

    @property
    def k(self) -> float:
        """Damping rate c / m (1/s)."""
        return self.viscous_damping / self.mass

    @property
    def a(self) -> float:
        """Gravity component along the rail (m/s^2), positive towards the right wall."""
        angle = self.inclination_angle if self.radians else math.radians(self.inclination_angle)
        return -GRAVITY * math.sin(angle)


@dataclass(frozen=True)
class Impact:
    """A wall impact: time (s), wall ("L"/"R"), incoming and outgoing speed (m/s), impulse (N s)."""

    time: float
    wall: str
    speed_in: float
    speed_out: float
    impulse: float


@dataclass
class Path:
    """Piecewise-analytic solution: ``segments`` rows ``(t0, x0, v0, k, a)`` valid to the next row;
    ``rest`` rows ``(start, end, force)`` of resting load on the right wall (N); ``impacts``."""

    segments: list[tuple[float, float, float, float, float]] = field(default_factory=list)
    rest: list[tuple[float, float, float]] = field(default_factory=list)
    impacts: list[Impact] = field(default_factory=list)


# --------------------------------------------------------------------------- closed forms
def _e1e2(k, tau):
    """``E1 = (1 - e^{-k tau}) / k`` and ``E2 = (tau - E1) / k`` (arrays or scalars), stable as k -> 0."""
    k = np.asarray(k, dtype=float)
    tau = np.asarray(tau, dtype=float)
    kt = k * tau
    small = np.abs(kt) < _SMALL
    ks = np.where(small, 1.0, k)
    e1 = np.where(small, tau * (1 - kt / 2 + kt * kt / 6), -np.expm1(-kt) / ks)
    e2 = np.where(small, tau * tau * (0.5 - kt / 6 + kt * kt / 24), (tau - e1) / ks)
    return e1, e2


def state(x0, v0, k, a, tau):
    """Position (m) and velocity (m/s) ``tau`` seconds into free motion from ``(x0, v0)``."""
    e1, e2 = _e1e2(k, tau)
    return x0 + v0 * e1 + a * e2, v0 * np.exp(-np.asarray(k) * np.asarray(tau)) + a * e1


def state_scalar(x0: float, v0: float, k: float, a: float, tau: float) -> tuple[float, float]:
    """:func:`state` for Python floats (the event loop's hot path; same formulas)."""
    kt = k * tau
    if abs(kt) < _SMALL:
        e1 = tau * (1 - kt / 2 + kt * kt / 6)
        e2 = tau * tau * (0.5 - kt / 6 + kt * kt / 24)
    else:
        e1 = -math.expm1(-kt) / k
        e2 = (tau - e1) / k
    return x0 + v0 * e1 + a * e2, v0 * math.exp(-kt) + a * e1


def _turn_time(v0: float, k: float, a: float) -> float | None:
    """Time at which the velocity reaches 0 (None if never): needs v0 and a of opposite signs."""
    if v0 == 0.0 or a == 0.0 or (v0 > 0) == (a > 0):
        return None
    if k == 0.0:
        return -v0 / a
    return math.log1p(-k * v0 / a) / k


def _first_hit(x0: float, v0: float, k: float, a: float, span: float, leaving: str | None):
    """First time in (0, span] at which a wall is reached, and which wall; (None, None) if none.

    ``leaving``: the wall the mass starts at (it moves away from it first)."""
    turn = _turn_time(v0, k, a)
    pieces = [(0.0, turn), (turn, span)] if turn is not None and turn < span else [(0.0, span)]
    for i, (lo, hi) in enumerate(pieces):
        vmid = state_scalar(x0, v0, k, a, 0.5 * (lo + hi))[1]
        if vmid == 0.0:
            continue
        wall, xw = ("R", X_RIGHT) if vmid > 0 else ("L", X_LEFT)
        if i == 0 and wall == leaving:
            continue
        x_hi = state_scalar(x0, v0, k, a, hi)[0]
        if (x_hi - xw) * (1 if wall == "R" else -1) < 0:
            continue
        f = lambda t: state_scalar(x0, v0, k, a, t)[0] - xw  # noqa: E731
        f_lo = f(lo)
        if f_lo == 0.0 and lo > 0:
            return lo, wall
        if f_lo * f(hi) > 0:
            continue
        from scipy.optimize import brentq  # imported on use: scipy is slow to load

        return brentq(f, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps, maxiter=200), wall
    return None, None


# --------------------------------------------------------------------------- event loop
def solve(x0: float, v0: float, params: Params, t_stop: float,
          change: tuple[str, float, float] | None = None) -> Path:
    """Integrate exactly from ``(x0, v0)`` at t = 0 to ``t_stop`` (s).

    ``change``: ``(parameter name, t_int, new value)`` or None.  Raises ValueError for ``x0``
    outside the walls and RuntimeError if the event loop does not terminate.
    """
    if not X_LEFT <= x0 <= X_RIGHT:
        raise ValueError(f"initial_position must lie between the walls [{X_LEFT}, {X_RIGHT}] m, got {x0}")
    p = Params(**vars(params))
    path = Path()
    t, x, v = 0.0, float(x0), float(v0)
    pending = change
    resting: str | None = None
    leaving: str | None = "L" if x == X_LEFT else "R" if x == X_RIGHT else None
    for _ in range(_MAX_STEPS):
        if pending is not None and t >= pending[1]:
            setattr(p, pending[0], float(pending[2]))
            pending = None
        if t >= t_stop:
            break
        t_next = min(pending[1], t_stop) if pending is not None else t_stop
        k, a = p.k, p.a
        if resting is not None:
            pressed = a < 0 if resting == "L" else a > 0
            if pressed:
                path.segments.append((t, x, 0.0, 0.0, 0.0))
                if resting == "R":
                    path.rest.append((t, t_next, p.mass * abs(a)))
                t = t_next
                continue
            leaving, resting = resting, None  # released: the gravity component now points away
        path.segments.append((t, x, v, k, a))
        tau, wall = _first_hit(x, v, k, a, t_next - t, leaving)
        if tau is None:
            xs, vs = state_scalar(x, v, k, a, t_next - t)
            x, v = min(max(xs, X_LEFT), X_RIGHT), vs
            t = t_next
            leaving = None if X_LEFT < x < X_RIGHT else leaving
            continue
        u = abs(state_scalar(x, v, k, a, tau)[1])
        t += tau
        x = X_RIGHT if wall == "R" else X_LEFT
        e = p.restitution_right if wall == "R" else p.restitution_left
        pressed = a > 0 if wall == "R" else a < 0
        if u < REST_SPEED and pressed:
            path.impacts.append(Impact(t, wall, u, 0.0, p.mass * u))
            v, resting, leaving = 0.0, wall, None
        else:
            path.impacts.append(Impact(t, wall, u, e * u, p.mass * (1.0 + e) * u))
            v = -e * u if wall == "R" else e * u
            leaving = wall
    else:  # pragma: no cover - guarded by REST_SPEED
        raise RuntimeError("BounceBall event loop did not terminate")
    return path


def sample(path: Path, time: np.ndarray, dt: float) -> np.ndarray:
    """Evaluate ``path`` on ``time`` (shape (T,), ``t_k = k dt``): (T, 3) position (m), velocity (m/s),
    mean right-wall contact force over ``(t_{k-1}, t_k]`` (N)."""
    n = time.shape[0]
    out = np.zeros((n, 3))
    seg = np.asarray(path.segments, dtype=float).reshape(-1, 5)
    idx = np.searchsorted(seg[:, 0], time, side="right") - 1
    rows = seg[np.clip(idx, 0, None)]
    xs, vs = state(rows[:, 1], rows[:, 2], rows[:, 3], rows[:, 4], time - rows[:, 0])
    out[:, 0] = np.clip(xs, X_LEFT, X_RIGHT)
    out[:, 1] = vs
    right = [(i.time, i.impulse) for i in path.impacts if i.wall == "R"]
    if right:
        ti, ji = np.array(right).T
        b = np.searchsorted(time, ti, side="left")  # impact in (t_{k-1}, t_k]
        keep = b < n
        out[:, 2] += np.bincount(b[keep], weights=ji[keep], minlength=n) / dt
    if path.rest:
        lo = time - dt
        for a, e, force in path.rest:
            out[:, 2] += force * np.clip(np.minimum(time, e) - np.maximum(lo, a), 0.0, None) / dt
    return out

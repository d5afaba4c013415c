"""Event-driven BallDrop dynamics: flight segments, ground impacts, static contact, interventions.

TraceBench Appendix A (BallDrop system description, Table 3).  The ball is a point mass at
height ``x >= 0`` (m) with velocity ``v`` (m/s, up positive).  Parameters: restitution ``e`` in
[0, 1], mass ``m`` > 0 (kg), drag coefficient ``c`` >= 0 (kg/m), gravity ``g`` > 0 (m/s^2).

Flight
    ``dv/dt = -g - (c/m) v|v|`` solved in closed form (:mod:`.flight`); a flight is split at
    its apex into an ascent and a descent segment.

Ground impact (restitution hard stop at ``x = 0``)
    Impact times are root-found on the analytic position (never snapped to the sample grid).
    With impact speed ``u``: if ``u >= 0.5`` m/s (exactly 0.5 rebounds) the ball leaves upward
    at ``e u`` and the contact impulse is ``m (1 + e) u``; otherwise it enters static contact
    (``x = 0``, ``v = 0``) with impulse ``m u``.  Since ``g > 0``, static contact is permanent.
    ``e``, ``m`` are those in force at the impact time (the new value when the impact is at or
    after the intervention time).

Static contact
    The ground carries the weight: impulse ``m g`` per second, pro-rated per sample interval,
    with ``m g`` in force at each instant (a change of ``m`` or ``g`` keeps the ball in contact
    and changes the rate from the intervention time on).

Intervention
    One parameter steps to a new value at ``t_int``; the state ``(x, v)`` is continuous, an
    airborne segment is restarted from the state at ``t_int``.  ``t_int`` at or beyond the last
    sample has no observable effect.

Initial state on the ground (``x0 = 0``)
    ``v0 > 0``: launched upward.  ``v0 = 0``: static contact from ``t = 0`` (no impact event).
    ``v0 < 0``: an impact at ``t = 0`` with speed ``-v0`` (rebound or rest as above); its impulse
    is counted in the first sample interval, which is closed at 0: ``[0, dt]``.

Sampling
    Samples at ``t_k = k dt``, k = 1..T.  Position and velocity are right-continuous (a sample at
    an impact instant shows the post-impact state).  The impulse channel at ``t_k`` is the total
    ground-contact impulse (N s) over ``(t_{k-1}, t_k]``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from harness import lazy_module
from tsagent_plugins.simulators.balldrop import flight

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

#: Impact speed (m/s) at or above which the ball rebounds (Appendix A).
IMPACT_SPEED_THRESHOLD = 0.5

REST, ASCENT, DESCENT = 0, 1, 2
_MAX_STEPS = 1_000_000


@dataclass
class Params:
    """Parameter values in force: restitution (-), mass (kg), drag_coeff (kg/m), gravity (m/s^2)."""

    restitution: float
    mass: float
    drag_coeff: float
    gravity: float

    @property
    def k(self) -> float:
        """Drag per unit mass c/m (1/m)."""
        return self.drag_coeff / self.mass


@dataclass(frozen=True)
class Impact:
    """A ground impact: time (s), incoming and outgoing speed (m/s), contact impulse (N s)."""

    time: float
    speed_in: float
    speed_out: float
    impulse: float

    @property
    def rebound(self) -> bool:
        return self.speed_out > 0.0


@dataclass
class Path:
    """The exact piecewise-analytic solution up to ``t_stop``.

    ``segments``: rows ``(t0, kind, x0, v0, k, g)`` with kind REST/ASCENT/DESCENT, each valid
    from ``t0`` to the next row's ``t0``.  ``rest``: rows ``(start, end, rate)`` of static contact
    carrying ``rate = m g`` (N).  ``impacts``: every ground impact in time order.
    """

    segments: list[tuple[float, int, float, float, float, float]] = field(default_factory=list)
    rest: list[tuple[float, float, float]] = field(default_factory=list)
    impacts: list[Impact] = field(default_factory=list)


def solve(x0: float, v0: float, params: Params, t_stop: float,
          change: tuple[str, float, float] | None = None) -> Path:
    """Integrate exactly from ``(x0, v0)`` at t = 0 to ``t_stop`` (s).

    ``change``: ``(parameter name, t_int, new value)`` or None.  Raises ValueError for
    ``x0 < 0`` and RuntimeError if the event loop does not terminate (cannot happen for
    valid parameters because every rebound starts at >= ``e * 0.5`` m/s).
    """
    if x0 < 0.0:
        raise ValueError(f"initial_height must be >= 0 m, got {x0}")
    p = Params(params.restitution, params.mass, params.drag_coeff, params.gravity)
    path = Path()
    seg, rest, impacts = path.segments, path.rest, path.impacts
    t, x, v = 0.0, float(x0), float(v0)
    pending = change
    resting = False
    for _ in range(_MAX_STEPS):
        if pending is not None and t >= pending[1]:
            setattr(p, pending[0], float(pending[2]))
            pending = None
        on_ground = not resting and x <= 0.0 and v <= 0.0
        if t >= t_stop and not on_ground:
            break
        t_next = min(pending[1], t_stop) if pending is not None else t_stop
        k, g = p.k, p.gravity
        if resting:
            seg.append((t, REST, 0.0, 0.0, k, g))
            rest.append((t, t_next, p.mass * g))
            t = t_next
        elif on_ground:
            u = -v
            if u >= IMPACT_SPEED_THRESHOLD:
                out = p.restitution * u
                impacts.append(Impact(t, u, out, p.mass * (1.0 + p.restitution) * u))
                x, v = 0.0, out
                if out > 0.0:
                    continue
            elif u > 0.0:
                impacts.append(Impact(t, u, 0.0, p.mass * u))
            x, v, resting = 0.0, 0.0, True
        elif v > 0.0:
            ta, rise = flight.apex(v, k, g)
            seg.append((t, ASCENT, x, v, k, g))
            if t + ta <= t_next:
                t, x, v = t + ta, x + rise, 0.0
            else:
                dr, v = flight.ascent(v, k, g, t_next - t)
                t, x = t_next, x + dr
        else:
            tf, ui = flight.fall_time(x, -v, k, g)
            seg.append((t, DESCENT, x, v, k, g))
            if t + tf <= t_next:
                t, x, v = t + tf, 0.0, -ui
            else:
                dr, u = flight.descent(-v, k, g, t_next - t)
                t, x, v = t_next, max(x - dr, 0.0), -u
    else:  # pragma: no cover - guarded by the physics
        raise RuntimeError("BallDrop event loop did not terminate")
    return path


def sample(path: Path, time: np.ndarray, dt: float) -> np.ndarray:
    """Evaluate ``path`` on the grid ``time`` (shape (T,), ``t_k = k dt``).

    Returns shape (T, 3): position (m), velocity (m/s), impulse per interval (N s).
    """
    n = time.shape[0]
    out = np.zeros((n, 3))
    seg = np.asarray(path.segments, dtype=float).reshape(-1, 6)
    idx = np.searchsorted(seg[:, 0], time, side="right") - 1
    rows = seg[idx]
    tau = time - rows[:, 0]
    kind = rows[:, 1]
    for code, fn in ((ASCENT, flight.ascent_array), (DESCENT, flight.descent_array)):
        m = kind == code
        if m.any():
            r = rows[m]
            v0 = r[:, 3] if code == ASCENT else -r[:, 3]
            out[m, 0], out[m, 1] = fn(r[:, 2], v0, r[:, 4], r[:, 5], tau[m])
    # impulse channel: impacts binned into (t_{k-1}, t_k] (t = 0 into the first interval)
    if path.impacts:
        ti = np.array([i.time for i in path.impacts])
        ji = np.array([i.impulse for i in path.impacts])
        b = np.searchsorted(time, ti, side="left")
        keep = b < n
        out[:, 2] += np.bincount(b[keep], weights=ji[keep], minlength=n)
    if path.rest:
        lo = time - dt
        lo[0] = 0.0
        for a, e, rate in path.rest:
            ov = np.minimum(time, e) - np.maximum(lo, a)
            out[:, 2] += rate * np.clip(ov, 0.0, None)
    return out

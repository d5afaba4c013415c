"""Closed-form free flight of a point mass under gravity and quadratic drag (TraceBench App. A, BallDrop).

Equation of motion in flight, height ``x`` (m, up positive), velocity ``v`` (m/s)::

    dx/dt = v,        dv/dt = -g - k v |v|,        k = c / m  (1/m)

with gravity ``g`` > 0 (m/s^2), drag coefficient ``c`` >= 0 (kg/m) and mass ``m`` > 0 (kg).
With ``omega = sqrt(g k)`` (1/s) and terminal speed ``v_T = sqrt(g / k)`` (m/s):

* ascent (v0 > 0, drag opposes motion downward)::

      v(t)        = (v0 - v_T tan(omega t)) / (1 + (v0 / v_T) tan(omega t))
      x(t) - x0   = ln(cos(omega t) + (v0 / v_T) sin(omega t)) / k
      t_apex      = atan(v0 / v_T) / omega,     rise = ln(1 + k v0^2 / g) / (2 k)

* descent (downward speed u = -v >= 0, drag opposes motion upward)::

      u(t)        = (v_T tanh(omega t) + u0) / (1 + (u0 / v_T) tanh(omega t))
      x0 - x(t)   = ln(cosh(omega t) + (u0 / v_T) sinh(omega t)) / k

  valid for u0 below, at or above the terminal speed (it tends to ``v_T`` from either side).

* ``k = 0`` is the ballistic limit ``x = x0 + v0 t - g t^2 / 2``.

The logarithms are evaluated as ``log1p`` of arguments written with ``2 sin^2(b/2)`` and
``2 sinh^2(b/2)`` so that small ``k`` (down to denormal values) loses no precision and
converges to the ballistic formulas; for ``omega t > 20`` the descent uses the asymptotic form
``b + ln((1 + r)/2) + log1p((1 - r)/(1 + r) e^{-2b})`` to avoid overflow.

The time to fall a height ``h`` from downward speed ``u0`` solves ``(1 + r) y^2 - 2 E y + (1 - r) = 0``
for ``y = e^{omega t}`` (``E = e^{k h}``, ``r = u0 / v_T``), written without cancellation, and is then
polished by Newton's method on the analytic drop, so impact times are exact to ~1e-12 s.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from harness import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

#: ``omega t`` above which the descent uses its asymptotic (overflow-free) form.
_LARGE = 20.0


# --------------------------------------------------------------------------- scalars
def ascent(v0: float, k: float, g: float, tau: float) -> tuple[float, float]:
    """Rise (m) and velocity (m/s) ``tau`` seconds into an ascent from upward speed ``v0`` > 0.

    Valid for ``0 <= tau <= apex_time(v0, k, g)``.
    """
    if k == 0.0:
        return v0 * tau - 0.5 * g * tau * tau, v0 - g * tau
    w = math.sqrt(g * k)
    vt = math.sqrt(g / k)
    b = w * tau
    r = v0 / vt
    sh = math.sin(0.5 * b)
    rise = math.log1p(-2.0 * sh * sh + r * math.sin(b)) / k
    tn = math.tan(b)
    return rise, (v0 - vt * tn) / (1.0 + r * tn)


def apex(v0: float, k: float, g: float) -> tuple[float, float]:
    """Time to apex (s) and rise to apex (m) from upward speed ``v0`` >= 0."""
    if k == 0.0:
        return v0 / g, v0 * v0 / (2.0 * g)
    return math.atan(v0 * math.sqrt(k / g)) / math.sqrt(g * k), math.log1p(k * v0 * v0 / g) / (2.0 * k)


def descent(u0: float, k: float, g: float, tau: float) -> tuple[float, float]:
    """Drop (m) and downward speed (m/s) ``tau`` seconds into a descent from downward speed ``u0`` >= 0."""
    if k == 0.0:
        return u0 * tau + 0.5 * g * tau * tau, u0 + g * tau
    w = math.sqrt(g * k)
    vt = math.sqrt(g / k)
    b = w * tau
    r = u0 / vt
    if b <= _LARGE:
        sh = math.sinh(0.5 * b)
        drop = math.log1p(2.0 * sh * sh + r * math.sinh(b)) / k
    else:
        drop = (b + math.log(0.5 * (1.0 + r)) + math.log1p((1.0 - r) / (1.0 + r) * math.exp(-2.0 * b))) / k
    th = math.tanh(b)
    return drop, (vt * th + u0) / (1.0 + r * th)


def fall_time(h: float, u0: float, k: float, g: float) -> tuple[float, float]:
    """Time (s) to fall ``h`` metres from downward speed ``u0`` >= 0, and the impact speed (m/s).

    Closed form for the initial value, then Newton iterations on ``descent(...)[0] - h``
    (derivative: the downward speed) until the step is below 1e-15 s.
    """
    if h <= 0.0:
        return 0.0, u0
    if k == 0.0:
        s = math.sqrt(u0 * u0 + 2.0 * g * h)
        return 2.0 * h / (u0 + s), s
    w = math.sqrt(g * k)
    r = u0 * math.sqrt(k / g)
    kh = k * h
    if kh <= 1.0:
        e2 = math.expm1(2.0 * kh)
        s = math.sqrt(e2 + r * r)
        ym1 = (math.expm1(kh) + e2 / (s + r)) / (1.0 + r)
        tau = math.log1p(ym1) / w
    else:
        lny = kh + math.log(1.0 + math.sqrt(1.0 + (r * r - 1.0) * math.exp(-2.0 * kh))) - math.log1p(r)
        tau = lny / w
    for _ in range(4):
        drop, u = descent(u0, k, g, tau)
        if u <= 0.0:
            break
        step = (drop - h) / u
        tau -= step
        if abs(step) <= 1e-15 * max(1.0, tau):
            break
    return tau, descent(u0, k, g, tau)[1]


# --------------------------------------------------------------------------- vectorised
def ascent_array(x0, v0, k, g, tau) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`ascent`: position (m) and velocity (m/s) at ``tau``; all inputs shape (n,)."""
    x = np.empty_like(tau)
    v = np.empty_like(tau)
    ball = k == 0.0
    if ball.any():
        t = tau[ball]
        x[ball] = x0[ball] + v0[ball] * t - 0.5 * g[ball] * t * t
        v[ball] = v0[ball] - g[ball] * t
    d = ~ball
    if d.any():
        kk, gg, t, vv = k[d], g[d], tau[d], v0[d]
        w = np.sqrt(gg * kk)
        vt = np.sqrt(gg / kk)
        b = w * t
        r = vv / vt
        sh = np.sin(0.5 * b)
        x[d] = x0[d] + np.log1p(-2.0 * sh * sh + r * np.sin(b)) / kk
        tn = np.tan(b)
        v[d] = (vv - vt * tn) / (1.0 + r * tn)
    return x, v


def descent_array(x0, u0, k, g, tau) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`descent`: position (m) and velocity (m/s, <= 0) at ``tau``; inputs shape (n,)."""
    x = np.empty_like(tau)
    v = np.empty_like(tau)
    ball = k == 0.0
    if ball.any():
        t = tau[ball]
        uu = u0[ball]
        x[ball] = x0[ball] - uu * t - 0.5 * g[ball] * t * t
        v[ball] = -(uu + g[ball] * t)
    d = ~ball
    if d.any():
        kk, gg, t, uu = k[d], g[d], tau[d], u0[d]
        w = np.sqrt(gg * kk)
        vt = np.sqrt(gg / kk)
        b = w * t
        r = uu / vt
        bs = np.minimum(b, _LARGE)
        sh = np.sinh(0.5 * bs)
        small = np.log1p(2.0 * sh * sh + r * np.sinh(bs))
        if (b > _LARGE).any():
            bl = np.maximum(b, _LARGE)
            large = bl + np.log(0.5 * (1.0 + r)) + np.log1p((1.0 - r) / (1.0 + r) * np.exp(-2.0 * bl))
            small = np.where(b > _LARGE, large, small)
        x[d] = x0[d] - small / kk
        th = np.tanh(b)
        v[d] = -(vt * th + uu) / (1.0 + r * th)
    return np.maximum(x, 0.0), v

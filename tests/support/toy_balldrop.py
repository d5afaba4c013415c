"""A small, fast bouncing-ball simulator used to test the generic solvability filter and pool.

Not BallDrop: linear drag (a = -g - (c/m) v) so every flight segment has a closed
form, a 2 s horizon at 200 Hz (T = 399), and a simple observation model
``y + kappa * (base_c + hetero_c |y|) * z`` with ``z ~ N(0, 1)`` from
``default_rng([seed, 7])``.  Channel 3 is an impulse channel: per sample interval
``(t_{k-1}, t_k]`` the sum of ``m (1 + e) |v|`` over rebounds, ``m |v|`` when the ball
comes to rest, plus ``m g`` times the overlap with static contact.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.stats import qmc

from harness.contracts.simulator import (
    Channel, Configuration, Intervention, Parameter, RuleOutcome, Simulator, Trajectory,
)

REST_SPEED = 0.5


def _flight(x0: float, v0: float, g: float, k: float, tau):
    """State after ``tau`` seconds of flight with linear drag rate k = c/m (1/s)."""
    tau = np.asarray(tau, dtype=float)
    if k < 1e-9:
        return x0 + v0 * tau - 0.5 * g * tau**2, v0 - g * tau
    a = v0 + g / k
    e = np.exp(-k * tau)
    return x0 + a * (1 - e) / k - g / k * tau, a * e - g / k


class ToyBall(Simulator):
    name = "toyball"
    version = "1"
    horizon = 2.0
    dt = 0.005
    kappa_ref = 1.0
    state_variables = (
        Parameter("initial_height", "initial height", "m", 0.5, 3.0),
        Parameter("initial_velocity", "initial velocity", "m/s", -3.0, 1.0),
    )
    parameters = (
        Parameter("restitution", "coefficient of restitution", "1", 0.3, 0.95, 0.0, 0.2),
        Parameter("mass", "mass", "kg", 0.5, 5.0, 0.1, 1.0),
        Parameter("drag_coeff", "drag coefficient", "kg/s", 0.0, 2.0, 0.0, 0.5),
        Parameter("gravity", "gravity acceleration", "m/s^2", 3.0, 15.0, 0.3, 3.0),
    )
    channels = (
        Channel("Position", "ball height", "m"),
        Channel("Velocity", "ball velocity", "m/s"),
        Channel("Contact", "contact impulse (N*s)", "N*s", impulse=True),
    )
    description = "a toy bouncing ball"
    base = np.array([0.01, 0.02, 0.005])
    hetero = np.array([0.0, 0.01, 0.01])

    def __init__(self, fail_rule=None):
        #: optional callable (config, intervention) -> bool; True makes rule "forced" fail
        self.fail_rule = fail_rule

    # -- sampling -------------------------------------------------------------
    def sample_configurations(self, n, rng):
        dims = self.state_variables + self.parameters
        u = qmc.LatinHypercube(d=len(dims), seed=rng).random(n)
        out = []
        for row in u:
            vals = {p.name: p.low + r * (p.high - p.low) for p, r in zip(dims, row)}
            out.append(Configuration({p.name: vals[p.name] for p in self.state_variables},
                                     {p.name: vals[p.name] for p in self.parameters}))
        return out

    def sample_intervention(self, config, parameter, rng):
        p = next(q for q in self.parameters if q.name == parameter)
        old = config.parameters[parameter]
        t = float(rng.uniform(0.2, 0.8) * self.horizon)
        sides = []
        if old + p.min_abs <= p.high:
            sides.append((old + p.min_abs, p.high))
        if old - p.min_abs >= p.low:
            sides.append((p.low, old - p.min_abs))
        if not sides:
            raise ValueError(f"no room to change {parameter} from {old}")
        lo, hi = sides[int(rng.integers(len(sides)))]
        return Intervention(parameter, t, float(rng.uniform(lo, hi)))

    # -- dynamics -------------------------------------------------------------
    def simulate(self, config, intervention=None):
        n = int(round(self.horizon / self.dt)) - 1
        times = self.dt * np.arange(1, n + 1)
        pos = np.zeros(n)
        vel = np.zeros(n)
        imp = np.zeros(n)
        events: list[float] = []
        theta = dict(config.parameters)
        x, v = float(config.initial_state["initial_height"]), float(config.initial_state["initial_velocity"])
        resting = x <= 0 and v <= 0
        if resting:
            x = v = 0.0
        t = 0.0
        switch = intervention.time if intervention is not None else math.inf
        while t < self.horizon:
            seg_end = min(switch, self.horizon) if t < switch else self.horizon
            e, m, c, g = theta["restitution"], theta["mass"], theta["drag_coeff"], theta["gravity"]
            k = c / m
            if resting:
                self._fill(times, t, seg_end, pos, vel, lambda tau: (0 * tau, 0 * tau))
                self._rest_impulse(times, imp, t, seg_end, m * g)
                t = seg_end
            else:
                hit = self._impact(x, v, g, k, seg_end - t)
                end = t + hit if hit is not None else seg_end
                self._fill(times, t, end, pos, vel, lambda tau, x=x, v=v, g=g, k=k: _flight(x, v, g, k, tau))
                if hit is None:
                    x, v = (float(a) for a in _flight(x, v, g, k, seg_end - t))
                    t = seg_end
                else:
                    _, v_in = _flight(x, v, g, k, hit)
                    speed = abs(float(v_in))
                    t = end
                    events.append(t)
                    j = self._interval(times, t)
                    if speed >= REST_SPEED:
                        if j is not None:
                            imp[j] += m * (1 + e) * speed
                        x, v = 0.0, e * speed
                    else:
                        if j is not None:
                            imp[j] += m * speed
                        x = v = 0.0
                        resting = True
            if t >= switch and intervention is not None and switch != math.inf:
                theta[intervention.parameter] = intervention.new_value
                switch = math.inf
        return Trajectory(times, np.column_stack([pos, vel, imp]), np.asarray(events))

    def _impact(self, x, v, g, k, span):
        """Time to the next ground impact within ``span`` seconds, or None."""
        taus = np.linspace(0.0, span, max(8, int(span / (self.dt / 4)) + 2))
        xs, _ = _flight(x, v, g, k, taus)
        below = np.nonzero(xs[1:] <= 0)[0]
        if below.size == 0:
            return None
        i = below[0] + 1
        lo = taus[i - 1]
        if lo == 0.0 and x <= 0:
            lo = 1e-12
            if _flight(x, v, g, k, lo)[0] <= 0:
                return lo
        return brentq(lambda s: float(_flight(x, v, g, k, s)[0]), lo, taus[i], xtol=1e-12)

    def _fill(self, times, t0, t1, pos, vel, fn):
        sel = (times > t0) & (times <= t1) if t0 > 0 else (times <= t1)
        if sel.any():
            p, vv = fn(times[sel] - t0)
            pos[sel] = np.maximum(p, 0.0)
            vel[sel] = vv

    def _interval(self, times, t):
        j = int(math.ceil(t / self.dt - 1e-9)) - 1
        return j if 0 <= j < times.size else None

    def _rest_impulse(self, times, imp, t0, t1, force):
        lo = times - self.dt
        overlap = np.clip(np.minimum(times, t1) - np.maximum(lo, t0), 0.0, None)
        imp += force * overlap

    # -- observation ------------------------------------------------------------
    def amplitude(self, clean):
        return self.base[None, :] + self.hetero[None, :] * np.abs(clean.values)

    def observe(self, clean, kappa, seed):
        if kappa == 0:
            return clean.values.copy()
        z = np.random.default_rng([seed, 7]).standard_normal(clean.values.shape)
        return clean.values + kappa * self.amplitude(clean) * z

    def rejection_rules(self, config, intervention, target, baseline):
        out = []
        if intervention.parameter == "restitution":
            after = np.ravel(target.events) > intervention.time
            out.append(RuleOutcome("bounce_after_change", bool(after.any()), "needs an impact after t_int"))
        if self.fail_rule is not None:
            out.append(RuleOutcome("forced", not self.fail_rule(config, intervention), "test hook"))
        return out


class FastToyBall(ToyBall):
    """Same model with a fast ``noise_power``: the seed fields do not depend on the
    trajectory, so the per-sample mean of z**2 over seeds 0..N-1 is computed once per
    (N, shape) and scaled by the trajectory's squared amplitude."""

    _moments: dict = {}

    def noise_power(self, clean, kappa, n_seeds):
        key = (n_seeds, clean.values.shape)
        if key not in self._moments:
            acc = np.zeros(clean.values.shape)
            for s in range(n_seeds):
                acc += np.square(np.random.default_rng([s, 7]).standard_normal(clean.values.shape))
            self._moments[key] = acc / n_seeds
        return (kappa * self.amplitude(clean)) ** 2 * self._moments[key]

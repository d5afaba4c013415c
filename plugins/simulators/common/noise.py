"""Component observation model ``p_kappa`` for table-specified simulators (TraceBench Section 4.1).

A simulator's noise-coefficient table (Tables 11, 16) names, per channel, components
``<channel>_<component>_sigma_scale`` (and ``quant_step_floor``/``quant_step_scale``).  Their
coefficients are used exactly, scaled by ``kappa`` (``kappa_ref = 1``, ``kappa_high = 4``), with
no further gain.  Each component is a *trajectory-independent* standard random field drawn from
the seed times a *deterministic* amplitude computed from the clean channel ``y_c``, its scale
``S_c = max_t |y_c(t)|`` (peak magnitude, channel units; ``scale="rms"``: the root mean square
``sqrt(mean_t y_c(t)^2)`` instead) and ``kappa``::

    observed_c(t) = Q_c(y_c)(t) + A_c(t) z_c(t) + D_c(t) d_c(t) + B_c(t) b_c

* ``z_c``: white N(0, 1) field carrying the independent Gaussian components, so
  ``A_c(t)^2 = kappa^2 [ (base S)^2 + (event S w_c(t))^2 + (post_event S p_c(t))^2 + hetero^2 S |y_c(t)| ]``
  (the heteroscedastic variance grows linearly with ``|y|``);
* ``w_c(t) = exp(-|t - t_e| / event_tau)`` for the nearest event ``t_e`` (the event noise is
  localised around the transitions); ``p_c(t) = exp(-(t - t_e) / post_tau)`` after the latest
  event ``t_e <= t`` (0 before the first): a one-sided ring-down after each transition.  The event
  times are ``clean.events`` or, for a channel with ``events="active"``, the samples where the
  clean channel is non-zero (a contact-force sensor is disturbed by its own contacts);
* ``d_c``: smooth drift, white noise convolved with a Gaussian kernel of standard deviation
  ``drift_tau`` seconds normalised to unit L2 norm (``d_c(t)`` ~ N(0, 1) at every t);
  ``D_c = kappa drift S``.  A channel with ``event_field="drift"`` carries its event component on
  this smooth field instead of the white one: ``D_c(t)^2 = kappa^2 [(drift S)^2 + (event S w_c(t))^2]``
  (same variance at every t; a transition swells the slowly varying error rather than adding
  white noise, so a burst is one correlated disturbance);
* ``b_c``: one N(0, 1) number per seed and channel, a constant offset (sensor bias);
  ``B_c = kappa bias S``; with ``bias_form="gain"`` a calibration (gain) error instead,
  ``B_c(t) = kappa bias y_c(t)``, proportional to the reading;
* ``Q_c``: quantisation of the clean reading to the step ``max(floor, quant_scale kappa S)``
  (the floor, in channel units, is not scaled by kappa), before the additive components.

Because the fields do not depend on the trajectory, the mean over seeds ``0..N-1`` of the squared
corruption is an exact function of per-sample field moments computed once per process
(:meth:`FieldNoise.noise_power`), equal to the naive Monte-Carlo definition up to rounding::

    mean_s (delta + A z + D d + B b)^2 = delta^2 + A^2<zz> + D^2<dd> + B^2<bb>
        + 2AD<zd> + 2AB<zb> + 2DB<db> + 2 delta (A<z> + D<d> + B<b>)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from harness import lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

_COMPONENTS = ("base", "drift", "event", "post_event", "hetero", "bias")



def next_fast_len(target: int) -> int:
    """The smallest 5-smooth number (2^a 3^b 5^c) at least ``target``: a length the FFT transforms fast, as
    ``scipy.fft.next_fast_len(target, real=True)`` chooses it.  The drift fields are filtered with
    ``numpy.fft`` (the same C++ PocketFFT as ``scipy.fft`` since numpy 2.0: bit-identical results, checked by
    ``tests/plugins/simulators/test_common.py``), so rebuilding one sample in a viewer loads no
    scipy (about 15 MB)."""
    if target <= 6:
        return max(int(target), 1)
    best = None
    p5 = 1
    while p5 < 2 * target:
        p35 = p5
        while p35 < 2 * target:
            p2 = 1 << (-(-target // p35) - 1).bit_length()
            if best is None or p2 * p35 < best:
                best = p2 * p35
            p35 *= 3
        p5 *= 5
    return best


@dataclass(frozen=True)
class ChannelNoise:
    """Coefficients of one channel at ``kappa = 1`` (0 = component absent).

    ``events``: ``"events"`` (the trajectory's event times) or ``"active"`` (non-zero clean samples).
    ``event_tau``/``post_tau``: this channel's envelope time scales (s); None = the model's.
    ``overlap``: ``"nearest"`` (the nearest event's envelope) or ``"sum"`` (each event adds its own
    burst: ``w(t)^2 = sum_e exp(-2 |t - t_e| / event_tau)``, and likewise for the post-event part).
    ``event_field``: ``"white"`` (the event component on ``z_c``) or ``"drift"`` (on ``d_c``).
    ``bias_form``: ``"offset"`` (``B = kappa bias S``) or ``"gain"`` (``B(t) = kappa bias y(t)``).
    ``scale``: ``"peak"`` (``S = max |y|``) or ``"rms"`` (``S = sqrt(mean y^2)``).
    """

    base: float = 0.0
    drift: float = 0.0
    event: float = 0.0
    post_event: float = 0.0
    hetero: float = 0.0
    bias: float = 0.0
    quant_floor: float = 0.0
    quant_scale: float = 0.0
    events: str = "events"
    event_tau: float | None = None
    post_tau: float | None = None
    overlap: str = "nearest"
    event_field: str = "white"
    bias_form: str = "offset"
    scale: str = "peak"

    def __post_init__(self) -> None:
        if self.event_field not in ("white", "drift"):
            raise ValueError(f"event_field must be 'white' or 'drift', got {self.event_field!r}")
        if self.bias_form not in ("offset", "gain"):
            raise ValueError(f"bias_form must be 'offset' or 'gain', got {self.bias_form!r}")
        if self.overlap not in ("nearest", "sum"):
            raise ValueError(f"overlap must be 'nearest' or 'sum', got {self.overlap!r}")
        if self.scale not in ("peak", "rms"):
            raise ValueError(f"scale must be 'peak' or 'rms', got {self.scale!r}")

    @classmethod
    def from_table(cls, table: dict[str, float], prefix: str, events: str = "events",
                   event_tau: float | None = None, post_tau: float | None = None,
                   overlap: str = "nearest", event_field: str = "white",
                   bias_form: str = "offset", scale: str = "peak") -> "ChannelNoise":
        """The components of ``prefix`` in a coefficient table keyed like Tables 11 and 16."""
        kw = {c: table.get(f"{prefix}_{c}_sigma_scale", 0.0) for c in _COMPONENTS}
        kw["quant_floor"] = table.get(f"{prefix}_quant_step_floor", 0.0)
        kw["quant_scale"] = table.get(f"{prefix}_quant_step_scale", 0.0)
        unknown = [k for k in table if k.startswith(prefix + "_") and not any(
            k == f"{prefix}_{c}_sigma_scale" for c in _COMPONENTS) and k not in (
            f"{prefix}_quant_step_floor", f"{prefix}_quant_step_scale")]
        if unknown:
            raise ValueError(f"unknown noise coefficient(s) {unknown}")
        return cls(**kw, events=events, event_tau=event_tau, post_tau=post_tau, overlap=overlap,
                   event_field=event_field, bias_form=bias_form, scale=scale)


def envelopes(time: np.ndarray, events: np.ndarray, event_tau: float, post_tau: float, overlap: str = "nearest"):
    """``(w, p)``, each shape (T,): two-sided and one-sided (after) exponential envelopes of ``events``.

    ``overlap="sum"``: root-sum-square over every event instead of the nearest one."""
    ev = np.sort(np.asarray(events, dtype=float).ravel())
    if ev.size == 0:
        z = np.zeros_like(time, dtype=float)
        return z, z.copy()
    if overlap == "sum":
        d = time[:, None] - ev[None, :]
        w2 = np.exp(-2.0 * np.abs(d) / event_tau).sum(axis=1)
        p2 = np.where(d >= 0, np.exp(-2.0 * np.clip(d, 0.0, None) / post_tau), 0.0).sum(axis=1)
        return np.sqrt(w2), np.sqrt(p2)
    j = np.searchsorted(ev, time, side="right")  # ev[j-1] <= t < ev[j]
    prev = ev[np.maximum(j - 1, 0)]
    nxt = ev[np.minimum(j, ev.size - 1)]
    gap = np.minimum(np.abs(time - prev), np.abs(nxt - time))
    w = np.exp(-gap / event_tau)
    since = time - prev
    p = np.where((j > 0) & (since >= 0), np.exp(-np.clip(since, 0.0, None) / post_tau), 0.0)
    return w, p


def read_only(fields: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``fields`` with every array made read-only (kept in a cache, they are shared by every caller)."""
    for array in fields.values():
        array.setflags(write=False)
    return fields


class FieldNoise:
    """The observation model of one simulator: channel coefficients, envelope and drift time scales.

    ``channels``: one :class:`ChannelNoise` per channel, in channel order; ``dt`` (s) the sample
    interval; ``event_tau``, ``post_tau``, ``drift_tau`` in seconds; ``salt`` separates the random
    streams of different simulators.
    """

    def __init__(self, channels: tuple[ChannelNoise, ...], dt: float, event_tau: float, post_tau: float,
                 drift_tau: float, salt: int):
        self.channels = tuple(channels)
        self.dt, self.event_tau, self.post_tau, self.drift_tau = float(dt), float(event_tau), float(post_tau), float(drift_tau)
        self.salt = int(salt)
        self._half = int(round(4 * self.drift_tau / self.dt))
        self._cache: dict[tuple[int, int], dict[str, np.ndarray]] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """Picklable (worker processes started by forkserver/spawn): the moment cache and lock stay behind."""
        state = dict(self.__dict__)
        state["_cache"], state["_lock"] = {}, None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ fields
    @property
    def n_channels(self) -> int:
        return len(self.channels)

    def fields(self, seeds, n: int) -> dict[str, np.ndarray]:
        """Standard fields per seed: ``z{c}``, ``d{c}`` shape (len(seeds), n); ``b{c}`` shape (len(seeds),).

        Seed ``s`` uses ``np.random.default_rng([s, salt])`` drawing in a fixed order, so a seed's
        fields do not depend on the other seeds drawn with it.
        """
        seeds = list(seeds)
        m, C, H = len(seeds), self.n_channels, self._half
        width = n + 2 * H
        z = np.empty((C, m, n))
        raw = np.empty((C, m, width))
        b = np.empty((C, m))
        for i, s in enumerate(seeds):
            rng = np.random.default_rng([int(s), self.salt])
            for c in range(C):
                z[c, i] = rng.standard_normal(n)
                raw[c, i] = rng.standard_normal(width)
                b[c, i] = rng.standard_normal()
        nfft = next_fast_len(width + 2 * H)
        kf = self._kernel_fft(nfft)
        d = np.fft.irfft(np.fft.rfft(raw, nfft, axis=2) * kf, nfft, axis=2)[:, :, 2 * H: 2 * H + n]
        out = {}
        for c in range(C):
            out[f"z{c}"], out[f"d{c}"], out[f"b{c}"] = z[c], d[c], b[c]
        return out

    #: how many ``(seed, n)`` field sets :meth:`seed_fields` keeps
    SEED_FIELDS_KEPT = 8

    @lru_cache(maxsize=SEED_FIELDS_KEPT)
    def seed_fields(self, seed: int, n: int) -> dict[str, np.ndarray]:
        """``fields([seed], n)``, read-only, the :data:`SEED_FIELDS_KEPT` most recent kept: the samples of an
        episode share one noise seed (:func:`tsagent_plugins.tasks.tracebench.files.noise_seed`), so an episode
        of 25 samples of one length drew and filtered the same fields 25 times (60% of its noise time)."""
        return read_only(self.fields([seed], n))

    @lru_cache(maxsize=8)
    def _kernel_fft(self, nfft: int) -> np.ndarray:
        j = np.arange(-self._half, self._half + 1)
        ker = np.exp(-0.5 * (j * self.dt / self.drift_tau) ** 2)
        ker /= np.sqrt(np.sum(ker * ker))
        return np.fft.rfft(ker, nfft)

    # ------------------------------------------------------------------ amplitudes
    def amplitudes(self, time: np.ndarray, values: np.ndarray, events: np.ndarray, kappa: float):
        """``(A, D, B, delta)``: white, drift and bias amplitudes and the quantisation offset, each (C, T)."""
        time = np.asarray(time, dtype=float)
        yt = np.ascontiguousarray(np.asarray(values, dtype=float).T)
        C, T = yt.shape
        A = np.zeros((C, T))
        D = np.zeros((C, T))
        B = np.zeros((C, T))
        delta = np.zeros((C, T))
        for c, ch in enumerate(self.channels):
            y = yt[c]
            s = float(np.sqrt(np.mean(y * y))) if ch.scale == "rms" and T else float(np.abs(y).max(initial=0.0))
            var = np.full(T, (ch.base * s) ** 2)
            dvar = np.full(T, (ch.drift * s) ** 2)
            if ch.event or ch.post_event:
                taus = (ch.event_tau or self.event_tau, ch.post_tau or self.post_tau)
                w, p = envelopes(time, time[y != 0.0] if ch.events == "active" else events, *taus, ch.overlap)
                if ch.event_field == "drift":
                    dvar = dvar + (ch.event * s * w) ** 2
                else:
                    var = var + (ch.event * s * w) ** 2
                var = var + (ch.post_event * s * p) ** 2
            if ch.hetero:
                var = var + ch.hetero ** 2 * s * np.abs(y)
            A[c] = kappa * np.sqrt(var)
            D[c] = kappa * np.sqrt(dvar)
            B[c] = kappa * ch.bias * (y if ch.bias_form == "gain" else s)
            if ch.quant_floor or ch.quant_scale:
                step = max(ch.quant_floor, ch.quant_scale * kappa * s)
                if step > 0:
                    delta[c] = step * np.round(y / step) - y
        return A, D, B, delta

    def _check(self, values: np.ndarray, kappa: float) -> None:
        if values.ndim != 2 or values.shape[1] != self.n_channels:
            raise ValueError(f"clean values must have shape (T, {self.n_channels}), got {values.shape}")
        if not np.isfinite(kappa) or kappa < 0:
            raise ValueError(f"kappa must be a finite number >= 0, got {kappa}")

    # ------------------------------------------------------------------ model
    def observe(self, time: np.ndarray, values: np.ndarray, events: np.ndarray, kappa: float, seed: int) -> np.ndarray:
        """One draw of ``p_kappa(. | y)`` for ``seed >= 0``: noisy copy of ``values`` (T, C)."""
        values = np.asarray(values, dtype=float)
        self._check(values, kappa)
        if int(seed) < 0:
            raise ValueError(f"noise seed must be >= 0, got {seed}")
        if kappa == 0:
            return values.copy()
        A, D, B, delta = self.amplitudes(time, values, events, kappa)
        f = self.seed_fields(int(seed), values.shape[0])
        out = values.copy()
        for c in range(self.n_channels):
            out[:, c] += delta[c] + A[c] * f[f"z{c}"][0] + D[c] * f[f"d{c}"][0] + B[c] * f[f"b{c}"][0]
        return out

    _CHUNK = 64

    def moments(self, n_seeds: int, n: int) -> dict[str, np.ndarray]:
        """Per-sample means over seeds ``0..n_seeds-1`` of the fields and their products (cached)."""
        key = (int(n_seeds), int(n))
        with self._lock:
            hit = self._cache.get(key)
            if hit is not None:
                return hit
            acc: dict[str, np.ndarray] = {}
            for start in range(0, n_seeds, self._CHUNK):
                f = self.fields(range(start, min(start + self._CHUNK, n_seeds)), n)
                for c in range(self.n_channels):
                    z, d, b = f[f"z{c}"], f[f"d{c}"], f[f"b{c}"][:, None]
                    parts = {f"z{c}": z.sum(0), f"d{c}": d.sum(0), f"b{c}": b.sum(0),
                             f"zz{c}": np.einsum("ij,ij->j", z, z), f"dd{c}": np.einsum("ij,ij->j", d, d),
                             f"bb{c}": (b * b).sum(0), f"zd{c}": np.einsum("ij,ij->j", z, d),
                             f"zb{c}": (z * b).sum(0), f"db{c}": (d * b).sum(0)}
                    for k, v in parts.items():
                        acc[k] = acc.get(k, 0.0) + v
            out = {k: np.broadcast_to(v / n_seeds, (n,)).copy() for k, v in acc.items()}
            self._cache[key] = out
            return out

    def noise_power(self, time: np.ndarray, values: np.ndarray, events: np.ndarray, kappa: float,
                    n_seeds: int) -> np.ndarray:
        """Exact ``mean_{s < n_seeds} (observe(.., s) - values)^2`` per sample, shape (T, C)."""
        values = np.asarray(values, dtype=float)
        self._check(values, kappa)
        if n_seeds < 1:
            raise ValueError(f"n_seeds must be >= 1, got {n_seeds}")
        if kappa == 0:
            return np.zeros_like(values)
        A, D, B, delta = self.amplitudes(time, values, events, kappa)
        mo = self.moments(n_seeds, values.shape[0])
        out = np.empty((self.n_channels, values.shape[0]))
        for c in range(self.n_channels):
            a, d, b, dl = A[c], D[c], B[c], delta[c]
            out[c] = (dl * dl + a * a * mo[f"zz{c}"] + d * d * mo[f"dd{c}"] + b * b * mo[f"bb{c}"]
                      + 2 * a * d * mo[f"zd{c}"] + 2 * a * b * mo[f"zb{c}"] + 2 * d * b * mo[f"db{c}"]
                      + 2 * dl * (a * mo[f"z{c}"] + d * mo[f"d{c}"] + b * mo[f"b{c}"]))
        return np.ascontiguousarray(out.T)

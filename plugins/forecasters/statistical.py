"""Statistical baseline forecasters on statsmodels (Dr-CiK Appendix G "Forecasters").

Each produces ``request.n_samples`` sample paths (default S = 25) seeded by
``request.seed`` and ignores the text context (``uses_context = False``; the
Forecast's ``info["context_ignored"]`` says when text was given):

- ``naive``: last value + cumulative sum of first differences bootstrapped from
  the whole history;
- ``ses``: simple exponential smoothing, optimized smoothing level, simulated;
- ``ets``: ETSModel with additive errors, additive trend vs level only chosen by
  AIC, no seasonality, simulated;
- ``arima``: lowest AIC over p <= 3, d <= 2, q <= 3 (48 models), simulated;
- ``sarima``: seasonal order (1, 0, 1, m) with m = ``request.seasonal_period``,
  non-seasonal order by AIC over {0, 1}^3, simulated.

Bounds: ETS/SES fit on the last 2,000 points, ARIMA on the last 1,000 and SARIMA
on the last max(1,000, 3m); the release's longest history is 6,528 points.
Simulation is linear in the horizon (longest: 2,798).

Time limit (``request.time_limit`` seconds) and fallback chains — each stage
that is not the first is recorded in ``Forecast.fallback``:

- naive -> ``last-value`` (history of one point: constant paths);
- ses -> ``naive``;
- ets -> ``ses`` -> ``naive``;
- arima -> ``arima-small-grid`` (best of p, d, q in {0, 1}, fitted first, so
  available whenever those 8 fits finished before the limit) -> ``ses`` -> ``naive``;
- sarima -> ``arima-small-grid`` (the same non-seasonal grid; skipped once the
  time limit has passed) -> ``ses`` -> ``naive``.  A seasonal period above
  :data:`MAX_SEASONAL_PERIOD` (state space too large) goes straight to the
  first fallback.

The limit is checked before each fit, at each optimizer iteration and at each
likelihood evaluation (measured: a 60 s limit on SARIMA with m = 288 over 1,000
points returned the SES fallback after 62.8 s).  SES and naive are not
time-limited (their cost is linear and bounded).

A seasonal period m with fewer than m + 1 fitted points leaves the seasonal
coefficients without any pair of observations one season apart: they are
pinned to 0, the model is fitted as the non-seasonal grid, and
``info["seasonal"]`` records it (a property of the data, not a fallback).
"""

from __future__ import annotations

import importlib
import itertools
import math
from typing import TYPE_CHECKING, Callable

from harness import Forecast, Forecaster, ForecastError, ForecastRequest, lazy_module
from harness import hookimpl
from tsagent_plugins.forecasters._common import Deadline, OutOfTime, as_paths, check_request, quiet, warning_counts

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

MAX_SEASONAL_PERIOD = 400
ES_FIT_POINTS = 2000      # SES / ETS fit window (last points)
#: statsmodels loads when a model is first fitted, not when the plugin is registered (start-up cost).
_STATSMODELS = {"ARIMA": "statsmodels.tsa.arima.model", "ETSModel": "statsmodels.tsa.exponential_smoothing.ets",
                "SimpleExpSmoothing": "statsmodels.tsa.holtwinters"}


def __getattr__(name: str):
    if name not in _STATSMODELS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(importlib.import_module(_STATSMODELS[name]), name)
    return value


def _statsmodels(name: str):
    """The statsmodels class ``name`` (a module attribute, so tests can replace it)."""
    return globals()[name] if name in globals() else __getattr__(name)


ARIMA_FIT_POINTS = 1000   # ARIMA fit window; SARIMA uses max(this, 3m)
SMALL_GRID = list(itertools.product((0, 1), (0, 1), (0, 1)))
FULL_GRID = SMALL_GRID + [o for o in itertools.product(range(4), range(3), range(4)) if o not in SMALL_GRID]


class _Skip(Exception):
    """A stage that cannot run here (the message says why); the chain moves on."""


class _Stage:
    """One link of a fallback chain.  ``timed``: skipped once the time limit has passed,
    unless ``reuses_fits`` (it then only reuses fits that finished in time)."""

    def __init__(self, name: str, run: Callable, timed: bool, reuses_fits: bool = False):
        self.name, self.run, self.timed, self.reuses_fits = name, run, timed, reuses_fits


class StatisticalForecaster(Forecaster):
    """Runs the stages of :meth:`stages` in order; the first that succeeds gives the forecast."""

    uses_context = False
    max_fit_points = ARIMA_FIT_POINTS

    def stages(self) -> list[_Stage]:
        raise NotImplementedError

    def forecast(self, request: ForecastRequest) -> Forecast:
        y, horizon = check_request(request)
        deadline = Deadline(request.time_limit)
        info: dict = {"uses_context": False, "context_ignored": request.context is not None,
                      "n_history": len(y)}
        problems: list[str] = []
        for i, stage in enumerate(self.stages()):
            if stage.timed and deadline.expired() and not stage.reuses_fits:
                problems.append(f"{stage.name}: skipped, time limit of {request.time_limit:g} s passed")
                continue
            rng = np.random.default_rng(request.seed)
            caught: list = []
            try:
                with quiet() as caught:
                    samples = stage.run(y, horizon, request, rng, deadline, info)
            except OutOfTime:
                problems.append(f"{stage.name}: time limit of {request.time_limit:g} s reached")
                continue
            except _Skip as exc:
                problems.append(f"{stage.name}: {exc}")
                continue
            except Exception as exc:  # noqa: BLE001 - any model failure moves down the chain
                problems.append(f"{stage.name}: {type(exc).__name__}: {exc}")
                continue
            finally:
                for key, n in warning_counts(caught).items():  # recorded in the row's fitted_model
                    fit_warnings = info.setdefault("fit_warnings", {})
                    fit_warnings[key] = fit_warnings.get(key, 0) + n
            if problems:
                info["fallback_reasons"] = problems
            info["time_s"] = round(deadline.elapsed(), 4)
            return Forecast(samples=samples, fallback=None if i == 0 else stage.name, info=info)
        raise ForecastError(f"{self.name}: every stage failed: " + "; ".join(problems))


# -- building blocks ---------------------------------------------------------------

def naive_paths(y: np.ndarray, horizon: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Last value + cumulative sum of first differences drawn with replacement from ``y``.  (S, H)."""
    diffs = np.diff(y)
    if len(diffs) == 0:
        raise _Skip("history of one point has no differences")
    steps = rng.choice(diffs, size=(n_samples, horizon), replace=True)
    return y[-1] + np.cumsum(steps, axis=1)


def _naive(y, horizon, request, rng, deadline, info):
    return naive_paths(y, horizon, request.n_samples, rng)


def _last_value(y, horizon, request, rng, deadline, info):
    return np.full((request.n_samples, horizon), y[-1], dtype=float)


def _ses(y, horizon, request, rng, deadline, info, tail=ES_FIT_POINTS):
    fit_y = y[-tail:]
    res = _statsmodels("SimpleExpSmoothing")(fit_y, initialization_method="estimated").fit(optimized=True)
    info["ses"] = {"smoothing_level": float(res.params["smoothing_level"]), "fit_points": len(fit_y)}
    sim = res.simulate(horizon, anchor="end", repetitions=request.n_samples, error="add", rng=rng)
    return as_paths(sim, horizon, request.n_samples)


def _ets(y, horizon, request, rng, deadline, info, tail=ES_FIT_POINTS):
    fit_y = y[-tail:]
    best = None
    tried = {}
    for trend in ("add", None):
        deadline.check()
        try:
            res = _statsmodels("ETSModel")(fit_y, error="add", trend=trend, damped_trend=False).fit(
                disp=False, callback=deadline.check)
        except OutOfTime:
            raise
        except Exception as exc:  # noqa: BLE001
            tried[str(trend)] = f"failed: {type(exc).__name__}"
            continue
        tried[str(trend)] = float(res.aic)
        if math.isfinite(res.aic) and (best is None or res.aic < best[0]):
            best = (res.aic, trend, res)
    if best is None:
        raise _Skip(f"no ETS model could be fitted ({tried})")
    info["ets"] = {"trend": best[1], "aic": float(best[0]), "aic_by_trend": tried, "fit_points": len(fit_y)}
    sim = best[2].simulate(horizon, anchor="end", repetitions=request.n_samples, rng=rng)
    return as_paths(sim, horizon, request.n_samples)


def _checked(loglike, deadline):
    """Wrap a model's log-likelihood so the deadline is checked at every evaluation: one
    optimizer iteration (about 2k + 1 evaluations with numerical gradients) of a large
    seasonal state space takes tens of seconds, too coarse for the time limit."""

    def loglike_checked(params, *args, **kwargs):
        deadline.check()
        return loglike(params, *args, **kwargs)

    return loglike_checked


def _fit_grid(y, orders, deadline, cache, seasonal=(0, 0, 0, 0)):
    """Fit each order (cached by order); return the lowest-AIC fit.  Raises OutOfTime."""
    for order in orders:
        if (order, seasonal) in cache:
            continue
        deadline.check()
        try:
            model = _statsmodels("ARIMA")(y, order=order, seasonal_order=seasonal)
            model.loglike = _checked(model.loglike, deadline)
            res = model.fit(method_kwargs={"callback": deadline.check}, cov_type="none")
            cache[(order, seasonal)] = res if math.isfinite(res.aic) else None
        except OutOfTime:
            raise
        except Exception:  # noqa: BLE001 - a model that cannot be fitted is left out
            cache[(order, seasonal)] = None
    fits = [(cache[(o, seasonal)].aic, o, cache[(o, seasonal)]) for o in orders if cache.get((o, seasonal))]
    if not fits:
        raise _Skip("no order of the grid could be fitted")
    return min(fits, key=lambda f: f[0]), sum(1 for o in orders if cache.get((o, seasonal)) is None)


def _simulate(res, horizon, request, rng):
    sim = res.simulate(horizon, anchor="end", repetitions=request.n_samples, rng=rng)
    return as_paths(sim, horizon, request.n_samples)


# -- forecasters ---------------------------------------------------------------------

class NaiveForecaster(StatisticalForecaster):
    """Bootstrapped random walk from the last observed value."""

    name = "naive"

    def stages(self):
        return [_Stage("naive", _naive, timed=False), _Stage("last-value", _last_value, timed=False)]


class SESForecaster(StatisticalForecaster):
    """statsmodels SimpleExpSmoothing with optimized smoothing level (last 2,000 points)."""

    name = "ses"

    def stages(self):
        return [_Stage("ses", _ses, timed=False), _Stage("naive", _naive, timed=False)]


class ETSForecaster(StatisticalForecaster):
    """statsmodels ETSModel, additive trend vs level only by AIC, no seasonality (last 2,000 points)."""

    name = "ets"

    def stages(self):
        return [_Stage("ets", _ets, timed=True), _Stage("ses", _ses, timed=False),
                _Stage("naive", _naive, timed=False)]


class _GridStages:
    """Per-call state shared by the ARIMA stages (the fit cache)."""

    def __init__(self, fit_points: int):
        self.cache: dict = {}
        self.fit_points = fit_points

    def small_grid(self, y, horizon, request, rng, deadline, info):
        fit_y = y[-self.fit_points:]
        missing = [o for o in SMALL_GRID if ((o, (0, 0, 0, 0)) not in self.cache)]
        if missing and deadline.expired():
            raise _Skip(f"{len(missing)} of the {len(SMALL_GRID)} small-grid fits did not finish in time")
        (aic, order, res), failed = _fit_grid(fit_y, SMALL_GRID, deadline, self.cache)
        info["arima"] = {"order": order, "aic": float(aic), "grid": "p,d,q in {0,1}", "failed_fits": failed,
                         "fit_points": len(fit_y)}
        return _simulate(res, horizon, request, rng)


class ARIMAForecaster(StatisticalForecaster):
    """Lowest-AIC ARIMA over p <= 3, d <= 2, q <= 3 (statsmodels; last 1,000 points).

    ``max_p``, ``max_d``, ``max_q`` narrow the grid (the registered instance uses the paper's).
    """

    name = "arima"

    def __init__(self, max_p: int = 3, max_d: int = 2, max_q: int = 3):
        self.grid = [o for o in FULL_GRID if o[0] <= max_p and o[1] <= max_d and o[2] <= max_q]
        self.grid_text = f"p<={max_p}, d<={max_d}, q<={max_q}"

    def stages(self):
        grid = _GridStages(self.max_fit_points)

        def full(y, horizon, request, rng, deadline, info):
            fit_y = y[-self.max_fit_points:]
            (aic, order, res), failed = _fit_grid(fit_y, self.grid, deadline, grid.cache)
            info["arima"] = {"order": order, "aic": float(aic), "grid": self.grid_text,
                             "failed_fits": failed, "fit_points": len(fit_y)}
            return _simulate(res, horizon, request, rng)

        return [_Stage("arima", full, timed=True),
                _Stage("arima-small-grid", grid.small_grid, timed=True, reuses_fits=True),
                _Stage("ses", _ses, timed=False), _Stage("naive", _naive, timed=False)]


class SARIMAForecaster(StatisticalForecaster):
    """Seasonal order (1, 0, 1, m); non-seasonal (p, d, q) by AIC over {0, 1}^3 (statsmodels)."""

    name = "sarima"

    def stages(self):
        grid = _GridStages(self.max_fit_points)

        def seasonal(y, horizon, request, rng, deadline, info):
            m = int(request.seasonal_period)
            if m > MAX_SEASONAL_PERIOD:
                raise _Skip(f"seasonal period {m} > {MAX_SEASONAL_PERIOD}: state space too large")
            fit_points = max(self.max_fit_points, 3 * m)
            fit_y = y[-fit_points:]
            if m <= 1:
                terms, note = (0, 0, 0, 0), "none: seasonal period 1"
            elif len(fit_y) <= m:
                terms = (0, 0, 0, 0)
                note = (f"pinned to 0: {len(fit_y)} observations < m + 1 = {m + 1}, "
                        "no pair of observations one season apart")
            else:
                terms, note = (1, 0, 1, m), f"(1, 0, 1, {m}) fitted"
            (aic, order, res), failed = _fit_grid(fit_y, SMALL_GRID, deadline, grid.cache, seasonal=terms)
            info["seasonal"] = note
            info["sarima"] = {"order": order, "seasonal_order": terms, "aic": float(aic),
                              "failed_fits": failed, "fit_points": len(fit_y)}
            return _simulate(res, horizon, request, rng)

        return [_Stage("sarima", seasonal, timed=True), _Stage("arima-small-grid", grid.small_grid, timed=True),
                _Stage("ses", _ses, timed=False), _Stage("naive", _naive, timed=False)]


FORECASTERS = (NaiveForecaster, SESForecaster, ETSForecaster, ARIMAForecaster, SARIMAForecaster)


@hookimpl
def register_forecasters(register):
    for cls in FORECASTERS:
        register(cls())

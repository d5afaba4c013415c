"""A third-party forecaster: a random walk with drift (the drift and step spread fitted on the history).

Sample paths: S paths, each the last value plus the cumulated drift and Gaussian steps of the history's
step standard deviation, drawn from ``request.seed``.  Reads no text context.
"""

from __future__ import annotations

from harness import Forecast, ForecastError, Forecaster, ForecastRequest, hookimpl, lazy_module

np = lazy_module("numpy")


class Drift(Forecaster):
    name = "drift"
    uses_context = False

    def forecast(self, request: ForecastRequest) -> Forecast:
        values = request.history.to_numpy(dtype=float)
        if len(values) < 2 or not np.isfinite(values).all():
            raise ForecastError("drift needs at least two history values, all finite")
        steps = np.diff(values)
        drift, spread = steps.mean(), steps.std(ddof=1) if len(steps) > 1 else 0.0
        horizon = len(request.future_index)
        rng = np.random.default_rng(request.seed)
        noise = rng.normal(drift, spread, size=(request.n_samples, horizon))
        return Forecast(samples=values[-1] + np.cumsum(noise, axis=1), info={"drift": float(drift)})


@hookimpl
def register_forecasters(register):
    register(Drift())

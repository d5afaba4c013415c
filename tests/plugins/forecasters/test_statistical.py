"""Statistical forecasters: the paper's models, the fallback chains, bounds, and the sample tasks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.contracts import ForecastRequest
from harness.plugins import Plugins
from harness.testing.forecaster import synthetic_request
from tsagent_plugins.forecasters import statistical as st
from tsagent_plugins.forecasters.statistical import (FULL_GRID, SMALL_GRID, ARIMAForecaster, ETSForecaster,
                                             NaiveForecaster, SARIMAForecaster, SESForecaster)
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.forecast.metrics import OK, score_task


def _request(values, horizon=5, **kw):
    index = pd.date_range("2025-01-01", periods=len(values) + horizon, freq="h")
    return ForecastRequest(history=pd.Series(np.asarray(values, float), index=index[:len(values)]),
                           future_index=index[len(values):], **kw)


def test_registered_through_the_hook():
    plugins = Plugins(load_entrypoints=False)
    plugins.add(st, "statistical-forecasters")
    assert sorted(plugins.registry("forecaster")) == ["arima", "ets", "naive", "sarima", "ses"]
    assert not plugins.problems
    assert all(not r.obj.uses_context for r in plugins.registry("forecaster").values())


def test_grids_are_the_papers():
    assert len(FULL_GRID) == 48 and set(FULL_GRID) == {(p, d, q) for p in range(4) for d in range(3)
                                                       for q in range(4)}
    assert FULL_GRID[:8] == SMALL_GRID and len(set(SMALL_GRID)) == 8


def test_naive_bootstraps_historical_differences():
    y = np.array([10.0, 12.0, 11.0, 15.0, 14.0])
    out = NaiveForecaster().forecast(_request(y, horizon=30, n_samples=40, seed=3))
    steps = np.diff(np.concatenate([np.full((40, 1), y[-1]), out.samples], axis=1), axis=1)
    assert set(np.round(steps, 9).ravel()) <= {2.0, -1.0, 4.0}
    assert set(np.round(steps, 9).ravel()) == {2.0, -1.0, 4.0}   # all differences get drawn
    assert out.fallback is None and out.info["context_ignored"] is False


def test_naive_single_point_falls_back_to_last_value():
    out = NaiveForecaster().forecast(_request([7.0], horizon=3, n_samples=4))
    assert out.fallback == "last-value" and (out.samples == 7.0).all()


def test_ses_optimizes_the_level():
    rng = np.random.default_rng(0)
    level = np.cumsum(rng.normal(0, 1, 200)) + 100          # random walk: optimal alpha near 1
    out = SESForecaster().forecast(_request(level, horizon=10, seed=1))
    assert out.info["ses"]["smoothing_level"] > 0.8
    noise = 100 + rng.normal(0, 1, 200)                     # white noise: alpha near 0
    out = SESForecaster().forecast(_request(noise, horizon=10, seed=1))
    assert out.info["ses"]["smoothing_level"] < 0.2
    assert abs(out.samples.mean() - 100) < 1.0


def test_ets_picks_trend_by_aic():
    t = np.arange(120.0)
    rng = np.random.default_rng(2)
    trend = ETSForecaster().forecast(_request(5 + 2 * t + rng.normal(0, 1, 120), horizon=10))
    assert trend.info["ets"]["trend"] == "add"
    flat = ETSForecaster().forecast(_request(50 + rng.normal(0, 1, 120), horizon=10))
    assert flat.info["ets"]["trend"] is None
    aics = flat.info["ets"]["aic_by_trend"]
    assert flat.info["ets"]["aic"] == min(aics.values())


def test_arima_recovers_an_ar1():
    rng = np.random.default_rng(4)
    y = np.zeros(400)
    for k in range(1, 400):
        y[k] = 0.8 * y[k - 1] + rng.normal()
    out = ARIMAForecaster(max_p=2, max_d=1, max_q=1).forecast(_request(y, horizon=5, seed=0))
    assert out.fallback is None
    assert out.info["arima"]["order"][1] == 0 and out.info["arima"]["order"][0] >= 1


def test_arima_falls_back_to_the_small_grid(monkeypatch):
    real = st.ARIMA

    class SlowBeyondSmallGrid(real):
        def fit(self, *a, **kw):
            if tuple(self.order) not in SMALL_GRID:
                raise st.OutOfTime()
            return super().fit(*a, **kw)

    monkeypatch.setattr(st, "ARIMA", SlowBeyondSmallGrid)
    out = ARIMAForecaster().forecast(synthetic_request(n=60))
    assert out.fallback == "arima-small-grid"
    assert out.info["arima"]["order"] in SMALL_GRID
    assert "arima: time limit" in out.info["fallback_reasons"][0]


def test_arima_tiny_limit_goes_to_ses():
    out = ARIMAForecaster().forecast(_request(np.arange(50.0), horizon=4, time_limit=0.0))
    assert out.fallback == "ses"
    assert out.info["fallback_reasons"] == [
        "arima: skipped, time limit of 0 s passed",
        "arima-small-grid: 8 of the 8 small-grid fits did not finish in time",
    ]


def test_ets_and_ses_fall_back(monkeypatch):
    def broken(*a, **kw):
        raise ValueError("cannot fit")

    monkeypatch.setattr(st, "ETSModel", broken)
    assert ETSForecaster().forecast(synthetic_request()).fallback == "ses"
    monkeypatch.setattr(st, "SimpleExpSmoothing", broken)
    assert ETSForecaster().forecast(synthetic_request()).fallback == "naive"
    assert SESForecaster().forecast(synthetic_request()).fallback == "naive"


def test_sarima_seasonal_period_rules():
    req = synthetic_request(n=72, horizon=12, period=24)
    out = SARIMAForecaster().forecast(dataclass_replace(req, seasonal_period=1))
    assert out.fallback is None and out.info["seasonal"] == "none: seasonal period 1"
    out = SARIMAForecaster().forecast(dataclass_replace(req, seasonal_period=500))
    assert out.fallback == "arima-small-grid"
    assert "state space too large" in out.info["fallback_reasons"][0]
    out = SARIMAForecaster().forecast(dataclass_replace(req, seasonal_period=100))
    assert out.fallback is None and out.info["seasonal"].startswith("pinned to 0: 72 observations < m + 1")


@pytest.mark.slow
def test_sarima_fits_the_seasonal_terms():
    out = SARIMAForecaster().forecast(synthetic_request(n=96, horizon=24, period=24))
    assert out.fallback is None and out.info["sarima"]["seasonal_order"] == (1, 0, 1, 24)


def dataclass_replace(obj, **kw):
    import dataclasses

    return dataclasses.replace(obj, **kw)


def test_long_series_stay_bounded():
    rng = np.random.default_rng(0)
    n, h = 6528, 2798
    y = 100 + 10 * np.sin(np.arange(n) * 2 * np.pi / 24) + np.cumsum(rng.normal(0, 0.1, n))
    req = _request(y, horizon=h, seasonal_period=24)
    for cls, key, bound in ((SESForecaster, "ses", 2000), (ETSForecaster, "ets", 2000)):
        out = cls().forecast(req)
        assert out.samples.shape == (25, h) and np.isfinite(out.samples).all()
        assert out.info[key]["fit_points"] == bound and out.fallback is None
    assert NaiveForecaster().forecast(req).samples.shape == (25, h)


FAST = [NaiveForecaster, SESForecaster, ETSForecaster]


@pytest.fixture(scope="module")
def sample_tasks():
    return load_tasks()


def _run_on_sample(cls, tasks):
    for task in tasks:
        out = cls().forecast(ForecastRequest(history=task.history, future_index=task.future_index,
                                             seasonal_period=task.seasonal_period, seed=0))
        assert out.fallback is None, (task.benchmark_id, out.info.get("fallback_reasons"))
        assert out.samples.shape == (25, task.horizon)
        assert score_task(out.samples, task.future.to_numpy()).status == OK


@pytest.mark.parametrize("cls", FAST, ids=lambda c: c.name)
def test_no_fallback_on_sample_tasks(cls, sample_tasks):
    _run_on_sample(cls, sample_tasks)


@pytest.mark.slow
@pytest.mark.parametrize("cls", [ARIMAForecaster, SARIMAForecaster], ids=lambda c: c.name)
def test_no_fallback_on_sample_tasks_grid_models(cls, sample_tasks):
    _run_on_sample(cls, sample_tasks)


def test_fit_warnings_are_recorded_in_the_forecasts_info(monkeypatch, recwarn):
    """A warning raised while fitting goes to ``info["fit_warnings"]`` (the row's fitted_model), not the console."""
    import warnings

    from statsmodels.tools.sm_exceptions import ConvergenceWarning

    real = st.SimpleExpSmoothing

    def warning_ses(*a, **kw):
        warnings.warn("failed to converge", ConvergenceWarning)
        return real(*a, **kw)

    monkeypatch.setattr(st, "SimpleExpSmoothing", warning_ses)
    out = SESForecaster().forecast(synthetic_request())
    assert out.fallback is None and out.info["fit_warnings"] == {"ConvergenceWarning: failed to converge": 1}
    assert not [w for w in recwarn if issubclass(w.category, ConvergenceWarning)]

"""Conformance tests every forecaster plugin must pass (S sample paths per task).

Fixture contract: every fixture is class-scoped, as a slow forecaster -- a pretrained time-series
model, an LLM behind the model proxy -- is built once per test class and each forecast it is asked for
is made once.  Override ``forecaster`` with ``@pytest.fixture(scope="class")`` over ``@classmethod``
(pytest deprecates class-scoped fixtures written as instance methods) to return an instance of your
:class:`harness.contracts.Forecaster`; optionally ``forecast_request`` the same way (the base request
the checks vary; ``request`` is a name pytest reserves).  A function-scoped override is refused by
pytest with a ``ScopeMismatch`` naming the fixture.  Each class's docstring lists its fixtures.

The kit asks for twelve forecasts per class: the base request (shared by the shape, history and
context checks through the class-scoped ``base_forecast`` fixture), the same request again (same
seed must reproduce), another seed, the base with a context text, a shorter and a longer horizon,
a constant history, a tiny time limit, and one ``forecast_batch`` of the base, a history with a NaN
and another seed, whose last is forecast alone too.  Each varied request gets its own copy of the history,
so a forecaster that mutates its input cannot hide it from the history check.

Areas (subclass the ones you want, or :class:`ForecasterTests` for all): :class:`ForecasterContractTests`
(type, shape, S and H), :class:`ForecasterSeedTests` (reproducible, seed-dependent),
:class:`ForecasterInputTests` (history untouched, context ignored unless used, constant history),
:class:`ForecasterTimeLimitTests` and :class:`ForecasterBatchTests` (``forecast_batch``).

Class attributes tune the checks:

- ``stochastic`` (True): different seeds must give different samples;
- ``tiny_time_limit`` (0.01 s) and ``prompt_seconds`` (10 s): with the tiny
  limit the forecaster must, within ``prompt_seconds``, either raise
  :class:`ForecastError` or return valid samples -- with ``Forecast.fallback``
  set unless it finished within ``tiny_time_limit + overrun_allowance``;
- ``overrun_allowance`` (0.5 s).

::

    import pytest
    from harness.testing.forecaster import ForecasterTests

    class TestMyForecaster(ForecasterTests):
        @pytest.fixture(scope="class")
        @classmethod
        def forecaster(cls):
            return MyForecaster()
"""


from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd
import pytest

from harness.contracts import Forecast, Forecaster, ForecastError, ForecastRequest


def synthetic_request(n: int = 96, horizon: int = 24, period: int = 24, seed: int = 0,
                      freq: str = "h") -> ForecastRequest:
    """A daily-seasonal hourly series with trend and noise, and the next ``horizon`` steps."""
    rng = np.random.default_rng(seed)
    t = np.arange(n + horizon)
    values = 50 + 0.1 * t + 10 * np.sin(2 * np.pi * t / period) + rng.normal(0, 1.0, n + horizon)
    index = pd.date_range("2025-01-01", periods=n + horizon, freq=freq)
    return ForecastRequest(history=pd.Series(values[:n], index=index[:n]), future_index=index[n:],
                           n_samples=25, seed=0, time_limit=120.0, seasonal_period=period)


@dataclasses.dataclass
class BaseForecast:
    """The forecast of the base request, made once per test class: ``forecast`` and the request's
    ``history`` as it was before the call."""

    forecast: Forecast
    history_before: pd.Series


class _Base:
    """The fixtures and helpers every area shares."""

    stochastic = True
    tiny_time_limit = 0.01
    prompt_seconds = 10.0
    overrun_allowance = 0.5

    # Class-scoped fixtures are class methods (pytest deprecates class-scoped instance-method fixtures:
    # each test gets a new instance, while the fixture runs once per class).
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls) -> Forecaster:
        pytest.fail("override the `forecaster` fixture (@pytest.fixture(scope=\"class\") over @classmethod) "
                    "to return your Forecaster instance")

    @pytest.fixture(scope="class")
    @classmethod
    def forecast_request(cls) -> ForecastRequest:
        return synthetic_request()

    @pytest.fixture(scope="class")
    @classmethod
    def base_forecast(cls, forecaster, forecast_request) -> BaseForecast:
        """The forecast of ``forecast_request`` itself (made once per class)."""
        before = forecast_request.history.copy()
        return BaseForecast(forecaster.forecast(forecast_request), before)

    # utilities ----------------------------------------------------------------
    @staticmethod
    def vary(request: ForecastRequest, **changes) -> ForecastRequest:
        """``request`` with ``changes``, on its own copy of the history (unless a history is given)."""
        changes.setdefault("history", request.history.copy())
        return dataclasses.replace(request, **changes)

    @staticmethod
    def assert_valid(forecast: Forecast, n_samples: int, horizon: int) -> None:
        assert isinstance(forecast, Forecast), f"forecast() returned {type(forecast).__name__}"
        samples = np.asarray(forecast.samples)
        assert samples.shape == (n_samples, horizon), f"samples {samples.shape}, expected (S, H) = " \
                                                      f"{(n_samples, horizon)}"
        assert np.issubdtype(samples.dtype, np.number), f"samples dtype {samples.dtype} is not numeric"
        assert np.isfinite(samples).all(), "samples contain NaN or infinite values"
        assert forecast.fallback is None or (isinstance(forecast.fallback, str) and forecast.fallback)
        assert isinstance(forecast.info, dict)


class ForecasterContractTests(_Base):
    """A :class:`harness.contracts.Forecaster` returning valid (S, H) samples for the S and H asked.

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

    def test_is_a_forecaster(self, forecaster):
        assert isinstance(forecaster, Forecaster)
        assert isinstance(forecaster.name, str) and forecaster.name
        assert isinstance(forecaster.uses_context, bool)

    def test_shape_and_finite(self, base_forecast, forecast_request):
        self.assert_valid(base_forecast.forecast, forecast_request.n_samples, len(forecast_request.future_index))

    def test_n_samples_and_horizon_respected(self, forecaster, forecast_request):
        short = self.vary(forecast_request, future_index=forecast_request.future_index[:1], n_samples=7)
        self.assert_valid(forecaster.forecast(short), 7, 1)
        index = forecast_request.future_index
        step = index[1] - index[0] if len(index) > 1 else pd.Timedelta(hours=1)
        longer_index = pd.DatetimeIndex([index[0] + k * step for k in range(37)])
        longer = self.vary(forecast_request, future_index=longer_index, n_samples=3)
        self.assert_valid(forecaster.forecast(longer), 3, 37)


class ForecasterSeedTests(_Base):
    """The same seed gives the same samples; another seed others (unless ``stochastic = False``).

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

    def test_seed_reproduces(self, forecaster, forecast_request, base_forecast):
        again = forecaster.forecast(self.vary(forecast_request))
        np.testing.assert_array_equal(np.asarray(again.samples), np.asarray(base_forecast.forecast.samples))

    def test_different_seeds_differ(self, forecaster, forecast_request, base_forecast):
        if not self.stochastic:
            pytest.skip("deterministic forecaster (stochastic = False)")
        other = forecaster.forecast(self.vary(forecast_request, seed=forecast_request.seed + 1))
        assert not np.array_equal(np.asarray(other.samples), np.asarray(base_forecast.forecast.samples)), \
            "seed has no effect"


class ForecasterInputTests(_Base):
    """The request's history is left as it was; the context changes nothing unless ``uses_context`` (then
    a forecast with it is still S valid paths); a constant history gives valid samples or a
    :class:`ForecastError`.

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

    def test_history_not_mutated(self, forecast_request, base_forecast):
        pd.testing.assert_series_equal(forecast_request.history, base_forecast.history_before)

    def test_context_ignored_unless_used(self, forecaster, forecast_request, base_forecast):
        with_text = forecaster.forecast(self.vary(forecast_request, context="Sales double next week."))
        if forecaster.uses_context:  # a forecaster reading the context still gives S valid paths with one
            self.assert_valid(with_text, forecast_request.n_samples, len(forecast_request.future_index))
            return
        np.testing.assert_array_equal(np.asarray(base_forecast.forecast.samples), np.asarray(with_text.samples))

    def test_constant_history(self, forecaster, forecast_request):
        flat = pd.Series(np.full(len(forecast_request.history), 3.0), index=forecast_request.history.index)
        try:
            result = forecaster.forecast(self.vary(forecast_request, history=flat))
        except ForecastError:
            return
        self.assert_valid(result, forecast_request.n_samples, len(forecast_request.future_index))


class ForecasterTimeLimitTests(_Base):
    """A tiny ``time_limit`` is met promptly: a :class:`ForecastError`, or valid samples (with a fallback
    named when the forecaster overran).  Timed after the base forecast, so one-off costs (imports, loading
    weights) are not counted against the limit.

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

    def test_time_limit_honoured(self, forecaster, forecast_request, base_forecast):
        request = self.vary(forecast_request, time_limit=self.tiny_time_limit)
        start = time.monotonic()
        try:
            result = forecaster.forecast(request)
        except ForecastError:
            result = None
        elapsed = time.monotonic() - start
        assert elapsed <= self.prompt_seconds, f"took {elapsed:.1f} s with a {self.tiny_time_limit} s limit"
        if result is None:
            return
        self.assert_valid(result, request.n_samples, len(request.future_index))
        if result.fallback is None:
            assert elapsed <= self.tiny_time_limit + self.overrun_allowance, (
                f"no fallback recorded but took {elapsed:.2f} s with a {self.tiny_time_limit} s limit")


class ForecasterBatchTests(_Base):
    """``forecast_batch`` gives each request, in order, what :meth:`forecast` gives it alone (the same paths
    under the same seed), and a request that fails -- here a history with a NaN, which the contract rules
    out: an exception or valid samples -- costs the others nothing; ``batch_size`` is an integer >= 1.
    The batch's two valid requests share history length and horizon, so a batching forecaster forecasts
    them in one call.

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

    def test_batch_equals_forecasts_alone(self, forecaster, forecast_request, base_forecast):
        size = forecaster.batch_size
        assert isinstance(size, int) and not isinstance(size, bool) and size >= 1, f"batch_size {size!r}"
        broken = forecast_request.history.copy()
        broken.iloc[len(broken) // 2] = np.nan
        other = self.vary(forecast_request, seed=forecast_request.seed + 1)
        out = forecaster.forecast_batch([self.vary(forecast_request), self.vary(forecast_request, history=broken),
                                         other])
        assert isinstance(out, list) and len(out) == 3, f"forecast_batch gave {out!r} for 3 requests"
        for i in (0, 2):
            assert not isinstance(out[i], Exception), f"request {i} failed in the batch: {out[i]!r}"
        horizon = len(forecast_request.future_index)
        if not isinstance(out[1], Exception):
            self.assert_valid(out[1], forecast_request.n_samples, horizon)
        self.assert_valid(out[0], forecast_request.n_samples, horizon)
        np.testing.assert_array_equal(np.asarray(out[0].samples), np.asarray(base_forecast.forecast.samples))
        np.testing.assert_array_equal(np.asarray(out[2].samples), np.asarray(forecaster.forecast(other).samples))


class ForecasterTests(ForecasterContractTests, ForecasterSeedTests, ForecasterInputTests, ForecasterTimeLimitTests,
                      ForecasterBatchTests):
    """Aggregate conformance suite for :class:`harness.contracts.Forecaster`: every area above, twelve
    forecasts per class.

    Fixtures (all class-scoped: ``@pytest.fixture(scope="class")`` over ``@classmethod``):

    - ``forecaster`` (required, class scope): your :class:`harness.contracts.Forecaster` instance;
    - ``forecast_request`` (optional, class scope): the base :class:`ForecastRequest` the checks vary
      (default: :func:`synthetic_request`, 96 hourly values, H = 24, S = 25);
    - ``base_forecast`` (provided, class scope): the :class:`BaseForecast` of ``forecast_request``.
    """

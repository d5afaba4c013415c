"""The built-in statistical forecasters run the shipped forecaster conformance suite; the suite builds a
forecaster and makes each forecast once per class."""

from __future__ import annotations

import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tsagent_plugins.forecasters.statistical import (ARIMAForecaster, ETSForecaster, NaiveForecaster, SARIMAForecaster,
                                             SESForecaster)


pytest_plugins = ["pytester"]

COUNTING = """
import numpy as np
import pytest
from harness.contracts import Forecast, Forecaster
from harness.testing.forecaster import ForecasterTests

BUILT = []


class Counting(Forecaster):
    name = "counting"

    def __init__(self):
        BUILT.append(self)
        self.calls = 0

    def forecast(self, request):
        self.calls += 1
        rng = np.random.default_rng(request.seed)
        return Forecast(rng.normal(size=(request.n_samples, len(request.future_index))))


class TestCounting(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return Counting()


def test_one_forecaster_and_twelve_forecasts_per_class():
    assert [f.calls for f in BUILT] == [12]
"""


def test_the_kit_fits_once_per_class_and_refuses_a_function_scoped_forecaster(pytester):
    pytester.makepyfile(test_counting=COUNTING)
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=11)  # the 10 kit checks, then the count
    pytester.makepyfile(test_function_scoped=COUNTING.replace('@pytest.fixture(scope="class")', "@pytest.fixture")
                        .replace("[12]", "[]"))
    result = pytester.runpytest("-p", "no:cacheprovider", "test_function_scoped.py")
    assert result.ret != 0 and "ScopeMismatch" in result.stdout.str()


class TestNaive(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return NaiveForecaster()


class TestSES(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return SESForecaster()


class TestETS(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return ETSForecaster()


class TestARIMASmallGrid(ForecasterTests):
    """The ARIMA machinery on a narrow grid (the paper's 48-model grid runs in the slow class)."""

    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return ARIMAForecaster(max_p=1, max_d=1, max_q=1)

    @pytest.fixture(scope="class")
    @classmethod
    def forecast_request(cls):
        return synthetic_request(n=48, horizon=12, period=6)


class TestSARIMAShortSeason(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return SARIMAForecaster()

    @pytest.fixture(scope="class")
    @classmethod
    def forecast_request(cls):
        return synthetic_request(n=36, horizon=12, period=4)


@pytest.mark.slow
class TestARIMAPaperGrid(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return ARIMAForecaster()


@pytest.mark.slow
class TestSARIMADaily(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return SARIMAForecaster()

"""The built-in statistical forecasters run the shipped forecaster conformance suite."""

from __future__ import annotations

import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tsagent_plugins.forecasters.statistical import (ARIMAForecaster, ETSForecaster, NaiveForecaster, SARIMAForecaster,
                                             SESForecaster)


class TestNaive(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return NaiveForecaster()


class TestSES(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return SESForecaster()


class TestETS(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return ETSForecaster()


class TestARIMASmallGrid(ForecasterTests):
    """The ARIMA machinery on a narrow grid (the paper's 48-model grid runs in the slow class)."""

    @pytest.fixture
    def forecaster(self):
        return ARIMAForecaster(max_p=1, max_d=1, max_q=1)

    @pytest.fixture
    def forecast_request(self):
        return synthetic_request(n=48, horizon=12, period=6)


class TestSARIMAShortSeason(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return SARIMAForecaster()

    @pytest.fixture
    def forecast_request(self):
        return synthetic_request(n=36, horizon=12, period=4)


@pytest.mark.slow
class TestARIMAPaperGrid(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return ARIMAForecaster()


@pytest.mark.slow
class TestSARIMADaily(ForecasterTests):
    @pytest.fixture
    def forecaster(self):
        return SARIMAForecaster()

"""A model-backed forecaster with no local model and no network fails at once with one clear line."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest

from harness.contracts import ForecastError, ForecastRequest
from tsagent_plugins.forecasters import chronos


def request() -> ForecastRequest:
    index = pd.date_range("2024-01-01", periods=20, freq="D")
    return ForecastRequest(history=pd.Series(np.arange(20.0), index=index),
                           future_index=pd.date_range("2024-01-21", periods=3, freq="D"), n_samples=2)


@pytest.mark.parametrize("how", ["env", "unreachable"])
def test_uncached_hub_id_offline_fails_at_once_in_one_line(monkeypatch, tmp_path, how):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))  # an empty cache
    if how == "env":
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:
        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.setattr(chronos, "hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(ForecastError):  # the first call also pays for imports, which a loaded machine slows
        chronos.ChronosForecaster("amazon/chronos-t5-not-cached").forecast(request())
    started = time.monotonic()
    with pytest.raises(ForecastError) as info:
        chronos.ChronosForecaster("amazon/chronos-t5-not-cached").forecast(request())
    assert time.monotonic() - started < 5  # no download retries
    message = str(info.value)
    assert "\n" not in message
    assert message == ("Chronos model 'amazon/chronos-t5-not-cached' is not a local folder (no local Chronos weights "
                       "configured: set the forecaster option model (or an agent profile's options.model) or "
                       "$HARNESS_CHRONOS_MODEL to a model folder)")


def test_missing_local_folder_names_the_folder(tmp_path):
    with pytest.raises(ForecastError, match="nothing-here' is not a local folder"):
        chronos.ChronosForecaster(tmp_path / "nothing-here").forecast(request())

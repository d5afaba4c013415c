"""Forecaster contract: history (+ optional text context) -> S sample paths.

A forecasting template scores the sample paths (e.g. with sCRPS).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: registering a forecaster loads neither library
    import numpy as np
    import pandas as pd


@dataclass
class ForecastRequest:
    """``history``: values indexed by timestamps (pd.Series, DatetimeIndex, no NaN).
    ``future_index``: the H timestamps to forecast.  ``context``: text or None.
    ``n_samples``: S.  ``seed``: RNG seed.  ``time_limit``: seconds.
    ``seasonal_period``: integer period (>= 1)."""

    history: pd.Series
    future_index: pd.DatetimeIndex
    context: str | None = None
    n_samples: int = 25
    seed: int = 0
    time_limit: float = 600.0
    seasonal_period: int = 1


@dataclass
class Forecast:
    """``samples``: shape (S, H), finite.  ``fallback``: name of the fallback used, or None.
    ``info``: free-form diagnostics (orders chosen, timings)."""

    samples: np.ndarray
    fallback: str | None = None
    info: dict = field(default_factory=dict)


class ForecastError(Exception):
    """The forecaster could not produce S valid samples; the message says why."""


class Forecaster(ABC):
    """Contract every forecaster implements.  ``uses_context``: whether text is read.

    ``batch_size``: how many requests :meth:`forecast_batch` gains from taking in one call (e.g. a
    pretrained model forecasting many series in one forward pass); 1 (the default): none, a caller may
    as well hand requests over one at a time.  A caller with many requests hands them over in chunks of
    ``batch_size``; the forecasts are the same either way (see :meth:`forecast_batch`)."""

    name: str
    uses_context: bool = False
    batch_size: int = 1

    @abstractmethod
    def forecast(self, request: ForecastRequest) -> Forecast:
        """Produce ``request.n_samples`` paths over ``request.future_index``; raise ForecastError."""

    def forecast_batch(self, requests: list[ForecastRequest]) -> list[Forecast | Exception]:
        """The forecasts of ``requests``, in order, each what :meth:`forecast` gives for that request alone
        (the same paths under the same seed).  A request that fails gets the exception :meth:`forecast`
        would raise in its place (a :class:`ForecastError`, or another exception for a crash) and costs the
        other requests nothing.  Default: :meth:`forecast` on one request at a time."""
        out: list[Forecast | Exception] = []
        for request in requests:
            try:
                out.append(self.forecast(request))
            except Exception as exc:  # noqa: BLE001 - this request's failure, handed back in its place
                out.append(exc)
        return out

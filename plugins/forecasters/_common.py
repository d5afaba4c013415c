"""Shared by the forecaster plugins: deadlines, request checks, sample-path shaping."""

from __future__ import annotations

import time
import warnings
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING

from harness import ForecastError, ForecastRequest, lazy_module

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")


class OutOfTime(Exception):
    """Raised inside a fit when the stage's deadline has passed."""


class Deadline:
    """A wall-clock budget in seconds (``time.monotonic``)."""

    def __init__(self, seconds: float):
        self.start = time.monotonic()
        self.end = self.start + max(0.0, float(seconds))

    def remaining(self) -> float:
        return self.end - time.monotonic()

    def expired(self) -> bool:
        return time.monotonic() >= self.end

    def check(self, *_args) -> None:
        """Raise :class:`OutOfTime` once expired (usable as an optimizer callback)."""
        if self.expired():
            raise OutOfTime()

    def elapsed(self) -> float:
        return time.monotonic() - self.start


def check_request(request: ForecastRequest) -> tuple[np.ndarray, int]:
    """The history as a float array and the horizon H; ForecastError for unusable requests."""
    y = np.asarray(request.history, dtype=float)
    if y.ndim != 1 or len(y) == 0:
        raise ForecastError("history must be a non-empty 1-D series")
    if not np.isfinite(y).all():
        raise ForecastError("history contains NaN or infinite values (the task loader interpolates them)")
    horizon = len(request.future_index)
    if horizon < 1:
        raise ForecastError("future_index is empty")
    if request.n_samples < 1:
        raise ForecastError(f"n_samples must be >= 1, got {request.n_samples}")
    return y, horizon


def as_paths(simulated, horizon: int, n_samples: int) -> np.ndarray:
    """statsmodels ``simulate`` output ((H, S), (H, 1, S), ...) -> finite (S, H) float array."""
    arr = np.asarray(simulated, dtype=float)
    if arr.size != horizon * n_samples:
        raise ValueError(f"simulation gave {arr.shape}, expected {horizon} x {n_samples}")
    paths = arr.reshape(horizon, n_samples).T.copy()
    if not np.isfinite(paths).all():
        raise ValueError("simulated paths are not finite")
    return paths


def check_samples(samples: object, n_samples: int, horizon: int) -> tuple[np.ndarray | None, str | None]:
    """A forecaster's ``samples`` as a finite float (S, H) array, or (None, the reason); never raises.

    Accepts anything numpy reads as a 2-D numeric array (lists, tuples, arrays);
    a generator, ragged or non-numeric data, NaN or infinity, no paths, more
    than ``n_samples`` paths, or paths of another length than ``horizon`` give a reason.
    """
    from harness import untrusted

    try:
        if not isinstance(samples, np.ndarray | list | tuple):
            return None, f"samples must be an array or a list of paths, got {untrusted.safe_str(type(samples).__name__, 60)}"
        with np.errstate(all="ignore"):
            arr = np.asarray(samples, dtype=float)
    except BaseException as exc:  # noqa: BLE001 - ragged lists, hostile objects, MemoryError
        return None, f"samples are not a numeric array ({type(exc).__name__}: {untrusted.safe_str(exc, 120)})"
    if arr.ndim != 2 or not 1 <= arr.shape[0] <= n_samples or arr.shape[1] != horizon:
        return None, f"samples have shape {arr.shape}, expected ({n_samples}, {horizon})"
    if not np.isfinite(arr).all():
        return None, "samples contain NaN or infinite values"
    return arr, None


@contextmanager
def quiet():
    """Inside a fit: record warnings instead of printing them, and keep BLAS on one thread.

    Yields the list of caught ``warnings.WarningMessage`` (see :func:`warning_counts`): a fit's
    convergence and estimation warnings belong to the episode's record, not the console.  Recording
    (rather than an "ignore" filter) also holds when statsmodels is first imported inside the block:
    ``statsmodels.tools.sm_exceptions`` then adds ``"always"`` filters for its warnings ahead of any
    "ignore", which printed the first fit's warnings.

    The state-space fits multiply small matrices; a multi-threaded BLAS on a
    loaded machine makes them many times slower (measured: a 48-model ARIMA grid
    took 31 s with OpenBLAS threads vs 4.8 s single-threaded at load 8 on 2 cores).
    """
    try:  # optional: keeps BLAS single-threaded inside fits (small matrices, shared cores); imported on use
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - without it fits still run, only slower under load
        threadpool_limits = None
    with ExitStack() as stack:
        caught = stack.enter_context(warnings.catch_warnings(record=True))
        warnings.simplefilter("always")
        stack.enter_context(np.errstate(all="ignore"))
        if threadpool_limits is not None:
            stack.enter_context(threadpool_limits(limits=1, user_api="blas"))
        yield caught


def warning_counts(caught: list) -> dict[str, int]:
    """``"<Category>: <message>" -> count`` of the warnings :func:`quiet` caught, first seen first."""
    counts: dict[str, int] = {}
    for w in caught:
        key = f"{w.category.__name__}: {w.message}"
        counts[key] = counts.get(key, 0) + 1
    return counts

"""Checks every pretrained time-series family shares (tiny random-init checkpoints)."""

from __future__ import annotations

import numpy as np

from harness.contracts import ForecastError


def check_family_basics(forecaster, request, folder):
    """One forecast from the tiny model at ``folder``: S x H finite paths, flagged untrained, the same
    under the same seed; an unknown option and a missing folder are refused with their reason."""
    out = forecaster.forecast(request)
    assert out.samples.shape == (request.n_samples, len(request.future_index))
    assert np.isfinite(out.samples).all() and out.fallback is None
    assert out.info["weights"] == "random-init" and out.info["flag_untrained"] is True
    assert out.info["model"] == str(folder) and out.info["device"] == "cpu"
    np.testing.assert_array_equal(forecaster.forecast(request).samples, out.samples)
    try:
        forecaster.configured(size="huge")
    except ValueError as exc:
        assert "unknown option(s) size" in str(exc)
    else:
        raise AssertionError("an unknown option was accepted")
    try:
        forecaster.configured(model=str(folder) + "-missing").forecast(request)
    except ForecastError as exc:
        assert "-missing" in str(exc)
    else:
        raise AssertionError("a missing model folder was accepted")
    return out

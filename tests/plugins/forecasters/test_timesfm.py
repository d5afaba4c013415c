"""timesfm: TimesFM 3 through ``TimesFM3Forecaster.from_pretrained`` on a tiny randomly initialised
model saved here with ``TimesFM3Torch.save_pretrained`` (no download, no patched module)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tests.plugins.forecasters.tsfm_support import check_family_basics

timesfm = pytest.importorskip("tsagent_plugins.forecasters.timesfm")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return timesfm.build_tiny_model(tmp_path_factory.mktemp("timesfm") / "tiny")


class TestTimesFMConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return timesfm.TimesFMForecaster(tiny, device="cpu")


def test_tiny_model_loads_through_the_package_and_paths_follow_its_quantiles(tiny):
    from timesfm3.torch import TimesFM3Forecaster

    forecaster = timesfm.TimesFMForecaster(tiny)
    request = synthetic_request(horizon=20)
    out = check_family_basics(forecaster, request, tiny)
    assert out.info["input_patch"] == 8 and out.info["output_patch"] == 16
    package = TimesFM3Forecaster.from_pretrained(str(tiny), device="cpu")
    q = next(iter(package.predict_batch([request.history.to_numpy(np.float32)], horizon=20,
                                        return_quantiles=True))).quantiles            # (H, K)
    # every path lies within the model's quantiles' linear extension, median path ordering follows q
    lo = q[:, 0] - (q[:, 1] - q[:, 0])
    hi = q[:, -1] + (q[:, -1] - q[:, -2])
    assert (out.samples >= lo - 1e-4).all() and (out.samples <= hi + 1e-4).all()


def test_batched_forecasts_equal_single_ones(tiny):
    forecaster = timesfm.TimesFMForecaster(tiny)
    requests = [synthetic_request(n=96, horizon=12, seed=s) for s in range(3)]
    batched = forecaster.forecast_batch(requests)
    assert [f.info["batch"] for f in batched] == [3, 3, 3]
    for request, forecast in zip(requests, batched):
        np.testing.assert_allclose(forecaster.forecast(request).samples, forecast.samples, rtol=1e-5, atol=1e-5)

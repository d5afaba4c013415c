"""tirex: TiRex through ``TiRexZero.from_pretrained`` (what ``tirex.load_model`` calls) on a tiny randomly
initialised checkpoint saved here in the layout its loader reads (no download, no patched module)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tests.plugins.forecasters.tsfm_support import check_family_basics

tirex = pytest.importorskip("tsagent_plugins.forecasters.tirex")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tirex.build_tiny_model(tmp_path_factory.mktemp("tirex") / "tiny")


class TestTiRexConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return tirex.TiRexForecaster(tiny, device="cpu")


def test_tiny_model_loads_through_the_package_and_paths_follow_its_quantiles(tiny):
    import torch
    from tirex.models.tirex import TiRexZero

    forecaster = tirex.TiRexForecaster(tiny)
    request = synthetic_request(horizon=20)
    out = check_family_basics(forecaster, request, tiny)
    assert out.info["context_length"] == 64 and out.info["patch"] == 8
    model = TiRexZero.from_pretrained(str(tiny / "model.ckpt"), backend="torch", device="cpu")
    q, _ = model.forecast(torch.tensor(request.history.to_numpy()[None], dtype=torch.float32), prediction_length=20,
                          output_type="numpy")
    q = np.sort(q[0], axis=-1)                                                             # (H, K)
    median_path = np.median(out.samples, axis=0)
    assert np.all(np.abs(median_path - q[:, 4]) <= (q[:, -1] - q[:, 0]) + 1e-5)


def test_histories_of_one_length_are_one_call_at_the_longest_horizon_with_the_paths_of_each_alone(tiny):
    import dataclasses

    forecaster = tirex.TiRexForecaster(tiny, batch_size=8)
    requests = [dataclasses.replace(synthetic_request(n=80, horizon=h, seed=k), seed=k)
                for k, h in enumerate((5, 30, 17))] + [synthetic_request(n=70, horizon=30)]
    batched = forecaster.forecast_batch(requests)
    assert [f.info["batch"] for f in batched] == [3, 3, 3, 1]            # the length-70 history alone
    for request, forecast in zip(requests, batched):
        assert forecast.samples.shape == (25, len(request.future_index))
        np.testing.assert_array_equal(forecaster.forecast(request).samples, forecast.samples)

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

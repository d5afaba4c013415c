"""moirai / moirai-moe: uni2ts's Moirai 2.0 and Moirai-MoE modules saved here with the package's
``save_pretrained`` (tiny, random weights) and loaded with its ``from_pretrained`` (no download,
no patched module)."""

from __future__ import annotations

import numpy as np
import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tests.plugins.forecasters.tsfm_support import check_family_basics

moirai = pytest.importorskip("tsagent_plugins.forecasters.moirai")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return moirai.build_tiny_model(tmp_path_factory.mktemp("moirai") / "tiny")


@pytest.fixture(scope="module")
def tiny_moe(tmp_path_factory):
    return moirai.build_tiny_model(tmp_path_factory.mktemp("moirai-moe") / "tiny", moe=True)


class TestMoiraiConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return moirai.MoiraiForecaster(tiny, device="cpu", context_length=80)


class TestMoiraiMoEConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny_moe):
        return moirai.MoiraiMoEForecaster(tiny_moe, device="cpu", context_length=80, patch_size=8)


def test_moirai2_paths_follow_the_package_quantiles(tiny):
    from uni2ts.model.moirai2 import Moirai2Forecast, Moirai2Module

    forecaster = moirai.MoiraiForecaster(tiny, context_length=80)
    request = synthetic_request(horizon=20)
    out = check_family_basics(forecaster, request, tiny)
    assert out.info["context_length"] == 80 and out.info["patch"] == 8
    package = Moirai2Forecast(prediction_length=20, target_dim=1, feat_dynamic_real_dim=0,
                              past_feat_dynamic_real_dim=0, context_length=80,
                              module=Moirai2Module.from_pretrained(str(tiny)))
    q = np.sort(package.predict([request.history.to_numpy(np.float32)])[0], axis=0)    # (K, H)
    lo, hi = q[0] - (q[1] - q[0]), q[-1] + (q[-1] - q[-2])
    assert (out.samples >= lo - 1e-3).all() and (out.samples <= hi + 1e-3).all()


def test_moirai_moe_draws_its_own_paths(tiny_moe):
    forecaster = moirai.MoiraiMoEForecaster(tiny_moe, context_length=80, patch_size=8)
    out = check_family_basics(forecaster, synthetic_request(horizon=20, n=50), tiny_moe)   # shorter than context
    assert out.info["batch"] == 1 and len(np.unique(out.samples[:, 0])) == 25

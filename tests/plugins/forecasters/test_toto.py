"""toto: a tiny randomly initialised Toto saved here in the released layout and loaded with the package's
``Toto.load_from_checkpoint`` (what its ``from_pretrained`` calls); no download, no patched module."""

from __future__ import annotations

import numpy as np
import pytest

from harness.testing.forecaster import ForecasterTests, synthetic_request
from tests.plugins.forecasters.tsfm_support import check_family_basics

toto = pytest.importorskip("tsagent_plugins.forecasters.toto")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return toto.build_tiny_model(tmp_path_factory.mktemp("toto") / "tiny")


class TestTotoConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return toto.TotoForecaster(tiny, device="cpu")


def test_tiny_model_draws_paths_through_the_package(tiny):
    forecaster = toto.TotoForecaster(tiny, context_length=64)
    out = check_family_basics(forecaster, synthetic_request(horizon=20), tiny)
    assert out.info["context_length"] == 64 and len(np.unique(out.samples[:, 0])) == 25


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_toto_receives_epoch_seconds_at_any_index_resolution(unit):
    import pandas as pd

    index = pd.date_range("2025-10-10", periods=3, freq="D").as_unit(unit)
    assert toto.toto_timestamp_seconds(index).tolist() == [1760054400, 1760140800, 1760227200]

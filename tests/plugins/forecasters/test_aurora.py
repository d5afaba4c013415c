"""aurora: a tiny randomly initialised Aurora built with Aurora's own classes and ``save_pretrained`` in its
own environment, loaded through ``AuroraForPrediction.from_pretrained`` by the subprocess worker, forecast
through the forecaster contract.  Needs ``scripts/install-forecasters.sh aurora`` (marker ``aurora``:
``.ci/run`` runs these after making that environment)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from harness.contracts import ForecastError
from harness.testing.forecaster import ForecasterTests, synthetic_request
from tests.plugins.forecasters.tsfm_support import check_family_basics
from tsagent_plugins.forecasters import aurora

pytestmark = pytest.mark.aurora


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = aurora.build_tiny_model(tmp_path_factory.mktemp("aurora") / "tiny")
    yield folder
    aurora.close_workers()


class TestAuroraConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return aurora.AuroraForecaster(tiny, device="cpu")


def test_tiny_checkpoint_is_saved_by_aurora_itself(tiny):
    config = json.loads((tiny / "config.json").read_text())
    assert config["architectures"] == ["AuroraForPrediction"] and config["model_type"] == "aurora"
    assert (tiny / "model.safetensors").is_file() and json.loads((tiny / "harness.json").read_text()) == {
        "harness_weights": "random-init"}


def test_tiny_model_draws_paths_through_the_worker(tiny):
    forecaster = aurora.AuroraForecaster(tiny, device="cpu")
    request = synthetic_request(horizon=20)
    out = check_family_basics(forecaster, request, tiny)
    assert out.info["uses_context"] is True and out.info["token_len"] == 8 and out.info["torch"].startswith("2.14.1")
    assert len(np.unique(out.samples[:, 0])) == request.n_samples        # Aurora's flow head draws S paths
    other = forecaster.forecast(replace(request, seed=request.seed + 1))
    assert not np.array_equal(other.samples, out.samples)


def test_the_text_context_reaches_the_model(tiny):
    forecaster = aurora.AuroraForecaster(tiny, device="cpu")
    base = synthetic_request(horizon=12)
    plain = forecaster.forecast(base).samples
    told = forecaster.forecast(replace(base, context="A festival doubles demand next week.")).samples
    assert not np.array_equal(plain, told) and told.shape == plain.shape


def test_a_missing_environment_is_refused_with_the_install_command(tmp_path):
    forecaster = aurora.AuroraForecaster(tmp_path, python=tmp_path / "no-env" / "bin" / "python")
    assert not forecaster.installed()
    with pytest.raises(ForecastError, match="aurora is not installed: no worker environment at .*"
                                            "install-forecasters.sh aurora"):
        forecaster.forecast(synthetic_request(horizon=5))

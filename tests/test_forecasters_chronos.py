"""chronos: the sample-path ChronosPipeline on a tiny randomly initialised model built here (no download).

Skipped with a reason when torch or chronos-forecasting is missing (``pip install -e '.[chronos]'``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install -e '.[chronos]' (CPU build of torch)")
pytest.importorskip("chronos", reason="needs chronos-forecasting: pip install -e '.[chronos]'")

from harness.contracts import ForecastError  # noqa: E402
from harness.report import build_report  # noqa: E402
from harness.testing.forecaster import ForecasterTests, synthetic_request  # noqa: E402
from tsagent_plugins.forecasters.chronos import ChronosForecaster, build_tiny_model, load_pipeline  # noqa: E402
from tsagent_plugins.tasks.drcik.runner import run_forecast_experiment  # noqa: E402
from tsagent_plugins.tasks.drcik.spec import spec_from_options  # noqa: E402


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("chronos") / "tiny", seed=0, context_length=64,
                            prediction_length=16)


class TestChronosConformance(ForecasterTests):
    @pytest.fixture
    def forecaster(self, tiny):
        return ChronosForecaster(tiny)


def test_tiny_model_is_a_real_chronos_folder_flagged_untrained(tiny):
    config = json.loads((tiny / "config.json").read_text())
    assert config["chronos_config"]["prediction_length"] == 16 and config["chronos_config"]["n_tokens"] == 64
    assert config["harness_weights"] == "random-init"
    assert (tiny / "model.safetensors").is_file()
    out = ChronosForecaster(tiny).forecast(synthetic_request(horizon=5))
    assert out.info["weights"] == "random-init" and out.info["flag_untrained"] is True
    assert out.fallback is None and out.info["context_length"] == 64
    assert ChronosForecaster(tiny, weights="pretrained").forecast(synthetic_request(horizon=5)).info[
        "flag_untrained"] is False


def test_chunks_match_the_package_predict_and_leave_the_global_rng_alone(tiny):
    """A 40-step horizon is 16 + 16 + 8 steps; with the same seed the paths equal the package's own
    autoregressive ``predict`` (median of each chunk appended to the context)."""
    request = synthetic_request(n=96, horizon=40)
    torch.manual_seed(123)
    before = torch.rand(1)
    torch.manual_seed(123)
    ours = ChronosForecaster(tiny).forecast(request).samples
    assert torch.equal(torch.rand(1), before)              # fork_rng: the global RNG state is untouched
    pipeline = load_pipeline(str(tiny))
    context = torch.tensor(request.history.to_numpy()[-64:], dtype=torch.float32)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(request.seed)
        theirs = pipeline.predict(context, prediction_length=40, num_samples=25)[0].numpy()
    assert ours.shape == (25, 40)
    np.testing.assert_array_equal(ours, theirs.astype(float))


def test_quantile_models_and_missing_models_are_refused(tmp_path, tiny):
    bolt = tmp_path / "bolt"
    bolt.mkdir()
    (bolt / "config.json").write_text(json.dumps({"chronos_pipeline_class": "ChronosBoltPipeline"}))
    with pytest.raises(ForecastError, match="ChronosBoltPipeline model returns quantiles, not sample paths"):
        ChronosForecaster(bolt).forecast(synthetic_request())
    with pytest.raises(ForecastError, match="cannot load Chronos model"):
        ChronosForecaster(tmp_path / "nothing-here").forecast(synthetic_request())
    with pytest.raises(ValueError, match="unknown option"):
        ChronosForecaster().configured(size="large")
    assert ChronosForecaster().configured(model=str(tiny)).model == str(tiny)


def test_time_limit_is_checked_between_chunks(tiny):
    request = synthetic_request(horizon=64)
    request.time_limit = 1e-9
    with pytest.raises(ForecastError, match="time limit of 1e-09 s reached after 0 of 64 steps"):
        ChronosForecaster(tiny).forecast(request)


def test_sample_tasks_run_and_the_report_refuses_untrained_rows(tiny, tmp_path):
    spec = spec_from_options({"name": "chronos-tiny", "tasks": "sample", "samples": 5,
                              "forecasters": [{"name": "chronos", "options": {"model": str(tiny)}}, "naive"],
                              "contexts": ["no-context", "supporting-evidence"]})
    run = run_forecast_experiment(spec, tmp_path / "run")
    rows = run.rows
    chronos = rows[rows["forecaster"] == "chronos"]
    assert len(chronos) == 6 and (chronos["status"] == "ok").all() and chronos["fallback"].isna().all()
    assert chronos["flag_untrained"].all() and (chronos["weights"] == "random-init").all()
    assert not rows.loc[rows["forecaster"] == "naive", "flag_untrained"].any()
    assert all(v.ok for v in run.validations.values())
    lines = (run.root / "submissions" / "chronos__no-context" / "forecasts.jsonl").read_text().splitlines()
    assert [len(json.loads(line)["samples"]) for line in lines] == [5, 5, 5]
    report = build_report([run.root], with_figures=False)
    table = report.table("drcik-table2")
    assert [row[0] for row in table.rows] == ["naive‡"]
    assert any("refused 6 row(s) flagged flag_untrained" in m and "chronos/no-context/task_42" in m
               for m in report.messages)

"""chronos: the sample-path ChronosPipeline on a tiny randomly initialised model built here (no download),
and the conformance suite on a second one configured through ``$HARNESS_CHRONOS_MODEL``.

Skipped with a reason when torch or chronos-forecasting is missing (``pip install -e '.[chronos]'``).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch", reason="needs torch: pip install -e '.[chronos]' (CPU build of torch)")
pytest.importorskip("chronos", reason="needs chronos-forecasting: pip install -e '.[chronos]'")

from harness.contracts import ForecastError  # noqa: E402
from harness.report import build_report  # noqa: E402
from harness.testing.forecaster import ForecasterTests, synthetic_request  # noqa: E402
from tsagent_plugins.forecasters.chronos import (MODEL_ENV, ChronosForecaster,  # noqa: E402
                                         build_tiny_model, load_pipeline)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("chronos") / "tiny", seed=0, context_length=64,
                            prediction_length=16)


class TestChronosConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny):
        return ChronosForecaster(tiny)


class TestChronosLocalWeightsConformance(ForecasterTests):
    """The suite on weights named by ``$HARNESS_CHRONOS_MODEL`` (how a download of e.g.
    amazon/chronos-t5-small is configured), here a second tiny model built with other sizes."""

    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tmp_path_factory):
        folder = build_tiny_model(tmp_path_factory.mktemp("chronos-env") / "tiny", seed=1, context_length=32,
                                  prediction_length=8, d_model=8)
        before = os.environ.get(MODEL_ENV)
        os.environ[MODEL_ENV] = str(folder)
        try:
            forecaster = ChronosForecaster()
            assert forecaster.local_model() == str(folder)
        finally:
            if before is None:
                os.environ.pop(MODEL_ENV)
            else:
                os.environ[MODEL_ENV] = before
        return forecaster.configured(model=str(folder))


@pytest.fixture(scope="module")
def tiny_bolt(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("chronos-bolt") / "tiny", kind="bolt")


@pytest.fixture(scope="module")
def tiny_chronos2(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("chronos-2") / "tiny", kind="chronos2")


class TestChronosBoltConformance(ForecasterTests):
    """Chronos-Bolt (quantiles; paths drawn from them) through the same load call."""

    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny_bolt):
        return ChronosForecaster(tiny_bolt)


class TestChronos2Conformance(ForecasterTests):
    """Chronos-2 (quantiles; paths drawn from them) through the same load call."""

    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, tiny_chronos2):
        return ChronosForecaster(tiny_chronos2)


@pytest.mark.parametrize("kind", ["bolt", "chronos2"])
def test_quantile_pipelines_give_paths_within_their_quantiles(kind, tiny_bolt, tiny_chronos2):
    folder = tiny_bolt if kind == "bolt" else tiny_chronos2
    request = synthetic_request(horizon=30)
    out = ChronosForecaster(folder).forecast(request)
    pipeline = load_pipeline(str(folder))
    assert out.info["pipeline"] == ("ChronosBoltPipeline" if kind == "bolt" else "Chronos2Pipeline")
    assert out.info["flag_untrained"] is True and out.samples.shape == (25, 30)
    q, _ = pipeline.predict_quantiles([torch.tensor(request.history.to_numpy()[-64:], dtype=torch.float32)],
                                      prediction_length=30, quantile_levels=list(pipeline.quantiles))
    q = np.sort((q[0] if isinstance(q, list) else q).reshape(30, 9).numpy(), axis=1)
    lo, hi = q[:, 0] - (q[:, 1] - q[:, 0]), q[:, -1] + (q[:, -1] - q[:, -2])
    assert (out.samples >= lo - 1e-4).all() and (out.samples <= hi + 1e-4).all()


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


def test_unknown_and_missing_models_are_refused(tmp_path, tiny, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text(json.dumps({"chronos_pipeline_class": "ChronosXPipeline"}))
    with pytest.raises(ForecastError, match="unknown Chronos pipeline class 'ChronosXPipeline'"):
        ChronosForecaster(other).forecast(synthetic_request())
    bolt = tmp_path / "bolt"
    bolt.mkdir()
    (bolt / "config.json").write_text(json.dumps({"chronos_pipeline_class": "ChronosBoltPipeline"}))
    with pytest.raises(ForecastError, match="cannot load Chronos model"):
        ChronosForecaster(bolt).forecast(synthetic_request())
    with pytest.raises(ForecastError, match="'.*nothing-here' is not a local folder"):
        ChronosForecaster(tmp_path / "nothing-here").forecast(synthetic_request())
    (tmp_path / "empty").mkdir()
    with pytest.raises(ForecastError, match="cannot load Chronos model"):
        ChronosForecaster(tmp_path / "empty").forecast(synthetic_request())
    monkeypatch.delenv(MODEL_ENV, raising=False)
    with pytest.raises(ForecastError, match="no local Chronos weights configured"):
        ChronosForecaster().forecast(synthetic_request())
    monkeypatch.setenv(MODEL_ENV, str(tiny))
    assert ChronosForecaster().model == str(tiny)
    with pytest.raises(ValueError, match="unknown option"):
        ChronosForecaster().configured(size="large")
    assert ChronosForecaster().configured(model=str(tiny)).model == str(tiny)


def test_time_limit_is_checked_between_chunks(tiny):
    request = synthetic_request(horizon=64)
    request.time_limit = 1e-9
    with pytest.raises(ForecastError, match="time limit of 1e-09 s reached after 0 of 64 steps"):
        ChronosForecaster(tiny).forecast(request)


def test_sample_tasks_run_and_the_report_refuses_untrained_rows(tiny, tmp_path):
    """The model folder comes from an agent profile of the forecaster (``--agent``)."""
    from click.testing import CliRunner

    from harness.cli import cli

    profile = tmp_path / "chronos-tiny.yaml"
    profile.write_text(f"name: chronos-tiny\nagent: chronos\noptions: {{model: {tiny}}}\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: chronos-tiny\ntemplate: drcik\nparams:\n  forecasters: [chronos, naive]\n"
                    "  contexts: [no-context, supporting-evidence]\n  samples: 5\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "--task", str(spec), "--agent", str(profile), "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    chronos = rows[rows["forecaster"] == "chronos"]
    assert len(chronos) == 6 and (chronos["status"] == "ok").all() and chronos["fallback"].isna().all()
    assert chronos["flag_untrained"].all() and (chronos["weights"] == "random-init").all()
    assert not rows.loc[rows["forecaster"] == "naive", "flag_untrained"].any()
    run = json.loads((out / "run.json").read_text())
    assert all(check["ok"] for check in run["finished"]["chronos-tiny"]["submissions"].values())
    lines = (out / "submissions" / "chronos__no-context" / "forecasts.jsonl").read_text().splitlines()
    assert [len(json.loads(line)["samples"]) for line in lines] == [5, 5, 5]
    report = build_report([out], with_figures=False)
    table = report.table("drcik-table2")
    assert [row[0] for row in table.rows] == ["naive‡"]
    assert any("refused 6 row(s) flagged flag_untrained" in m and "chronos_no-context_task_42" in m
               for m in report.messages)

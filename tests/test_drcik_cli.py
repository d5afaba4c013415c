"""``harness forecast`` end to end on the bundled sample tasks: run directory, results rows,
the release's submission files and their validation, the experiment spec and its errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scoringrules
from click.testing import CliRunner

from harness.config import ConfigError
from tsagent_plugins.tasks.drcik.cli import forecast
from tsagent_plugins.tasks.drcik.loader import load_tasks
from tsagent_plugins.tasks.drcik.runner import run_forecast_experiment
from tsagent_plugins.tasks.drcik.spec import load_spec, spec_from_options

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = Path(__file__).parent / "fixtures" / "scripts" / "llm_dp"
TASK_IDS = ["task_42", "task_201", "task_163"]          # benchmark_manifest.json order
HORIZONS = {"task_42": 100, "task_201": 90, "task_163": 24}


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cli") / "run"
    result = CliRunner().invoke(forecast, ["--tasks", "sample", "--forecaster", "naive", "--forecaster", "ses",
                                           "--context", "no-context", "--context", "supporting-evidence",
                                           "--out", str(out)])
    return out, result


def test_results_rows(cli_run):
    out, result = cli_run
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 * 2 * 3
    keys = set(zip(rows["forecaster"], rows["context"], rows["benchmark_id"]))
    assert keys == {(f, c, t) for f in ("naive", "ses") for c in ("no-context", "supporting-evidence")
                    for t in TASK_IDS}
    assert (rows["template"] == "drcik").all() and (rows["run_id"] == out.name).all()
    assert (rows["task"] == "cli").all() and (rows["n_samples"] == 25).all() and (rows["seed"] == 0).all()
    assert rows["episode"].iloc[0] == "naive/no-context/task_42"
    assert (rows["status"] == "ok").all() and not rows["flag_untrained"].any() and not rows["context_used"].any()
    assert rows.loc[rows["context"] == "supporting-evidence", "context_items"].gt(0).all()
    # statistical forecasters ignore text: one forecast scored under both conditions
    by_cell = rows.set_index(["forecaster", "context", "benchmark_id"])["scrps"]
    for f in ("naive", "ses"):
        for t in TASK_IDS:
            assert by_cell[(f, "no-context", t)] == by_cell[(f, "supporting-evidence", t)]
    assert "naive" in result.output and "submission ses__supporting-evidence: valid" in result.output


def test_submission_files_and_scores_agree(cli_run):
    out, _ = cli_run
    rows = pd.read_parquet(out / "results.parquet").set_index(["forecaster", "context", "benchmark_id"])
    tasks = {t.benchmark_id: t for t in load_tasks()}
    for f in ("naive", "ses"):
        for c in ("no-context", "supporting-evidence"):
            folder = out / "submissions" / f"{f}__{c}"
            lines = [json.loads(line) for line in (folder / "forecasts.jsonl").read_text().splitlines()]
            assert [line["benchmark_id"] for line in lines] == TASK_IDS
            stored = np.load(out / "samples" / f / f"{c}.npz")
            for line in lines:
                task = tasks[line["benchmark_id"]]
                samples = np.asarray(line["samples"])
                assert samples.shape == (25, HORIZONS[task.benchmark_id])
                np.testing.assert_array_equal(samples, stored[task.benchmark_id])
                y = task.future.to_numpy()
                crps = scoringrules.crps_ensemble(y, samples, m_axis=0, estimator="nrg")
                expected = min(5.0, float(np.mean(crps)) / float(np.mean(np.abs(y))))
                assert rows.loc[(f, c, task.benchmark_id), "scrps"] == pytest.approx(expected, rel=1e-9)
            meta = json.loads((folder / "metadata.json").read_text())
            assert meta["method"] == f"{f} ({c})" and meta["type"] == "statistical" and meta["base_model"] == "none"


def test_run_json_records_validation(cli_run):
    out, _ = cli_run
    run = json.loads((out / "run.json").read_text())
    assert run["template"] == "drcik" and run["spec"]["samples"] == 25 and run["spec"]["tasks"] == "sample"
    assert [t["benchmark_id"] for t in run["tasks"]] == TASK_IDS
    assert set(run["submissions"]) == {f"{f}__{c}" for f in ("naive", "ses")
                                       for c in ("no-context", "supporting-evidence")}
    check = run["submissions"]["naive__no-context"]
    assert check["ok"] and check["errors"] == []
    assert sum("the leaderboard asks for at least 100" in w for w in check["warnings"]) == 3
    assert "original-context" in run["unavailable_conditions"] and run["finished_at"]


def test_spec_file_with_overrides(tmp_path):
    spec_file = tmp_path / "exp.yaml"
    spec_file.write_text("name: exp\ntemplate: drcik-forecast\nparams:\n  tasks: tasks/task_163.json\n"
                         "  forecasters: [naive]\n  contexts: [background]\n  samples: 30\n  seed: 4\n"
                         "  submission: {organization: Lab, contact: a@b.c, reproduction: https://x.org}\n")
    (tmp_path / "tasks").mkdir()
    source = ROOT / "plugins" / "tasks" / "drcik" / "data" / "sample"
    (tmp_path / "tasks" / "task_163.json").write_text((source / "tasks" / "task_163.json").read_text())
    (tmp_path / "documents").symlink_to(source / "documents")
    result = CliRunner().invoke(forecast, ["--spec", str(spec_file), "--samples", "100", "--out",
                                           str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert rows[["benchmark_id", "n_samples", "seed", "context", "status"]].values.tolist() == [
        ["task_163", 100, 4, "background", "ok"]]
    assert bool(rows["reproduces_paper"].iloc[0]) is False
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    check = run["submissions"]["naive__background"]
    assert check == {"ok": True, "errors": [], "warnings": []}      # 100 samples and full metadata
    meta = json.loads((tmp_path / "run" / "submissions" / "naive__background" / "metadata.json").read_text())
    assert meta["organization"] == "Lab" and "stand-in" in meta["notes"]


def test_shipped_specs_load():
    spec = load_spec(ROOT / "tasks" / "drcik" / "sample-statistical.yaml")
    assert [f.name for f in spec.forecasters] == ["naive", "ses", "ets", "arima", "sarima"]
    assert spec.contexts == ["no-context", "supporting-evidence"] and spec.samples == 25
    assert (spec.seed, spec.time_limit, spec.tasks) == (0, 600.0, "sample")
    llm = load_spec(ROOT / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml")
    assert llm.resolve(llm.script).resolve() == (SCRIPTS / "sample.yaml").resolve()
    assert load_spec(ROOT / "tasks" / "drcik" / "sample-chronos.yaml").forecasters[0].options == {
        "model": "amazon/chronos-t5-small"}


@pytest.mark.parametrize("params,problem", [
    ("forecasters: [naive]\n  contexts: [original-context]", "params.contexts: context condition "
     "'original-context' cannot be reproduced"),
    ("forecasters: [naive]\n  contexts: [no-context, no-context]", "a context condition is listed twice"),
    ("forecasters: [naive]\n  contexts: [no-context]\n  samples: 0", "params.samples: Input should be greater "
     "than or equal to 1"),
    ("forecasters: []\n  contexts: [no-context]", "params.forecasters: List should have at least 1 item"),
    ("forecasters: [naive]\n  contexts: [no-context]\n  colour: red", "params.colour: Extra inputs are not permitted"),
])
def test_spec_errors_name_the_file_and_field(tmp_path, params, problem):
    spec_file = tmp_path / "bad.yaml"
    spec_file.write_text(f"name: bad\ntemplate: drcik-forecast\nparams:\n  {params}\n")
    with pytest.raises(ConfigError) as caught:
        load_spec(spec_file)
    assert str(caught.value).startswith(str(spec_file)) and problem in str(caught.value)


def test_unknown_forecaster_and_bad_options_name_the_field(tmp_path):
    spec = spec_from_options({"name": "x", "forecasters": ["naive", "nope"], "contexts": ["no-context"]})
    with pytest.raises(ConfigError, match=r"forecasters\[1\]\.name: no forecaster named 'nope'"):
        run_forecast_experiment(spec, tmp_path / "a", file="x.yaml")
    spec = spec_from_options({"name": "x", "forecasters": [{"name": "naive", "options": {"k": 1}}],
                              "contexts": ["no-context"]})
    with pytest.raises(ConfigError, match=r"forecasters\[0\]\.options: forecaster 'naive' takes no options"):
        run_forecast_experiment(spec, tmp_path / "b", file="x.yaml")
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("name: w\ntemplate: tracebench\nparams: {}\n")
    with pytest.raises(ConfigError, match="template: expected 'drcik-forecast'"):
        load_spec(wrong)


def test_dr_conditions_need_and_read_evidence(tmp_path):
    tasks = {t.benchmark_id: t for t in load_tasks()}
    task = tasks["task_163"]
    spec = spec_from_options({"name": "dr", "forecasters": ["naive"], "contexts": ["verified-dr"], "samples": 4})
    with pytest.raises(ConfigError, match="dr_evidence: the condition\\(s\\) verified-dr need a DR agent's evidence"):
        run_forecast_experiment(spec, tmp_path / "none")
    evidence = tmp_path / "evidence"
    (evidence / "task_42").mkdir(parents=True)
    (evidence / "task_163.json").write_text(json.dumps([
        {"claim": "supported", "cited_document_ids": [task.supporting_ids[0]]},
        {"claim": "from a distractor", "cited_document_ids": [task.distractor_ids[0]]}]))
    (evidence / "task_42" / "evidence.json").write_text(json.dumps({"evidence": [
        {"claim": "only a distractor", "cited_document_ids": [tasks["task_42"].distractor_ids[0]]}]}))
    result = CliRunner().invoke(forecast, ["--tasks", "sample", "--forecaster", "naive", "--context", "verified-dr",
                                           "--context", "dr-evidence", "--samples", "4",
                                           "--dr-evidence", str(evidence), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index(["context", "benchmark_id"])
    assert rows.loc[("verified-dr", "task_163"), "context_items"] == 1
    assert rows.loc[("dr-evidence", "task_163"), "context_items"] == 2
    assert rows.loc[("verified-dr", "task_42"), "context_status"] == "verified_empty"
    assert rows.loc[("verified-dr", "task_201"), "reason"] == "no DR evidence for this task"
    meta = json.loads((tmp_path / "run" / "submissions" / "naive__verified-dr" / "metadata.json").read_text())
    assert meta["type"] == "agentic"
    assert "submission naive__verified-dr: INVALID" in result.output and "no forecast for 1 task(s): task_201" \
        in result.output


def test_llm_dp_on_the_scripted_backend_and_strict_validation(tmp_path):
    runner = CliRunner()
    good = runner.invoke(forecast, ["--spec", str(ROOT / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml"),
                                    "--samples", "3", "--context", "no-context", "--out", str(tmp_path / "good")])
    assert good.exit_code == 0, good.output
    rows = pd.read_parquet(tmp_path / "good" / "results.parquet")
    dp = rows[rows["forecaster"] == "llm-dp"]
    assert (dp["status"] == "ok").all() and (dp["profile"] == "scripted-dp").all()
    assert (dp["model"] == "scripted-model").all() and (dp["n_requests"] == 3).all()
    assert rows.loc[rows["forecaster"] == "naive", "model"].isna().all()
    assert len(list((tmp_path / "good" / "proxy").glob("*/proxy.jsonl"))) == 3
    meta = json.loads((tmp_path / "good" / "submissions" / "llm-dp__no-context" / "metadata.json").read_text())
    assert (meta["type"], meta["base_model"]) == ("direct_llm", "scripted-model")
    bad = runner.invoke(forecast, ["--tasks", "sample", "--forecaster", "llm-dp", "--context", "no-context",
                                   "--samples", "2", "--model-backend", "scripted",
                                   "--script", str(SCRIPTS / "fail.yaml"), "--strict",
                                   "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 1
    assert "submission llm-dp__no-context: INVALID" in bad.output and "no forecast for 3 task(s)" in bad.output
    failed = pd.read_parquet(tmp_path / "bad" / "results.parquet")
    assert (failed["status"] == "failed").all()
    assert failed["reason"].str.startswith("ForecastError: 0 of 2 valid samples after 3 round(s)").all()


def test_missing_options_and_model_profile(tmp_path):
    result = CliRunner().invoke(forecast, ["--tasks", "sample", "--forecaster", "naive"])
    assert result.exit_code != 0 and "give --spec FILE, or --context" in result.output
    spec = spec_from_options({"name": "x", "forecasters": ["llm-dp"], "contexts": ["no-context"]})
    with pytest.raises(ConfigError, match="agent: a model-backed forecaster \\(llm-dp\\) needs an agent profile"):
        run_forecast_experiment(spec, tmp_path / "x")


def test_the_harness_command_has_forecast():
    done = subprocess.run([sys.executable, "-m", "harness", "forecast", "--help"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "--dr-evidence" in done.stdout and "--spec" in done.stdout


def test_failure_reasons_name_forecaster_context_and_first_reason():
    from tsagent_plugins.tasks.drcik.cli import failure_reasons

    rows = [{"forecaster": "chronos", "context": "no-context", "status": "failed", "reason": "needs torch"},
            {"forecaster": "chronos", "context": "no-context", "status": "failed", "reason": "needs torch"},
            {"forecaster": "naive", "context": "no-context", "status": "ok", "reason": None}]
    assert failure_reasons(rows) == ["chronos / no-context: 2 task(s), e.g. needs torch"]
    assert failure_reasons([]) == []

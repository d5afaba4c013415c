"""Experiment runner: forecasters × context conditions over tasks, submission files and their validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.contracts import Forecast, Forecaster, ForecastError
from tsagent_plugins.forecasters.statistical import NaiveForecaster, SESForecaster
from tsagent_plugins.tasks.drcik.dataset.contexts import EvidenceClaim
from tsagent_plugins.tasks.drcik.forecast.experiment import run_experiment, validate_submission, write_submission
from tsagent_plugins.tasks.drcik.dataset.loader import load_task_file, load_tasks
from tsagent_plugins.tasks.drcik.forecast.metrics import summary_table
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "drcik"
META = {"method": "Naive baseline", "organization": "Test Lab", "type": "statistical", "base_model": "none",
        "reproduction": "https://example.org/repo", "contact": "team@example.org", "notes": "test"}


class EchoContext(Forecaster):
    """Reads the context: paths equal to the context length, to see what it was given."""

    name = "echo"
    uses_context = True

    def forecast(self, request):
        if request.context and "boom" in request.context:
            raise ForecastError("asked to fail")
        value = float(len(request.context or ""))
        return Forecast(np.full((request.n_samples, len(request.future_index)), value))


@pytest.fixture(scope="module")
def tasks():
    return load_tasks() + [load_task_file(FIX / "hidden_future.json"), load_task_file(FIX / "zero_future.json")]


def test_rows_statuses_and_reuse(tasks):
    result = run_experiment(tasks, {"naive": NaiveForecaster(), "ses": SESForecaster()},
                            ["no-context", "supporting-evidence"], n_samples=10, seed=3)
    rows = result.rows
    assert len(rows) == 2 * 2 * 5
    assert not rows["context_used"].any()
    statuses = rows.set_index(["forecaster", "context", "benchmark_id"])["status"]
    assert statuses[("naive", "no-context", "hidden_future")] == "labels_hidden"
    assert statuses[("naive", "no-context", "zero_future")] == "undefined_scale"
    assert statuses[("naive", "no-context", "task_42")] == "ok"
    a = result.samples[("naive", "no-context", "task_42")]
    b = result.samples[("naive", "supporting-evidence", "task_42")]
    assert a.shape == (10, 100) and np.array_equal(a, b)        # text ignored: one forecast reused
    assert ("naive", "no-context", "hidden_future") in result.samples   # exported even when hidden
    table = summary_table(rows, ["forecaster", "context"])
    assert (table["n"] == 3).all() and (table["hidden"] == 1).all() and (table["undefined"] == 1).all()


def test_context_reaches_text_forecasters_and_dr_conditions(tasks):
    task = tasks[2]   # task_163
    dr = {task.benchmark_id: [EvidenceClaim("boom: cites a distractor", (task.distractor_ids[0],)),
                              EvidenceClaim("ok claim", (task.supporting_ids[0],))]}
    result = run_experiment([task], {"echo": EchoContext()},
                            ["no-context", "background", "dr-evidence", "verified-dr"], n_samples=2, dr_evidence=dr)
    rows = result.rows.set_index("context")
    assert result.samples[("echo", "no-context", "task_163")][0, 0] == 0.0
    assert result.samples[("echo", "background", "task_163")][0, 0] == len(task.target_description)
    assert rows.loc["dr-evidence", "status"] == "failed" and "asked to fail" in rows.loc["dr-evidence", "reason"]
    assert rows.loc["verified-dr", "status"] == "ok" and rows.loc["verified-dr", "context_items"] == 1
    assert bool(rows.loc["background", "context_used"]) and not rows.loc["background", "reproduces_paper"]
    missing = run_experiment([task], {"echo": EchoContext()}, ["verified-dr"], n_samples=2).rows.iloc[0]
    assert missing["status"] == "failed" and missing["reason"] == "no DR evidence for this task"


def test_submission_roundtrip_and_validation(tasks, tmp_path):
    result = run_experiment(tasks, {"naive": NaiveForecaster()}, ["no-context"], n_samples=4)
    folder = write_submission(tmp_path / "naive", result, "naive", "no-context", META)
    lines = [json.loads(line) for line in (folder / "forecasts.jsonl").read_text().splitlines()]
    assert [x["benchmark_id"] for x in lines] == [t.benchmark_id for t in tasks]
    assert np.asarray(lines[0]["samples"]).shape == (4, 100)
    report = validate_submission(folder, tasks)
    assert report.ok, report.errors
    assert any("at least 100" in w for w in report.warnings)
    assert validate_submission(folder, tasks, hidden_only=True).errors   # non-hidden tasks unexpected


def test_validation_catches_problems(tasks, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "metadata.json").write_text(json.dumps({**META, "type": "magic", "method": ""}))
    entries = [{"benchmark_id": "task_42", "samples": [[1.0] * 99]},
               {"benchmark_id": "task_42", "samples": [[1.0] * 100]},
               {"benchmark_id": "task_201", "samples": [[float("nan")] * 90]},
               {"benchmark_id": "task_999", "samples": [[1.0]]}]
    (folder / "forecasts.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries) + "{oops\n")
    errors = "\n".join(validate_submission(folder, tasks).errors)
    for expected in ("type: 'magic'", "method: missing", ":1: samples: path 0 has 99 values, expected 100",
                     "task_42 appears twice", ":3: samples: path 0 has a non-numeric or non-finite value",
                     "unknown or unexpected task 'task_999'", ":5: invalid JSON", "no forecast for 3 task(s)"):
        assert expected in errors, expected

"""Forecasting episodes of a forecaster declaring ``batch_size`` > 1 are forecast a chunk of tasks at a time
(the template's "Batching"): the same rows and paths as one task at a time, a task failing in a batch fails
alone.  The forecaster is a pretrained-forecaster subclass installed as a plugin distribution, whose "model"
is a closed-form quantile function raising on one history; a tiny TiRex checks the same with a real package."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.template import DrcikTemplate

SAMPLE = REPO / "plugins" / "tasks" / "drcik" / "data" / "sample" / "tasks" / "task_163.json"
TASKS = ["task_1", "task_2", "task_3", "task_4", "task_5"]     # task_3's history holds 13.0: the model raises

PLUGIN = """
import numpy as np
from harness import hookimpl
from tsagent_plugins.forecasters._pretrained import PretrainedForecaster

LEVELS = np.round(np.arange(0.1, 1.0, 0.1), 1)

class LinearQuantiles(PretrainedForecaster):
    name = "linear-test"
    family = "Linear"
    CALLS = []

    def locate(self):
        return "here"

    def load(self, mods, source, device):
        return object()

    def predict_quantiles(self, handle, contexts, horizon, requests):
        LinearQuantiles.CALLS.append(len(contexts))
        if any((c == 13.0).any() for c in contexts):
            raise ValueError("unlucky history")
        steps = np.arange(1, horizon + 1)
        return LEVELS, np.stack([[c[-1] + c.std() * (lv - 0.5) * steps for lv in LEVELS] for c in contexts])

@hookimpl
def register_forecasters(register):
    register(LinearQuantiles())
"""


@pytest.fixture
def tasks_dir(tmp_path) -> Path:
    """Five tasks of one history length and horizon (task_163's, values shifted), task_3 holding 13.0."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    base = json.loads(SAMPLE.read_text())
    for i, task_id in enumerate(TASKS, 1):
        task = json.loads(json.dumps(base))
        task["benchmark_id"] = task_id
        history = task["series"]["history_values"]
        task["series"]["history_values"] = [v + 100.0 * i for v in history]
        if task_id == "task_3":
            task["series"]["history_values"][10] = 13.0
        (folder / f"{task_id}.json").write_text(json.dumps(task))
    return folder


def run_episodes(tmp_path: Path, tasks: Path, entry: dict, contexts=("no-context",)) -> dict:
    """Every episode through a fresh template (as ``harness run`` calls it): {episode: (row, samples or None)}."""
    template = DrcikTemplate()
    params = template.params_model(tasks=str(tasks), forecasters=[entry], contexts=list(contexts), samples=7)
    template.prepare(params, lambda *a: None)
    out = {}
    for episode in template.episodes(params):
        folder = tmp_path / episode.replace("/", "_")
        folder.mkdir(parents=True)
        row = template.run_in_harness(params, episode, folder, None).metrics
        samples = folder / "samples.npy"
        out[episode] = (row, np.load(samples) if samples.exists() else None)
    return out


VOLATILE = {"seconds"}


def test_a_chunk_is_one_model_call_with_the_same_rows_and_paths_and_a_failing_task_fails_alone(
        tmp_path, tasks_dir, make_distribution, fresh_plugins):
    make_distribution("linear-test", {"linear": "linear_test_plugin"}, {"linear_test_plugin": PLUGIN})
    fresh_plugins()
    from harness import get_plugin

    calls = get_plugin("forecaster", "linear-test").CALLS

    assert run_episodes(tmp_path / "warm", tasks_dir, {"name": "linear-test"})   # imports, first load
    calls.clear()
    batched = run_episodes(tmp_path / "b", tasks_dir, {"name": "linear-test", "options": {"batch_size": 4}},
                           contexts=("no-context", "supporting-evidence"))
    # chunk 1 (tasks 1-4) is one call, which raises on task_3, so each of its four is retried alone; chunk 2 is
    # task_5; the second condition reuses the forecasts (the forecaster ignores text)
    assert calls == [4, 1, 1, 1, 1, 1]
    calls.clear()
    alone = run_episodes(tmp_path / "a", tasks_dir, {"name": "linear-test", "options": {"batch_size": 1}},
                         contexts=("no-context", "supporting-evidence"))
    assert calls == [1, 1, 1, 1, 1]
    for episode, (row, samples) in batched.items():
        other_row, other_samples = alone[episode]
        if "task_3" in episode:
            assert row["status"] == "failed" and samples is None
            assert row["reason"] == "ValueError: unlucky history"
        else:
            assert row["status"] == "ok" and samples.shape == (7, 24) and np.isfinite(row["scrps"])
            np.testing.assert_array_equal(samples, other_samples)
        same = {k: v for k, v in row.items() if k not in VOLATILE | {"forecaster_options"}}
        assert same == {k: v for k, v in other_row.items() if k not in VOLATILE | {"forecaster_options"}}, episode
    assert json.loads(batched["linear-test/no-context/task_1"][0]["forecaster_options"]) == {"batch_size": 4}
    # each path is the closed-form quantile function of its own task's history at the run seed's levels
    from tsagent_plugins.forecasters._pretrained import paths_from_quantiles
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    levels = np.round(np.arange(0.1, 1.0, 0.1), 1)
    for task in load_tasks(tasks_dir):
        if task.benchmark_id != "task_3":
            y = task.history.to_numpy(dtype=float)
            q = [y[-1] + y.std() * (lv - 0.5) * np.arange(1, 25) for lv in levels]
            np.testing.assert_allclose(batched[f"linear-test/no-context/{task.benchmark_id}"][1],
                                       paths_from_quantiles(levels, q, 7, 0))

def test_a_real_package_gives_the_same_paths_batched_and_one_at_a_time(tmp_path, tasks_dir):
    tirex = pytest.importorskip("tsagent_plugins.forecasters.tirex")
    pytest.importorskip("tirex.models.tirex")
    (tasks_dir / "task_3.json").unlink()                   # 13.0 is an ordinary value for TiRex
    model = str(tirex.build_tiny_model(tmp_path / "tirex"))
    batched = run_episodes(tmp_path / "b", tasks_dir, {"name": "tirex", "options": {"model": model, "batch_size": 8}})
    alone = run_episodes(tmp_path / "a", tasks_dir, {"name": "tirex", "options": {"model": model, "batch_size": 1}})
    assert len(batched) == 4
    for episode, (row, samples) in batched.items():
        assert row["status"] == "ok" and row["flag_untrained"]
        np.testing.assert_array_equal(samples, alone[episode][1])

"""``harness runs list``: failed episodes are counted apart."""

from __future__ import annotations

import json

from harness.cli.runs import run_summary


def test_runs_list_counts_failed_episodes(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"episodes": [{"profile": "opendr-x"}] * 3,
                                                   "finished_at": "now"}))
    for i, status in enumerate(("ok", "failed", "failed")):
        folder = tmp_path / "episodes" / f"e{i}"
        folder.mkdir(parents=True)
        (folder / "row.json").write_text(json.dumps({"episode": f"e{i}", "status": status}))
    summary = run_summary(tmp_path)
    assert (summary["done"], summary["failed"], summary["total"]) == (3, 2, 3)


MODELS_TEMPLATE = """
from pydantic import BaseModel
from harness import InHarnessTaskTemplate, hookimpl

class Params(BaseModel):
    models: list = []
    forecasters: list = []

class Models(InHarnessTaskTemplate):
    name = "models-axis-test"
    params_model = Params
    experiment_axis = "models"
    def episodes(self, params):
        return ["e0"]
    def run_in_harness(self, params, episode, folder, profile, model_client=None):
        return {}

@hookimpl
def register_task_templates(register):
    register(Models())
"""


def test_runs_list_reads_the_axis_the_template_declares(tmp_path, make_distribution, fresh_plugins):
    """The models under test of an in-harness run are the entries of the template's ``experiment_axis`` (here
    ``models``), not of a param the core knows by name; a task file stands in for runs made before ``run.json``
    recorded the template, and an unknown template lists none."""
    make_distribution("models-axis", {"models-axis": "models_axis_plugin"}, {"models_axis_plugin": MODELS_TEMPLATE})
    fresh_plugins()
    task = tmp_path / "task.yaml"
    task.write_text("name: t\ntemplate: models-axis-test\n")
    params = {"models": ["b", {"name": "a", "options": {}}], "forecasters": ["not-the-axis"]}
    runs = {"new": [{"template": "models-axis-test", "params": params}],
            "old": [{"task_file": str(task), "params": params}],
            "unknown": [{"template": "no-such-template", "params": params}]}
    for name, episodes in runs.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps({"episodes": episodes}))
    assert run_summary(tmp_path / "new")["agents"] == ["a", "b"]
    assert run_summary(tmp_path / "old")["agents"] == ["a", "b"]
    assert run_summary(tmp_path / "unknown")["agents"] == []

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


def make_run(root, rows, **meta):
    root.mkdir(parents=True)
    (root / "run.json").write_text(json.dumps({"episodes": [{"profile": "p"}] * len(rows), **meta}))
    for i, row in enumerate(rows):
        folder = root / "episodes" / f"e{i}"
        folder.mkdir(parents=True)
        (folder / "row.json").write_text(json.dumps({"episode": f"e{i}", "status": "ok", **row}))
    return root


def test_runs_list_marks_the_cost_an_offline_backend_answered(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.cli import cli

    monkeypatch.setenv("COLUMNS", "200")
    scripted = {"model_backend": "scripted", "model_billed": False, "cost_usd": 0.21, "n_requests": 3}
    real = {"model_backend": "anthropic", "model_billed": True, "cost_usd": 0.78, "n_requests": 3}
    make_run(tmp_path / "runs" / "a-scripted", [scripted, scripted])
    make_run(tmp_path / "runs" / "b-real", [real])
    make_run(tmp_path / "runs" / "c-mixed", [real, scripted])
    # written before the rows recorded their backend: the run's --model-backend tells
    make_run(tmp_path / "runs" / "d-old", [{"cost_usd": 0.5, "n_requests": 2}], model_backend="scripted")
    summary = run_summary(tmp_path / "runs" / "a-scripted")
    assert (summary["offline_backends"], summary["offline_cost_usd"]) == (["scripted"], 0.42)
    assert run_summary(tmp_path / "runs" / "b-real")["offline_backends"] == []
    result = CliRunner().invoke(cli, ["runs", "list", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0].rsplit("/", 1)[-1]: line for line in result.output.splitlines() if "/runs/" in line}
    assert lines["a-scripted"].rstrip().endswith("0.42 (scripted)")
    assert lines["b-real"].rstrip().endswith(" 0.78")
    assert lines["c-mixed"].rstrip().endswith("0.99 (0.21 scripted)")
    assert lines["d-old"].rstrip().endswith("0.50 (scripted)")
    assert "(NAME) after a cost: the profiles' prices for the tokens an offline model backend answered with; no " \
           "money was spent" in " ".join(result.output.split())
    listed = [json.loads(line) for line in CliRunner().invoke(
        cli, ["runs", "list", "--json", str(tmp_path / "runs")]).output.splitlines()]
    assert [s["offline_backends"] for s in listed] == [["scripted"], [], ["scripted"], ["scripted"]]

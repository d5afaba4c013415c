"""`harness rescore` on a run of a plugin-registered template whose scorer changes between the run and the rescore:
the numbers change to what the new scorer computes from the stored output (a copy of the stored values cannot
pass), the rows record the new version; a template that cannot rescore is skipped with its reason; model work
is priced and left without --yes; a report over both versions splits its tables by version."""

from __future__ import annotations

import json
import sys

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from harness import runlock
from harness.cli import cli
from harness.config import RunSettings
from harness.experiment import Unit
from harness.provenance import harness_version, spec_sha256
from harness.rescore import rescore
from harness.run import execute, load_task
from harness.store import RunStore, finished_episodes

TOY = '''
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from harness import EpisodeScore, InHarnessTaskTemplate, hookimpl
from harness.reporting import Section, Table

#: what the scorer multiplies the sum by: the test changes it (with the version) between run and rescore
FACTOR = 1.0


class ToyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    values: list[float]
    seed: int = 0


class Toy(InHarnessTaskTemplate):
    name = "toy-rescore"
    params_model = ToyParams
    scorer_version = "1"
    result_columns = {"status": ("str", "ok | failed"), "total": ("float", "FACTOR x the sum of the output")}

    def episodes(self, params):
        return ["a", "b"]

    def run_in_harness(self, params, episode, folder, profile):
        output = [v + (10 if episode == "b" else 0) for v in params.values]
        (folder / "output.json").write_text(json.dumps(output))
        return EpisodeScore({"total": FACTOR * sum(output)})

    def rescore_in_harness(self, params, episode, folder, row):
        return EpisodeScore({"total": FACTOR * sum(json.loads((folder / "output.json").read_text()))})

    def inputs_digest(self, params, episode, key_dir):
        return f"{len(params.values)}-values"

    def model_rescoring(self, params, run_dir, model):
        def run():
            (Path(run_dir) / "judged.json").write_text(json.dumps(model))
            return "judged again"
        return [("the toy judge on the run", 0.25, run)]


class Frozen(InHarnessTaskTemplate):
    name = "toy-frozen"
    params_model = ToyParams
    result_columns = {"status": ("str", "ok | failed"), "total": ("float", "the sum")}

    def run_in_harness(self, params, episode, folder, profile):
        return EpisodeScore({"total": sum(params.values)})


def totals(rows):
    table = Table("toy-totals", "Toy totals", ["episode", "total"])
    for row in rows.sort_values("episode").itertuples():
        table.rows.append([row.episode, f"{row.total:g}"])
    return Section(tables=[table])


@hookimpl
def register_task_templates(register):
    register(Toy())
    register(Frozen())


@hookimpl
def register_report_sections(register):
    register("toy-rescore", totals)
'''


@pytest.fixture
def toy(make_distribution, fresh_plugins):
    make_distribution("toy-rescore", {"toy": "toy_rescore"}, {"toy_rescore": TOY})
    fresh_plugins()
    return sys.modules["toy_rescore"]


def run_toy(tmp_path, template: str = "toy-rescore", name: str = "run"):
    spec = tmp_path / f"{template}.yaml"
    spec.write_text(yaml.safe_dump({"name": f"{template}-task", "template": template, "params": {"values": [1, 2]}}))
    task = load_task(spec)
    store = RunStore.create(tmp_path / name)
    execute([Unit(task, None, None)], store, RunSettings())
    return store.root, task


def rows(run):
    """Rows by episode (``a``, ``b``)."""
    return {folder.name.rsplit("-", 1)[0].rsplit("-", 1)[-1]: row for folder, row in finished_episodes(run)}


def test_the_run_records_where_its_values_came_from(tmp_path, toy):
    run, task = run_toy(tmp_path)
    for row in rows(run).values():
        assert row["scorer_version"] == "1" and row["extractor_versions"] is None  # in-harness: no extractor
        assert row["spec_sha256"] == spec_sha256(task.spec) and row["inputs_digest"] == "2-values"
        assert row["harness_version"] == harness_version() and row["rescored_at"] is None
    provenance = json.loads((run / "run.json").read_text())["provenance"]
    assert provenance["scorers"] == {"toy-rescore": "1"}
    assert provenance["specs"] == {str(task.path): spec_sha256(task.spec)}


def test_a_changed_scorer_changes_the_numbers_and_the_recorded_version(tmp_path, toy, monkeypatch):
    run, _ = run_toy(tmp_path)
    before = rows(run)
    assert (before["a"]["total"], before["b"]["total"]) == (3.0, 23.0)
    monkeypatch.setattr(toy, "FACTOR", 2.0)  # today's scorer doubles the sum...
    monkeypatch.setattr(toy.Toy, "scorer_version", "2")  # ...and says so
    events = []
    outcome = rescore(run, on_event=lambda event, data: events.append((event, data)))
    after = rows(run)
    assert (after["a"]["total"], after["b"]["total"]) == (6.0, 46.0)  # computed from output.json again
    assert all(r["scorer_version"] == "2" and r["rescored_at"] for r in after.values())
    assert all(after[k]["spec_sha256"] == before[k]["spec_sha256"] and after[k]["inputs_digest"] == "2-values"
               for k in after)  # what the episode was made of is the run's
    assert sorted(outcome.changed) == sorted(outcome.rescored) and outcome.skipped == []
    assert all(changes["total"][0] * 2 == changes["total"][1] for changes in outcome.changed.values())
    frame = pd.read_parquet(run / "results.parquet")
    assert sorted(frame["total"]) == [6.0, 46.0] and set(frame["scorer_version"]) == {"2"}
    assert sorted(json.loads((folder / "score.json").read_text())["metrics"]["total"]
                  for folder, _ in finished_episodes(run)) == [6.0, 46.0]
    data = json.loads((run / "run.json").read_text())
    assert data["rescores"][-1]["scorers"] == {"toy-rescore": "2"} and data["rescores"][-1]["changed"] == 2
    # model work: priced, announced before it would run, and left without --yes
    assert ("model", {"description": "the toy judge on the run", "cost_usd": 0.25, "run": False}) in events
    assert outcome.model_work == [("the toy judge on the run", 0.25, "not run: pass --yes to run it")]
    assert not (run / "judged.json").exists()


def test_model_work_runs_only_with_yes(tmp_path, toy):
    run, _ = run_toy(tmp_path)
    outcome = rescore(run, yes=True, model_backend="scripted", model_options={"script": "s.yaml"})
    assert outcome.model_work == [("the toy judge on the run", 0.25, "judged again")]
    assert json.loads((run / "judged.json").read_text()) == {"backend": "scripted", "options": {"script": "s.yaml"}}


def test_the_command_prints_the_changes_the_estimate_and_the_skipped(tmp_path, toy, monkeypatch):
    run, _ = run_toy(tmp_path)
    frozen, _ = run_toy(tmp_path, "toy-frozen", "frozen")
    monkeypatch.setattr(toy, "FACTOR", 0.5)
    result = CliRunner().invoke(cli, ["rescore", str(run)])
    assert result.exit_code == 0, result.output
    assert "total 3 -> 1.5" in result.output and "total 23 -> 11.5" in result.output
    assert ("model rescoring: the toy judge on the run: estimated $0.2500 (not run: pass --yes to spend it)"
            in result.output)
    assert f"{run}: 2 episode(s) rescored, 2 changed, 0 left as they were" in result.output
    result = CliRunner().invoke(cli, ["rescore", str(frozen)])
    assert result.exit_code == 0, result.output
    assert ("skipped toy-frozen-task-" in result.output
            and "template 'toy-frozen' cannot score its in-harness episodes again without running them again"
            in result.output)
    assert f"{frozen}: 0 episode(s) rescored, 0 changed, 1 left as they were" in result.output
    assert [r["rescored_at"] for _, r in finished_episodes(frozen)] == [None]


def test_rescore_holds_the_run_folders_lock(tmp_path, toy):
    run, _ = run_toy(tmp_path)
    with runlock.hold(run):
        with pytest.raises(runlock.RunLocked, match="is being written by another run"):
            rescore(run)
    assert all(r["rescored_at"] is None for r in rows(run).values())


def test_rows_of_two_scorer_versions_give_split_named_tables(tmp_path, toy, monkeypatch):
    from harness.report import build_report

    old, _ = run_toy(tmp_path, name="old")
    new, _ = run_toy(tmp_path, name="new")
    monkeypatch.setattr(toy, "FACTOR", 2.0)
    monkeypatch.setattr(toy.Toy, "scorer_version", "2")
    rescore(new)
    report = build_report([old, new], with_figures=False)
    tables = {t.key: t for t in report.tables}
    assert set(tables) == {"toy-totals@scorer-1", "toy-totals@scorer-2"}
    assert tables["toy-totals@scorer-1"].title == "Toy totals [scorer 1]"
    assert [r[1] for r in tables["toy-totals@scorer-1"].rows] == ["3", "23"]  # never mixed in one table
    assert [r[1] for r in tables["toy-totals@scorer-2"].rows] == ["6", "46"]
    assert any("rows of 2 code versions (scorer 1: 2 row(s); scorer 2: 2 row(s))" in m for m in report.messages)
    # one version: one table, named as before
    assert [t.key for t in build_report([new], with_figures=False).tables] == ["toy-totals"]
    result = CliRunner().invoke(cli, ["report", str(old), str(new), "--no-figures", "--out", str(tmp_path / "rep")])
    assert result.exit_code == 0, result.output
    assert {p.name for p in (tmp_path / "rep" / "tables").iterdir()} == {
        "toy-totals@scorer-1.csv", "toy-totals@scorer-1.tex", "toy-totals@scorer-2.csv", "toy-totals@scorer-2.tex"}

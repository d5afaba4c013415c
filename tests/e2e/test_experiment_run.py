"""``harness run --experiment``: grid expansion, stable episode ids, resume by id (kill and re-run,
edited grid), ``--set`` overrides, stages with ``evidence_from``.

The grids are Dr-CiK forecasting episodes on the bundled sample (3 tasks): they run in the
harness process, so a killed run and its resume take seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import cli
from harness.config import ConfigError, ExperimentSpec, load_experiment
from harness.experiment import episode_id, parse_set, plan_experiment
from harness.profiles import resolve_profile
from harness.run import load_task
from tests.support.paths import REPO

SPEC = REPO / "tasks" / "drcik" / "sample-statistical.yaml"
TASKS = ["task_42", "task_201", "task_163"]


def write_experiment(folder: Path, **fields) -> Path:
    data = {"name": "exp", "tasks": [str(SPEC)], **fields}
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def results(run: Path) -> pd.DataFrame:
    return pd.read_parquet(run / "results.parquet")


def rows_on_disk(run: Path) -> dict[str, float]:
    """episode folder -> modification time of its row.json."""
    return {p.parent.name: p.stat().st_mtime_ns for p in run.glob("episodes/*/row.json")}


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_kill_after_k_episodes_and_rerun_runs_only_the_missing_ones(tmp_path):
    # naive (fast) then sarima (~0.3-3 s per task): 6 episodes; killed once the first rows exist
    exp = write_experiment(tmp_path, forecasters=["naive", "sarima"], set={"contexts": ["no-context"]})
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "harness", "run", "--experiment", str(exp), "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while not rows_on_disk(out) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = rows_on_disk(out)
    k, n = len(before), 6
    assert 0 < k < n, f"the kill came too late or too early: {k} of {n} episodes finished"
    assert not (out / "results.parquet").exists()

    done = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"resuming {out}: {k} finished episode(s) are kept" in done.stderr
    after = rows_on_disk(out)
    assert {key: after[key] for key in before} == before        # the k rows were not rewritten
    assert len(set(after) - set(before)) == n - k               # only the n - k missing episodes ran
    frame = results(out)
    assert len(frame) == n and frame["episode_id"].is_unique
    assert sorted(frame["forecaster"]) == ["naive"] * 3 + ["sarima"] * 3


def test_edited_grid_keeps_existing_ids_and_runs_only_new_episodes(tmp_path):
    out = tmp_path / "run"
    exp = write_experiment(tmp_path, forecasters=["naive"], seeds=[0], set={"contexts": ["no-context"]})
    invoke("run", "--experiment", str(exp), "--out", str(out))
    first = results(out).set_index("episode")["episode_id"].to_dict()
    stamps = rows_on_disk(out)
    assert len(first) == 3

    # add a seed and a forecaster, both listed before the existing entries
    exp = write_experiment(tmp_path, forecasters=["ses", "naive"], seeds=[1, 0], set={"contexts": ["no-context"]})
    result = invoke("run", "--experiment", str(exp), "--out", str(out))
    assert "3 finished episode(s) are kept" in result.output
    frame = results(out)
    assert len(frame) == 12 and frame["episode_id"].is_unique
    kept = frame.set_index("episode")["episode_id"].to_dict()
    assert {e: kept[e] for e in first} == first
    assert {e: rows_on_disk(out)[e] for e in stamps} == stamps
    assert sorted(frame.groupby(["forecaster", "seed"]).size().items()) == [
        (("naive", 0), 3), (("naive", 1), 3), (("ses", 0), 3), (("ses", 1), 3)]


def test_episode_ids_are_content_hashes_shared_by_task_and_experiment_runs(tmp_path):
    """The same forecaster × context × task × seed has one id whether it comes from the task spec's own lists,
    a --set override or an experiment axis; any change of content changes it."""
    task = load_task(SPEC)
    params = task.params
    ids = {e: episode_id(task.spec.name, task.template, params, e, None) for e in task.template.episodes(params)}
    assert len(ids) == 30 and len(set(ids.values())) == 30
    assert all(len(i) == 12 and int(i, 16) >= 0 for i in ids.values())
    narrowed = load_task(SPEC, {"forecasters": ["arima"], "contexts": ["no-context"]})
    eid = episode_id(task.spec.name, task.template, narrowed.params, "arima/no-context/task_42", None)
    assert eid == ids["arima/no-context/task_42"]
    for change in ({"samples": 100}, {"seed": 1}, {"forecasters": [{"name": "arima", "options": {"max_p": 1}}]}):
        other = load_task(SPEC, {"forecasters": ["arima"], **change})
        fname = other.params.forecasters[0].name
        assert episode_id(task.spec.name, task.template, other.params, f"{fname}/no-context/task_42", None) != eid

    exp = write_experiment(tmp_path, forecasters=["arima"], seeds=[0], grid={"contexts": [["no-context"]]})
    out = tmp_path / "run"
    invoke("run", "--experiment", str(exp), "--out", str(out))
    frame = results(out)
    assert frame.loc[frame["benchmark_id"] == "task_42", "episode_id"].item() == eid


def test_set_overrides_dotted_paths_and_name_bad_values(tmp_path):
    assert parse_set(["samples=10", "budget.max_cost_usd=0.5", "contexts=[no-context]", "params.seed=3"]) == {
        "samples": 10, "budget.max_cost_usd": 0.5, "contexts": ["no-context"], "seed": 3}
    task = load_task(SPEC, parse_set(["samples=10", "budget.max_cost_usd=0.5"]))
    assert task.params.samples == 10 and task.params.budget.max_cost_usd == 0.5
    with pytest.raises(ConfigError, match="'samples 10': expected key=value"):
        parse_set(["samples 10"])
    with pytest.raises(ConfigError, match=r"sample-statistical.yaml: params.samples: .*greater than or equal to 1"):
        load_task(SPEC, {"samples": 0})
    out = tmp_path / "run"
    invoke("run", "--task", str(SPEC), "--set", "forecasters=[naive]", "--set", "contexts=[no-context]",
           "--set", "samples=5", "--out", str(out))
    frame = results(out)
    assert len(frame) == 3 and set(frame["n_samples"]) == {5} and set(frame["forecaster"]) == {"naive"}


def test_experiment_spec_errors_name_the_file_and_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntasks: [a.yaml]\nagents: [euclidean-1nn]\nforecasters: [naive]\n")
    with pytest.raises(ConfigError, match="bad.yaml: .*give agents or forecasters, not both"):
        load_experiment(bad)
    bad.write_text("name: x\nstages:\n  - {name: b, tasks: [a.yaml], evidence_from: a}\n")
    with pytest.raises(ConfigError, match="'a' is not an earlier stage"):
        load_experiment(bad)
    bad.write_text("name: x\nseeds: [1]\n")
    with pytest.raises(ConfigError, match="tasks: give at least one task spec"):
        load_experiment(bad)
    bad.write_text(f"name: x\ntasks: [{tmp_path}/none-*.yaml]\n")
    spec = load_experiment(bad)
    with pytest.raises(ConfigError, match=r"bad.yaml: tasks\[0\]: no task spec matches"):
        plan_experiment(spec, bad, tmp_path / "run", resolve_profile, load_task)


def test_resolving_agents_and_forecasters_errors_name_the_experiment_file_and_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: x\ntasks: [{REPO / 'tasks/tracebench/balldrop-low-direct.yaml'}]\n"
                   "agents: [euclidean-1nn, euclidan-1nn]\n")
    with pytest.raises(ConfigError) as caught:
        plan_experiment(load_experiment(bad), bad, tmp_path / "run", resolve_profile, load_task)
    assert str(caught.value).startswith(f"{bad}: agents[1]: no agent profile named 'euclidan-1nn' "
                                        "(did you mean 'euclidean-1nn'")
    bad.write_text(f"name: x\nstages:\n  - name: f\n    tasks: [{SPEC}]\n    forecasters: [naive, arimma]\n")
    with pytest.raises(ConfigError) as caught:
        plan_experiment(load_experiment(bad), bad, tmp_path / "run", resolve_profile, load_task)
    assert str(caught.value).startswith(f"{bad}: stages.f.forecasters[1]: {SPEC}: params.forecasters[0].name: "
                                        "no forecaster named 'arimma' (known: ")
    bad.write_text(f"name: x\ntasks: [{SPEC}]\nforecasters: [naive]\nset: {{samples: -1}}\n")
    with pytest.raises(ConfigError) as caught:
        plan_experiment(load_experiment(bad), bad, tmp_path / "run", resolve_profile, load_task)
    assert str(caught.value).startswith(f"{bad}: forecasters[0]: {SPEC}: params.samples")


def test_stages_carry_the_evidence_source_into_the_forecasting_rows(tmp_path):
    """evidence_from: each agent of the earlier stage becomes an evidence source {run, agent} of the later
    stage's tasks: part of the episode id and of the row.  The research stage here is a TraceBench grid
    standing in for deep-research agents (its agents are what matters)."""
    (tmp_path / "other-1nn.yaml").write_text("name: other-1nn\nagent: euclidean-1nn\n")
    spec = ExperimentSpec.model_validate({"name": "staged", "stages": [
        {"name": "research", "tasks": [str(REPO / "tasks/tracebench/balldrop-low-direct.yaml")],
         "agents": ["euclidean-1nn", "other-1nn.yaml"]},
        {"name": "forecast", "tasks": [str(SPEC)], "forecasters": ["naive"], "set": {"contexts": ["dr-evidence"]},
         "evidence_from": "research"}]})
    stages = plan_experiment(spec, tmp_path / "staged.yaml", tmp_path / "run", resolve_profile, load_task)
    assert [(s.name, s.root) for s in stages] == [("research", tmp_path / "run" / "research"),
                                                   ("forecast", tmp_path / "run" / "forecast")]
    sources = [u.task.params.evidence.model_dump() for u in stages[1].units]
    run = str((tmp_path / "run" / "research").resolve())
    assert sources == [{"run": run, "agent": "euclidean-1nn"}, {"run": run, "agent": "other-1nn"}]
    a, b = (u.task for u in stages[1].units)
    ep = "naive/dr-evidence/task_42"
    assert episode_id(a.spec.name, a.template, a.params, ep, None) != episode_id(b.spec.name, b.template, b.params,
                                                                                 ep, None)
    # a condition that reads no evidence is one episode whatever the evidence source
    ep = "naive/no-context/task_42"
    assert episode_id(a.spec.name, a.template, a.params, ep, None) == episode_id(b.spec.name, b.template, b.params,
                                                                                 ep, None)


def test_shipped_experiments_expand(tmp_path):
    drcik = load_experiment(REPO / "tasks/experiments/drcik-sample.yaml")
    units = plan_experiment(drcik, REPO / "tasks/experiments/drcik-sample.yaml", tmp_path, resolve_profile,
                            load_task)[0].units
    assert len(units) == 10  # 5 forecasters × 2 context points
    assert sum(len(u.task.template.episodes(u.task.params)) for u in units) == 30
    staged_file = REPO / "tasks/experiments/drcik-research-sample.yaml"
    research, forecast = plan_experiment(load_experiment(staged_file), staged_file, tmp_path, resolve_profile,
                                         load_task)
    [unit] = research.units
    assert (unit.task.template.name, unit.task.params.episode_kind, unit.profile.name) == (
        "drcik", "research", "retrieval-bm25-gemini-3-flash")
    assert len(unit.task.template.episodes(unit.task.params)) == 3
    assert [(u.task.params.forecasters[0].name, u.task.params.evidence.agent) for u in forecast.units] == [
        ("naive", "retrieval-bm25-gemini-3-flash"), ("arima", "retrieval-bm25-gemini-3-flash")]
    assert {u.task.params.evidence.run for u in forecast.units} == {str((tmp_path / "research").resolve())}
    smoke = load_experiment(REPO / "tasks/experiments/balldrop-smoke.yaml")
    units = plan_experiment(smoke, REPO / "tasks/experiments/balldrop-smoke.yaml", tmp_path, resolve_profile,
                            load_task)[0].units
    assert [(u.task.spec.name, u.profile.name, u.seed) for u in units] == [
        ("balldrop-low-direct", "euclidean-1nn", 0), ("balldrop-low-direct", "euclidean-1nn", 1),
        ("balldrop-high-direct", "euclidean-1nn", 0), ("balldrop-high-direct", "euclidean-1nn", 1)]


def test_stage_scripts_give_each_agent_profile_its_own_scripted_model(tmp_path):
    dr_file = REPO / "tasks/experiments/drcik-dr-sample.yaml"
    research, forecast = plan_experiment(load_experiment(dr_file), dr_file, tmp_path, resolve_profile, load_task)
    scripts = {u.profile.name: Path(u.model_options["script"]) for u in research.units}
    assert scripts == {
        "retrieval-bm25-gemini-3-flash": REPO / "examples/scripts/retrieval-drcik.yaml",
        "retrieval-gemini-3-flash": REPO / "examples/scripts/retrieval-drcik.yaml",
        "drbench-gemini-3-flash": REPO / "examples/scripts/drbench-drcik.yaml",
        "opendr-gemini-3-flash": REPO / "examples/scripts/opendr-drcik.yaml",
        "bench2future-gemini-3-flash": REPO / "examples/scripts/bench2future-drcik.yaml"}
    assert sorted(u.task.params.evidence.agent for u in forecast.units) == sorted(scripts)
    assert all(u.model_options == {} for u in forecast.units)
    stage = {"name": "research", "tasks": [str(REPO / "tasks/drcik/research-sample.yaml")],
             "agents": ["retrieval-bm25-gemini-3-flash"]}
    for scripts_field, message in (({"drbench-gemini-3-flash": str(dr_file)}, "stages.research.scripts.drbench-"
                                    "gemini-3-flash: not one of this stage's agents"),
                                   ({"retrieval-bm25-gemini-3-flash": "nowhere.yaml"},
                                    "stages.research.scripts.retrieval-bm25-gemini-3-flash: no such script")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(yaml.safe_dump({"name": "bad", "stages": [{**stage, "scripts": scripts_field}]}))
        with pytest.raises(ConfigError, match=message):
            plan_experiment(load_experiment(bad), bad, tmp_path / "run", resolve_profile, load_task)


def test_one_run_directory_holds_rows_of_both_templates(tmp_path):
    """TraceBench's bool ``context`` beside Dr-CiK's condition names: the column is written as text."""
    from harness.store import RunStore

    store = RunStore.create(tmp_path / "run")
    for key, row in (("a", {"episode": "a", "episode_id": "1", "context": True, "accuracy": 0.5}),
                     ("b", {"episode": "b", "episode_id": "2", "context": "no-context", "scrps": 0.3})):
        store.episode(key).root.mkdir(parents=True)
        store.episode(key).row.write_text(json.dumps(row))
    frame = pd.read_parquet(store.write_results())
    assert frame["context"].tolist() == ["True", "no-context"] and frame["accuracy"].iloc[0] == 0.5


def test_a_staged_experiment_runs_each_stage_into_its_folder_with_the_evidence_source(tmp_path):
    """End to end through the command: stage ``first`` (naive forecasts) then ``second`` with
    ``evidence_from: first``; the second stage's DR rows name the first stage's run and agent (which wrote
    no evidence, so each is failed with that reason)."""
    exp = tmp_path / "staged.yaml"
    exp.write_text(yaml.safe_dump({"name": "staged", "stages": [
        {"name": "first", "tasks": [str(SPEC)], "forecasters": ["naive"], "set": {"contexts": ["no-context"],
                                                                                  "samples": 4}},
        {"name": "second", "tasks": [str(SPEC)], "forecasters": ["naive"],
         "set": {"contexts": ["dr-evidence"], "samples": 4}, "evidence_from": "first"}]}))
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "--experiment", str(exp), "--out", str(out)])
    # every DR episode of ``second`` failed: its submission is incomplete, which fails the command once the
    # stage's results are written (``first``'s export is complete and valid)
    assert result.exit_code != 0 and "1 invalid export(s)" in str(result.exception), result.output
    assert "second/submissions/naive__dr-evidence__naive" in str(result.exception), result.exception
    assert "submission naive__no-context: valid" in result.output, result.output
    first, second = results(out / "first"), results(out / "second")
    assert len(first) == 3 and len(second) == 3
    assert set(second["evidence_run"]) == {str((out / "first").resolve())} and set(second["evidence_agent"]) == {
        "naive"}
    assert set(second["reason"]) == {"no DR evidence for this task"} and first["evidence_run"].isna().all()
    run = json.loads((out / "second" / "run.json").read_text())
    assert run["identity"] == {"experiment": "staged", "stage": "second"}

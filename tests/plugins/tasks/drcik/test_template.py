"""The ``drcik`` task template under ``harness run`` on the bundled sample tasks: run directory, results
rows, the release's submission files and their validation, the params and their errors, evidence sources."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scoringrules
import yaml
from click.testing import CliRunner

from tests.support.report_runs import make_main_run
from harness.cli import cli
from harness.config import ConfigError
from harness.report import build_report
from harness.run import load_task
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tests.support.paths import REPO, TESTS

ROOT = REPO
SCRIPTS = TESTS / "fixtures" / "scripts" / "llm_dp"
TASK_IDS = ["task_42", "task_201", "task_163"]          # benchmark_manifest.json order
HORIZONS = {"task_42": 100, "task_201": 90, "task_163": 24}


def spec_file(folder: Path, name: str = "cli", **params) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, "template": "drcik", "params": params}))
    return path


def harness_run(*args: str):
    return CliRunner().invoke(cli, ["run", *map(str, args)])


def finished(out: Path) -> dict:
    run = json.loads((out / "run.json").read_text())
    (summary,) = run["finished"].values()
    return summary


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    spec = spec_file(folder, forecasters=["naive", "ses"], contexts=["no-context", "supporting-evidence"])
    out = folder / "run"
    return out, harness_run("--task", spec, "--out", out)


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
    assert rows["episode_id"].is_unique and all(e.endswith("-" + i) for e, i in zip(rows["episode"], rows["episode_id"]))
    assert (rows["status"] == "ok").all() and not rows["flag_untrained"].any() and not rows["context_used"].any()
    assert rows.loc[rows["context"] == "supporting-evidence", "context_items"].gt(0).all()
    assert rows["evidence_run"].isna().all() and (rows["episode_kind"] == "forecast").all()
    # statistical forecasters ignore text: one forecast scored under both conditions
    by_cell = rows.set_index(["forecaster", "context", "benchmark_id"])["scrps"]
    for f in ("naive", "ses"):
        for t in TASK_IDS:
            assert by_cell[(f, "no-context", t)] == by_cell[(f, "supporting-evidence", t)]
    assert "naive" in result.output and "submission ses__supporting-evidence: valid" in result.output


def test_rows_record_the_fitted_model_seasonal_period_and_data_rules(tmp_path):
    spec = spec_file(tmp_path, forecasters=["arima", "sarima"], contexts=["no-context"], samples=5)
    result = harness_run("--task", spec, "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index(["forecaster", "benchmark_id"])
    tasks = {t.benchmark_id: t for t in load_tasks()}
    for (forecaster, task_id), row in rows.iterrows():
        fitted = json.loads(row["fitted_model"])
        assert row["seasonal_period"] == tasks[task_id].seasonal_period
        assert row["data_rules"] == ("; ".join(tasks[task_id].data_notes) or None)
        if forecaster == "arima":
            assert len(fitted["arima"]["order"]) == 3 and np.isfinite(fitted["arima"]["aic"])
        else:
            assert "seasonal" in fitted
    assert rows.loc[("sarima", "task_163"), "seasonal_period"] == 24
    # the fits' warnings are in the record, not the console (measured: ARIMA's grid on task_42)
    assert "Warning" not in result.output
    assert json.loads(rows.loc[("arima", "task_42"), "fitted_model"])["fit_warnings"] == {
        "EstimationWarning: Non-invertible starting MA parameters found. Using zeros as starting parameters.": 6,
        "EstimationWarning: Non-stationary starting autoregressive parameters found. Using zeros as starting "
        "parameters.": 3,
        "ConvergenceWarning: Maximum Likelihood optimization failed to converge. Check mle_retvals": 1}


def test_submission_files_and_scores_agree(cli_run):
    out, _ = cli_run
    rows = pd.read_parquet(out / "results.parquet").set_index(["forecaster", "context", "benchmark_id"])
    tasks = {t.benchmark_id: t for t in load_tasks()}
    for f in ("naive", "ses"):
        for c in ("no-context", "supporting-evidence"):
            folder = out / "submissions" / f"{f}__{c}"
            lines = [json.loads(line) for line in (folder / "forecasts.jsonl").read_text().splitlines()]
            assert [line["benchmark_id"] for line in lines] == TASK_IDS
            for line in lines:
                task = tasks[line["benchmark_id"]]
                samples = np.asarray(line["samples"])
                assert samples.shape == (25, HORIZONS[task.benchmark_id])
                stored = np.load(out / "episodes" / rows.loc[(f, c, task.benchmark_id), "episode"] / "samples.npy")
                np.testing.assert_array_equal(samples, stored)
                y = task.future.to_numpy()
                crps = scoringrules.crps_ensemble(y, samples, m_axis=0, estimator="nrg")
                expected = min(5.0, float(np.mean(crps)) / float(np.mean(np.abs(y))))
                assert rows.loc[(f, c, task.benchmark_id), "scrps"] == pytest.approx(expected, rel=1e-9)
            meta = json.loads((folder / "metadata.json").read_text())
            assert meta["method"] == f"{f} ({c})" and meta["type"] == "statistical" and meta["base_model"] == "none"


def test_run_json_records_validation(cli_run):
    out, _ = cli_run
    run = json.loads((out / "run.json").read_text())
    assert run["identity"] == {"task": "cli", "profile": None} and run["sandbox"] is None
    assert len(run["episodes"]) == 12 and run["finished_at"]
    submissions = finished(out)["submissions"]
    assert set(submissions) == {f"{f}__{c}" for f in ("naive", "ses") for c in ("no-context", "supporting-evidence")}
    check = submissions["naive__no-context"]
    assert check["ok"] and check["errors"] == [] and check["empty_metadata"] == ["organization", "contact"]
    assert sum("the leaderboard asks for at least 100" in w for w in check["warnings"]) == 3


def test_spec_file_with_overrides(tmp_path):
    spec = spec_file(tmp_path, "exp", tasks="tasks/task_163.json", forecasters=["naive"], contexts=["background"],
                     samples=30, seed=4, submission={"organization": "Lab", "contact": "a@b.c",
                                                     "reproduction": "https://x.org"})
    (tmp_path / "tasks").mkdir()
    source = ROOT / "plugins" / "tasks" / "drcik" / "data" / "sample"
    (tmp_path / "tasks" / "task_163.json").write_text((source / "tasks" / "task_163.json").read_text())
    (tmp_path / "documents").symlink_to(source / "documents")
    result = harness_run("--task", spec, "--set", "samples=100", "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert rows[["benchmark_id", "n_samples", "seed", "context", "status"]].values.tolist() == [
        ["task_163", 100, 4, "background", "ok"]]
    assert bool(rows["reproduces_paper"].iloc[0]) is False
    check = finished(tmp_path / "run")["submissions"]["naive__background"]
    # 100 samples and full metadata: no organization/contact named empty
    assert check == {"ok": True, "errors": [], "warnings": [], "empty_metadata": []}
    meta = json.loads((tmp_path / "run" / "submissions" / "naive__background" / "metadata.json").read_text())
    assert meta["organization"] == "Lab" and "stand-in" in meta["notes"]


def test_shipped_specs_load():
    spec = load_task(ROOT / "tasks" / "drcik" / "sample-statistical.yaml").params
    assert [f.name for f in spec.forecasters] == ["naive", "ses", "ets", "arima", "sarima"]
    assert spec.contexts == ["no-context", "supporting-evidence"] and spec.samples == 25
    assert (spec.seed, spec.time_limit, spec.tasks, spec.episode_kind) == (0, 600.0, "sample", "forecast")
    llm = load_task(ROOT / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml").params
    assert Path(llm.script) == (SCRIPTS / "sample.yaml").resolve()
    chronos = load_task(ROOT / "tasks" / "drcik" / "sample-chronos.yaml").params
    assert chronos.forecasters[0].name == "chronos"
    research = load_task(ROOT / "tasks" / "drcik" / "research-sample.yaml")
    assert (research.template.name, research.params.episode_kind, research.params.forecasters) == (
        "drcik", "research", [])
    assert research.template.episodes(research.params) == TASK_IDS
    assert not research.template.runs_in_harness(research.params)


@pytest.mark.parametrize("params,problem", [
    ({"forecasters": ["naive"], "contexts": ["no-context", "no-context"]}, "a context condition is listed twice"),
    ({"forecasters": ["naive"], "samples": 0}, "params.samples: Input should be greater than or equal to 1"),
    ({"forecasters": []}, "forecasting episodes need at least one forecaster"),
    ({"forecasters": ["naive"], "colour": "red"}, "params.colour: Extra inputs are not permitted"),
    ({"forecasters": ["naive"], "episode_kind": "chat"}, "params.episode_kind: Input should be 'forecast' or "
                                                          "'research'"),
    ({"episode_kind": "research", "forecasters": ["naive"]}, "research episodes take no forecasters"),
    ({"episode_kind": "research", "episodes": ["task_42", "task_42"]}, "episodes: a benchmark id is listed twice"),
    ({"episode_kind": "research", "metadata": {"colour": "red"}}, "metadata: unknown field(s) ['colour']"),
])
def test_spec_errors_name_the_file_and_field(tmp_path, params, problem):
    path = spec_file(tmp_path, "bad", **params)
    with pytest.raises(ConfigError) as caught:
        load_task(path)
    assert str(caught.value).startswith(str(path)) and problem in str(caught.value)


def test_unknown_forecaster_bad_options_and_research_without_agent_are_refused_before_running(tmp_path):
    result = harness_run("--task", spec_file(tmp_path, "a", forecasters=["naive", "nope"]), "--out", tmp_path / "a")
    assert result.exit_code != 0 and "params.forecasters[1].name: no forecaster named 'nope'" in str(result.exception)
    result = harness_run("--task", spec_file(tmp_path, "b", forecasters=[{"name": "naive", "options": {"k": 1}}]),
                         "--out", tmp_path / "b")
    assert "params.forecasters[0].options: forecaster 'naive' takes no options" in str(result.exception)
    result = harness_run("--task", spec_file(tmp_path, "c", episode_kind="research"), "--out", tmp_path / "c")
    assert "template 'drcik' runs an agent: give an agent profile" in str(result.exception)
    result = harness_run("--task", spec_file(tmp_path, "d", episode_kind="research", episodes=["task_42", "nope"]),
                         "--agent", "retrieval-bm25-gemini-3-flash", "--model-backend", "scripted", "--script",
                         ROOT / "examples" / "scripts" / "retrieval-drcik.yaml", "--out", tmp_path / "d")
    assert "params.episodes: unknown benchmark ids ['nope']" in str(result.exception)
    for name in "abcd":  # refused before the run directory is created: nothing left behind
        assert not (tmp_path / name).exists()


def test_a_profile_no_forecaster_uses_is_refused_not_ignored(tmp_path):
    spec = spec_file(tmp_path, "p", forecasters=["naive", "arima"], contexts=["no-context"])
    result = harness_run("--task", spec, "--agent", "euclidean-1nn", "--out", tmp_path / "p")
    assert result.exit_code != 0 and not (tmp_path / "p").exists()
    assert str(result.exception) == (f"{spec}: agent profile 'euclidean-1nn' would be ignored: its agent "
                                     "'euclidean-1nn' is not one of this task's forecasters (naive, arima) and "
                                     "none of them calls a model")
    with_agent = spec_file(tmp_path, "q", forecasters=["llm-dp"], agent="euclidean-1nn")
    result = harness_run("--task", with_agent, "--agent", "euclidean-1nn", "--out", tmp_path / "q")
    assert "its model-backed forecasters (llm-dp) use params.agent (euclidean-1nn)" in str(result.exception)
    template = load_task(spec).template
    for forecasters, agent in ((["llm-dp"], None), (["naive", "chronos"], "chronos")):  # used: no objection
        task = load_task(spec_file(tmp_path, "r", forecasters=forecasters))
        profile = type("Profile", (), {"agent": agent or "euclidean-1nn", "name": "p"})()
        assert template.profile_problem(task.params, profile) is None
    research = load_task(spec_file(tmp_path, "s", episode_kind="research"))
    assert template.profile_problem(research.params, profile) is None
    assert template.profile_problem(research.params, None) is None  # sandboxed: the core asks for --agent


def write_evidence(folder: Path) -> dict:
    tasks = {t.benchmark_id: t for t in load_tasks()}
    task = tasks["task_163"]
    (folder / "task_42").mkdir(parents=True)
    (folder / "task_163.json").write_text(json.dumps([
        {"claim": "supported", "cited_document_ids": [task.supporting_ids[0]]},
        {"claim": "from a distractor", "cited_document_ids": [task.distractor_ids[0]]}]))
    (folder / "task_42" / "evidence.json").write_text(json.dumps({"evidence": [
        {"claim": "only a distractor", "cited_document_ids": [tasks["task_42"].distractor_ids[0]]}]}))
    return tasks


def test_dr_conditions_need_and_read_evidence(tmp_path):
    spec = spec_file(tmp_path, "dr", forecasters=["naive"], contexts=["verified-dr", "dr-evidence"], samples=4)
    result = harness_run("--task", spec, "--out", tmp_path / "none")
    assert "the condition(s) verified-dr, dr-evidence need a DR agent's evidence" in str(result.exception)
    write_evidence(tmp_path / "evidence")
    result = harness_run("--task", spec, "--set", f"dr_evidence={tmp_path / 'evidence'}", "--out", tmp_path / "run")
    # task_201 has no evidence: its submissions are invalid, which fails the command once the results are written
    assert result.exit_code != 0 and "2 invalid export(s)" in str(result.exception), result.output
    summary = result.output.partition("results: ")[2]  # the summary table is shown before the error
    assert "sCRPS" in summary and summary.count("task_201-s4") == 2, result.output
    assert "━" not in result.output  # no progress bar in a log: one line per episode instead
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index(["context", "benchmark_id"])
    assert rows.loc[("verified-dr", "task_163"), "context_items"] == 1
    assert rows.loc[("dr-evidence", "task_163"), "context_items"] == 2
    assert rows.loc[("verified-dr", "task_42"), "context_status"] == "verified_empty"
    assert rows.loc[("verified-dr", "task_201"), "reason"] == "no DR evidence for this task"
    assert (rows["evidence_run"] == str(tmp_path / "evidence")).all() and rows["evidence_agent"].isna().all()
    meta = json.loads((tmp_path / "run" / "submissions" / "naive__verified-dr" / "metadata.json").read_text())
    assert meta["type"] == "agentic"
    assert "submission naive__verified-dr: INVALID" in result.output and "no forecast for 1 task(s): task_201" \
        in result.output


def research_run(folder: Path, agents: dict[str, Path]) -> Path:
    """A research run directory as the stage contract describes it: one episode per agent and task, its row
    naming the ``profile``.  ``dr-a`` episodes carry ``benchmark_id`` in the row and ``workspace/evidence.json``
    (release ids); the others the research template's layout: ``key/research_key.json`` and the resolved
    items in ``score.json`` details."""
    for agent, evidence in agents.items():
        for task_id in ("task_163", "task_42"):
            source = evidence / f"{task_id}.json"
            source = source if source.is_file() else evidence / task_id / "evidence.json"
            episode = folder / "episodes" / f"{agent}-{task_id}"
            (episode / "workspace").mkdir(parents=True)
            row = {"episode": episode.name, "profile": agent}
            if agent == "dr-a":
                (episode / "workspace" / "evidence.json").write_text(source.read_text())
                row["benchmark_id"] = task_id
            else:
                items = json.loads(source.read_text())
                (episode / "workspace" / "evidence.json").write_text("not what is read: ids are sandbox ids")
                (episode / "key").mkdir()
                (episode / "key" / "research_key.json").write_text(json.dumps({"benchmark_id": task_id}))
                (episode / "score.json").write_text(json.dumps({"metrics": {}, "details": [
                    {"claim": i["claim"], "cited": ["x"], "resolved": i["cited_document_ids"], "dropped": []}
                    for i in items]}))
            (episode / "row.json").write_text(json.dumps(row))
    return folder


def test_two_runs_differing_only_in_evidence_source_are_both_kept_by_the_report(tmp_path):
    write_evidence(tmp_path / "ev-a")
    tasks = {t.benchmark_id: t for t in load_tasks()}
    (tmp_path / "ev-b").mkdir()
    (tmp_path / "ev-b" / "task_163.json").write_text(json.dumps([
        {"claim": "b", "cited_document_ids": [tasks["task_163"].supporting_ids[0]]}]))
    (tmp_path / "ev-b" / "task_42.json").write_text(json.dumps([{"claim": "b", "cited_document_ids": []}]))
    research = research_run(tmp_path / "research", {"dr-a": tmp_path / "ev-a", "dr-b": tmp_path / "ev-b"})
    from tsagent_plugins.tasks.drcik.template import DrcikTemplate

    claims = {k: list(v.claims) for k, v in DrcikTemplate().research_evidence(str(research), "dr-b").items()}
    assert sorted(claims) == ["task_163", "task_42"]
    assert [c.cited_document_ids for c in claims["task_163"]] == [(tasks["task_163"].supporting_ids[0],)]
    spec = spec_file(tmp_path, "dr", forecasters=["naive"], contexts=["dr-evidence"], samples=4)
    for agent in ("dr-a", "dr-b"):
        result = harness_run("--task", spec, "--set", f"evidence.run={research}", "--set", f"evidence.agent={agent}",
                             "--out", tmp_path / agent)
        # neither source has evidence for task_201: that cell's submission is incomplete, which fails the run
        # once its results are written
        assert result.exit_code != 0 and "1 invalid export(s)" in str(result.exception), result.output
    a, b = (pd.read_parquet(tmp_path / d / "results.parquet") for d in ("dr-a", "dr-b"))
    assert set(a["evidence_agent"]) == {"dr-a"} and set(b["evidence_agent"]) == {"dr-b"}
    assert (a["evidence_run"] == str(research)).all()
    # same forecaster, condition, tasks and forecasts; only the evidence source differs
    assert a["scrps"].fillna(-1).tolist() == b["scrps"].fillna(-1).tolist()
    assert not set(a["episode_id"]) & set(b["episode_id"])
    items = dict(zip(a["benchmark_id"], a["context_items"]))
    assert items["task_163"] == 2 and dict(zip(b["benchmark_id"], b["context_items"]))["task_163"] == 1
    report = build_report([tmp_path / "dr-a", tmp_path / "dr-b"], with_figures=False)
    assert len(report.results.frame) == 6 and not any("repeated" in m for m in report.messages)
    table = report.table("drcik-table2-dr")                         # one column per DR agent
    assert table.header == ["Forecaster", "DR condition", "dr-a", "dr-b", "Fail (per column)"]
    assert sorted(d["n"] for d in table.data) == [2, 2]            # task_201 has no evidence: failed in both
    assert table.rows[0][-1] == "1 | 1"


def test_report_says_when_it_mixes_sample_counts(tmp_path):
    spec = spec_file(tmp_path, "s", forecasters=["naive"], contexts=["no-context"])
    for s in (5, 10):
        assert harness_run("--task", spec, "--set", f"samples={s}", "--out", tmp_path / f"s{s}").exit_code == 0
    report = build_report([tmp_path / "s5", tmp_path / "s10"], with_figures=False)
    assert len(report.results.frame) == 6
    assert any("mix sample counts (n_samples = 5, 10)" in m for m in report.messages)
    assert [row[0] for row in report.table("drcik-table2").rows] == ["naive S=5", "naive S=10"]


def test_report_over_a_drcik_run_and_a_tracebench_run_prints_both_tables(tmp_path):
    spec = spec_file(tmp_path, "d", forecasters=["naive"], contexts=["no-context"], samples=5)
    assert harness_run("--task", spec, "--out", tmp_path / "drcik").exit_code == 0
    tracebench = make_main_run(tmp_path / "tb", with_ablation=False)
    done = subprocess.run([sys.executable, "-m", "harness", "report", str(tracebench), str(tmp_path / "drcik"),
                           "--out", str(tmp_path / "report")], capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / "report" / "report.md") in done.stdout.splitlines()  # the report prints what it wrote
    document = (tmp_path / "report" / "report.md").read_text()
    assert "Table 1" in document and "Dr-CiK Table 2" in document


def test_llm_dp_on_the_scripted_backend(tmp_path):
    good = harness_run("--task", ROOT / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml", "--set", "samples=3",
                       "--set", "contexts=[no-context]", "--out", tmp_path / "good")
    assert good.exit_code == 0, good.output
    rows = pd.read_parquet(tmp_path / "good" / "results.parquet")
    dp = rows[rows["forecaster"] == "llm-dp"]
    assert (dp["status"] == "ok").all() and (dp["profile"] == "scripted-dp").all()
    assert (dp["model"] == "scripted-model").all() and (dp["n_requests"] == 3).all()
    assert rows.loc[rows["forecaster"] == "naive", "model"].isna().all()
    # the rows record the backend that answered: the script's costs are marked wherever they are shown
    assert (dp["model_backend"] == "scripted").all() and (dp["model_billed"] == False).all()  # noqa: E712
    assert rows.loc[rows["forecaster"] == "naive", ["model_backend", "model_billed"]].isna().all().all()
    assert len(list((tmp_path / "good" / "episodes").glob("llm-dp*/proxy/*/proxy.jsonl.zst"))) == 3
    meta = json.loads((tmp_path / "good" / "submissions" / "llm-dp__no-context" / "metadata.json").read_text())
    assert (meta["type"], meta["base_model"]) == ("direct_llm", "scripted-model")
    spec = spec_file(tmp_path, "bad", forecasters=["llm-dp"], samples=2, model_backend="scripted",
                     script=str(SCRIPTS / "fail.yaml"))
    bad = harness_run("--task", spec, "--out", tmp_path / "bad")
    assert bad.exit_code != 0 and "1 invalid export(s)" in str(bad.exception), bad.output   # after the results
    assert "submission llm-dp__no-context: INVALID" in bad.output and "no forecast for 3 task(s)" in bad.output
    assert "failed: llm-dp / no-context: 3 task(s), e.g. ForecastError: 0 of 2 valid samples" in bad.output
    failed = pd.read_parquet(tmp_path / "bad" / "results.parquet")
    assert (failed["status"] == "failed").all()
    assert failed["reason"].str.startswith("ForecastError: 0 of 2 valid samples after 3 round(s)").all()


def test_model_backed_forecaster_needs_a_profile(tmp_path):
    """Refused before the run: no profile given, none in params.agent, no scripted backend."""
    spec = spec_file(tmp_path, "x", forecasters=["naive", "llm-dp"])
    result = harness_run("--task", spec, "--out", tmp_path / "x")
    assert result.exit_code != 0 and not (tmp_path / "x").exists()
    assert str(result.exception) == (f"{spec}: params.agent: the model-backed forecaster(s) llm-dp need an agent "
                                     "profile (params.agent or --agent), or model_backend: scripted with a script")
    result = harness_run("--task", spec_file(tmp_path, "y", forecasters=["llm-dp"], agent="no-such-profile"),
                         "--out", tmp_path / "y")
    assert "params.agent: no agent profile named 'no-such-profile'" in str(result.exception)
    assert not (tmp_path / "y").exists()
    template = load_task(spec).template  # a profile given, or the scripted backend: nothing to object to
    profile = type("Profile", (), {"agent": "euclidean-1nn", "name": "euclidean-1nn"})()
    assert template.profile_problem(load_task(spec).params, profile) is None
    scripted = load_task(spec_file(tmp_path, "z", forecasters=["llm-dp"], model_backend="scripted"))
    assert template.profile_problem(scripted.params, None) is None


def test_tasks_list_shows_each_specs_template_and_command():
    done = subprocess.run([sys.executable, "-m", "harness", "tasks", "list", "--dir", str(ROOT / "tasks")],
                          capture_output=True, text=True, timeout=120, env={**__import__("os").environ,
                                                                             "COLUMNS": "250"})
    assert done.returncode == 0, done.stderr
    lines = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:4]]
             for line in done.stdout.splitlines() if line.count("│") > 4 and line.split("│")[1].strip()}
    assert lines["drcik/sample-statistical.yaml"] == ["drcik", "--task"]
    assert lines["tracebench/balldrop-low-direct.yaml"] == ["tracebench", "--task"]
    assert lines["experiments/drcik-sample.yaml"] == ["(experiment)", "--experiment"]
    assert lines["drcik/research-sample.yaml"] == ["drcik", "--task"]
    assert lines["experiments/drcik-research-sample.yaml"] == ["(experiment)", "--experiment"]
    assert "invalid" not in done.stdout


def test_a_forecast_episode_id_is_parsed_once_into_its_parts_and_entry():
    from tsagent_plugins.tasks.drcik.spec import ForecastEpisode

    task = load_task(REPO / "tasks" / "drcik" / "sample-statistical.yaml",
                     {"forecasters": ["naive", {"name": "ses", "options": {}}], "contexts": ["no-context"]})
    episodes = task.template.episodes(task.params)
    parsed = ForecastEpisode.parse(task.params, episodes[-1])
    assert (parsed.forecaster, parsed.context, parsed.entry.name) == ("ses", "no-context", "ses")
    assert ForecastEpisode.id(parsed.forecaster, parsed.context, parsed.task_id) == episodes[-1]
    with pytest.raises(ValueError, match="episode 'arima/no-context/task_42': no forecaster 'arima'"):
        ForecastEpisode.parse(task.params, "arima/no-context/task_42")
    with pytest.raises(ValueError, match="expected <forecaster>/<context>/<benchmark_id>"):
        ForecastEpisode.parse(task.params, "naive/task_42")


def role_tasks(folder: Path) -> Path:
    """The sample with every evidence item marked (Appendix K.2): E1-E2 retrospective, the others prospective."""
    import shutil

    from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR

    shutil.copytree(SAMPLE_DIR, folder)
    for path in (folder / "tasks").glob("*.json"):
        raw = json.loads(path.read_text())
        for i, item in enumerate(raw["annotations"]["gt_evidence"]):
            item["role"] = "retrospective" if i < 2 else "prospective"
        path.write_text(json.dumps(raw))
    return folder


def test_role_conditions_run_from_a_spec_and_refuse_tasks_without_roles(tmp_path):
    """retrospective-only / prospective-only (Table 17) run from a spec on tasks marking roles; each row's
    context_items is the count of that role's items; the sample (no roles) is refused before running."""
    tasks = role_tasks(tmp_path / "tasks")
    spec = spec_file(tmp_path, "roles", tasks=str(tasks), forecasters=["naive"], samples=5,
                     contexts=["no-context", "retrospective-only", "prospective-only"])
    result = harness_run("--task", spec, "--out", tmp_path / "run")
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index(["context", "benchmark_id"])
    evidence = {t.benchmark_id: len(t.evidence) for t in load_tasks(tasks)}
    for task_id, n in evidence.items():
        assert rows.loc[("retrospective-only", task_id), "context_items"] == 2
        assert rows.loc[("prospective-only", task_id), "context_items"] == n - 2
        assert rows.loc[("prospective-only", task_id), "status"] == "ok"
    refused = harness_run("--task", spec_file(tmp_path, "sample", forecasters=["naive"],
                                              contexts=["no-context", "retrospective-only"]), "--out", tmp_path / "x")
    assert refused.exit_code != 0 and not (tmp_path / "x").exists()
    assert ("params.contexts: 3 task(s) cannot be given retrospective-only; task task_42: "
            "annotations.gt_evidence[0].role is not given") in str(refused.exception)


def test_a_research_submission_needs_both_a_readable_report_and_evidence():
    from harness import EpisodeScore
    from tsagent_plugins.tasks.drcik.template import DrcikTemplate

    template = DrcikTemplate()
    good = EpisodeScore({"report_ok": True, "evidence_ok": True, "output_reason": None})
    assert template.submission_problem(None, "task_42", good) is None
    missing = EpisodeScore({"report_ok": False, "evidence_ok": True, "output_reason": "report.md: not found"})
    assert template.submission_problem(None, "task_42", missing) == "report.md: not found"
    assert template.submission_problem(None, "task_42", EpisodeScore({"report_ok": True, "evidence_ok": False})) \
        == "report.md or evidence.json is missing or unreadable"


"""``harness export RUN --format inspect``, read back by Inspect AI's own code.

Each run is made here with ``harness run`` (offline, scripted models), exported with the ``harness export``
command, and every log is read with ``inspect_ai.log.read_eval_log`` and ``inspect_ai.analysis.samples_df``:
one sample per results row, its scores equal to the row's (results.parquet; for Dr-CiK research episodes
the DR metrics of ``dr_scores.jsonl``), failed rows as errored samples, the transcript's model and tool events
equal in number to the trajectory's model calls and tool calls, token usage equal to the row's.

* Dr-CiK: the shipped experiment ``tasks/experiments/drcik-dr-sample.yaml`` (five DR agents × three tasks,
  then the forecasting stage), in a local sandbox;
* TraceBench: the real Claude Code CLI against the scripted model in the Docker sandbox (marked ``docker``:
  it needs the agent image), direct and programmatic, plus an episode whose script does not fit the CLI
  (a failed episode).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.support.paths import REPO
from tests.support.terminal_e2e import e2e_marks

from inspect_ai.analysis import samples_df
from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import read_eval_log

EXPERIMENT = REPO / "tasks" / "experiments" / "drcik-dr-sample.yaml"
SCRIPTS = REPO / "examples" / "scripts"
DR_FIELDS = {"dr_evidence_recall": "evidence_recall", "dr_supporting_recall": "supporting_recall",
             "dr_distractor_avoidance": "distractor_avoidance", "dr_hallucinated": "hallucinated"}


def harness(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


def export(run: Path, out: Path) -> list[Path]:
    done = harness("export", str(run), "--format", "inspect", "--out", str(out))
    assert done.returncode == 0, done.stderr[-3000:]
    logs = sorted(out.glob("*.eval"))
    assert sorted(line for line in done.stdout.splitlines() if line.endswith(".eval")) == [str(p) for p in logs]
    return logs


def number(value) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def check_logs(run: Path, logs: list[Path], score_columns: dict[str, str], dr_scores: dict | None = None) -> dict:
    """Every row of ``run`` is one sample of exactly one log, with its scores, usage, error and transcript;
    returns the samples by episode key.  ``score_columns``: results column -> score name."""
    rows = pd.read_parquet(run / "results.parquet")
    samples = {}
    for path in logs:
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.task in set(rows["task"])
        for sample in log.samples:
            assert sample.id not in samples
            samples[sample.id] = (log, sample)
    assert set(samples) == set(rows["episode"])
    frame = samples_df([str(p) for p in logs])
    assert sorted(frame["id"]) == sorted(rows["episode"])
    by_id = frame.set_index("id")
    for row in rows.to_dict("records"):
        log, sample = samples[row["episode"]]
        model = row.get("model")
        if isinstance(model, str):  # a row without one (a failed or statistical forecast) takes its group's
            assert log.eval.model == model
        elif rows.loc[rows["episode"].isin([s.id for s in log.samples]), "model"].isna().all():
            assert log.eval.model == f"none/{row.get('forecaster') or row.get('profile')}"
        expected = {}
        for column, name in score_columns.items():
            value = number(row.get(column))
            if dr_scores is not None and column in DR_FIELDS:
                value = number(dr_scores.get((row.get("profile"), row.get("benchmark_id")), {}).get(DR_FIELDS[column]))
            if value is not None:
                expected[name] = value
        got = {name: score.value for name, score in (sample.scores or {}).items()}
        assert got == pytest.approx(expected), row["episode"]
        for name, value in expected.items():  # the same numbers through Inspect's dataframe
            assert by_id.loc[row["episode"], f"score_{name}"] == pytest.approx(value)
        assert (sample.error is not None) == (row["status"] in ("failed", "infra_failed")), row["episode"]
        if sample.error is not None:
            said = [row.get(c) for c in ("error_kind", "error", "reason") if isinstance(row.get(c), str) and row[c]]
            assert said and all(text in sample.error.message for text in said[:2]), row["episode"]
        tokens = number(row.get("total_tokens")) or 0
        assert sum(u.total_tokens for u in sample.model_usage.values()) == tokens
        if tokens:
            [usage] = sample.model_usage.values()
            assert usage.input_tokens + (usage.input_tokens_cache_read or 0) == number(row["prompt_tokens"])
            assert usage.total_cost == pytest.approx(number(row["cost_usd"]))
        trajectory_file = run / "episodes" / row["episode"] / "trajectory.json"
        if trajectory_file.exists():
            steps = json.loads(trajectory_file.read_text())["steps"]
            calls = [s for s in steps if s["source"] == "agent" and s.get("llm_call_count") != 0]
            tools = [c for s in steps if s["source"] == "agent" for c in s.get("tool_calls") or []]
            assert sum(isinstance(e, ModelEvent) for e in sample.events) == len(calls)
            assert [e.function for e in sample.events if isinstance(e, ToolEvent)] == \
                [c["function_name"] for c in tools]
            assert len(sample.messages) >= len(steps)
        prompt = run / "episodes" / row["episode"] / "prompt.txt"
        if prompt.exists():
            assert sample.input == prompt.read_text()
        assert sample.metadata["episode"] == row["episode"] and sample.metadata["status"] == row["status"]
    return {key: sample for key, (_, sample) in samples.items()}


@pytest.fixture(scope="module")
def drcik(tmp_path_factory):
    root = tmp_path_factory.mktemp("drcik-inspect")
    run = harness("run", "--experiment", str(EXPERIMENT), "--model-backend", "scripted", "--out", str(root / "run"))
    assert (root / "run" / "research" / "results.parquet").exists(), (run.stdout[-2000:], run.stderr[-3000:])
    return root


@pytest.mark.slow
def test_drcik_research_logs_carry_the_dr_metrics_and_transcripts(drcik):
    run = drcik / "run" / "research"
    logs = export(run, drcik / "inspect-research")
    rows = pd.read_parquet(run / "results.parquet")
    assert len(logs) == rows["profile"].nunique() == 5  # one log per DR agent of the one research task
    scores = [json.loads(line) for line in (run / "dr_scores.jsonl").read_text().splitlines()]
    by = {(s["agent"], s["benchmark_id"]): s for s in scores}
    samples = check_logs(run, logs, {c: c for c in DR_FIELDS}, dr_scores=by)
    ok = rows[rows["status"] == "ok"]
    assert len(ok) >= 6
    for row in ok.to_dict("records"):
        sample = samples[row["episode"]]
        key = json.loads((run / "episodes" / row["episode"] / "key" / "research_key.json").read_text())
        target = json.loads(sample.target)
        assert target == {"evidence": key["gt_evidence"], "supporting_documents": key["supporting"]}
        report = (run / "episodes" / row["episode"] / "workspace" / "report.md").read_text()
        assert sample.output.completion.startswith(report)
        assert set(sample.scores) == set(DR_FIELDS)


@pytest.mark.slow
def test_drcik_forecast_logs_score_every_forecast(drcik):
    run = drcik / "run" / "forecast"
    logs = export(run, drcik / "inspect-forecast")
    rows = pd.read_parquet(run / "results.parquet")
    assert len(logs) == rows["forecaster"].nunique()  # one log per forecaster (the page's agent column)
    samples = check_logs(run, logs, {"scrps": "scrps", "smae": "smae", "srmse": "srmse"})
    scored = rows[rows["scrps"].notna()]
    assert len(scored) >= 12
    for row in scored.to_dict("records"):
        sample = samples[row["episode"]]
        assert sample.input == f"forecast {row['benchmark_id']} with context condition {row['context']}"
        future = json.loads(sample.target)
        median = json.loads(sample.output.completion)["median"]
        assert len(future) == len(median) > 0


def test_an_unknown_format_and_a_file_are_refused_in_one_line(tmp_path):
    (tmp_path / "run").mkdir()
    done = harness("export", str(tmp_path / "run"), "--format", "nope", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "unknown format 'nope'" in done.stderr and "inspect" in done.stderr
    spec = tmp_path / "spec.yaml"
    spec.write_text("name: x\ntemplate: tracebench\n")
    done = harness("export", str(spec), "--format", "inspect", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "exports a run directory" in done.stderr
    done = harness("export", str(tmp_path / "run"), "--format", "inspect", "--out", str(tmp_path / "out"))
    assert done.returncode == 2 and "Traceback" not in done.stderr and "error:" in done.stderr


@pytest.fixture(scope="module")
def tracebench(tmp_path_factory):
    """Scripted Claude Code runs in the Docker sandbox: direct, programmatic, and one whose script is another
    CLI's (its first request fails the script's assertions: a failed episode)."""
    root = tmp_path_factory.mktemp("tracebench-inspect")
    runs = {}
    for name, spec_name, script in (("direct", "balldrop-low-direct", "claude-balldrop.yaml"),
                                    ("programmatic", "balldrop-low-programmatic", "claude-balldrop-rule.yaml"),
                                    ("failed", "balldrop-low-direct", "codex-balldrop.yaml")):
        spec = yaml.safe_load((REPO / "tasks" / "tracebench" / f"{spec_name}.yaml").read_text())
        spec["params"].update({"n_test": 5, "heldout_per_class": 2, "pool_per_class": 25})
        spec_file = root / f"{name}.yaml"
        spec_file.write_text(yaml.safe_dump(spec))
        done = harness("run", "--task", str(spec_file), "--agent", "claude-opus-4.6", "--sandbox", "docker",
                       "--model-backend", "scripted", "--script", str(SCRIPTS / script), "--timeout", "240",
                       "--out", str(root / name))
        assert (root / name / "results.parquet").exists(), done.stderr[-3000:]
        runs[name] = root / name
    return runs


@pytest.mark.slow
@pytest.mark.parametrize("name", ["direct", "programmatic", "failed"])
@e2e_marks[1]
@e2e_marks[0]
def test_tracebench_logs_carry_scores_transcript_and_answers(tracebench, tmp_path, name):
    run = tracebench[name]
    [log_file] = export(run, tmp_path / "inspect")
    columns = {"accuracy": "accuracy", "shortlist": "shortlist", "heldout_accuracy": "heldout_accuracy",
               "heldout_shortlist": "heldout_shortlist"}
    samples = check_logs(run, [log_file], columns)
    [row] = pd.read_parquet(run / "results.parquet").to_dict("records")
    sample = samples[row["episode"]]
    folder = run / "episodes" / row["episode"]
    key = json.loads((folder / "key" / "key.json").read_text())
    target = json.loads(sample.target)
    assert {k: v for k, v in target.items() if k.startswith("test/")} == \
        {f"test/{name}": truth["label"] for name, truth in key["test"].items()}
    if name == "failed":
        assert row["status"] == "failed" and sample.error is not None and "assertion failed" in sample.error.message
        return
    assert row["status"] == "ok" and sample.error is None
    details = json.loads((folder / "score.json").read_text())["details"]
    answered = sample.output.completion
    if name == "programmatic":
        assert answered.startswith("rule.py:\n" + (folder / "workspace" / "rule.py").read_text())
        assert {k for k in target if k.startswith("heldout/")} == {f"heldout/{n}" for n in key["heldout"]}
        answered = answered.split("predictions:\n", 1)[1]
    assert json.loads(answered) == {f"{d['split']}/{d['file']}": d["predicted"] if d["reason"] is None
                                    else f"invalid: {d['reason']}" for d in details}
    assert any(isinstance(e, ToolEvent) and e.function == "Bash" for e in sample.events)

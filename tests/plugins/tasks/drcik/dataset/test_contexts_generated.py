"""``original-context`` and ``rewritten-context`` on tasks written by ``harness dr-generate`` (which carry both
texts under ``generation``): the texts given to a forecaster, a run under both conditions, Table 2's columns
and Figure 5's bars; the public sample, which carries neither, refuses them naming task and field."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.report import build_report
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.dataset import contexts
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "out"
    result = CliRunner().invoke(cli, ["dr-generate", str(SPEC), "--out", str(out), "--model-backend", "scripted"])
    assert result.exit_code == 0, result.output + str(result.exception)
    return out


def test_the_texts_are_the_ones_the_generation_wrote(generated):
    raw = json.loads((generated / "tasks" / "caf_pump_flow.json").read_text())["generation"]
    assert "original_context" not in raw  # it names the real entity: kept beside the release, never in a task file
    kept = json.loads((generated / "generation" / "anonymisation" / "caf_pump_flow.json").read_text())
    task = {t.benchmark_id: t for t in load_tasks(generated)}["caf_pump_flow"]
    original = contexts.get("original-context").text_for(task)
    parts = [kept["original_context"][k].strip() for k in ("background", "scenario", "constraints")
             if kept["original_context"].get(k, "").strip()]
    assert original.text == "\n\n".join(parts) and original.status == "ok" and original.items == 1
    assert contexts.get("rewritten-context").text_for(task).text == raw["rewritten_context"].strip()
    assert contexts.text_problem(task, "original-context") is None


def test_the_release_sample_is_refused_naming_task_and_field():
    task = load_tasks()[0]
    problem = contexts.text_problem(task, "rewritten-context")
    assert problem.startswith(f"task {task.benchmark_id}: generation.rewritten_context is not given: the release "
                              "omits the rewritten context")
    with pytest.raises(ValueError, match="generation.rewritten_context is not given"):
        contexts.get("rewritten-context").text_for(task)


def test_a_run_on_the_release_sample_is_refused_before_it_starts(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks" / "drcik" / "sample-statistical.yaml"),
                                      "--set", "forecasters=[naive]", "--set", "contexts=[original-context]",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code != 0 and not (tmp_path / "run" / "results.parquet").exists()
    assert ("params.contexts: 3 task(s) cannot be given original-context; task task_42: generation.original_context "
            "is not given: the release omits the original CAF context") in str(result.exception), result.output


def test_a_run_on_generated_tasks_and_figure5_bars(generated, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks" / "drcik" / "sample-statistical.yaml"),
                                      "--set", f"tasks={generated}", "--set", "forecasters=[naive]",
                                      "--set", "contexts=[no-context,original-context,rewritten-context]",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output + str(result.exception)
    rows = [json.loads(p.read_text()) for p in (tmp_path / "run" / "episodes").glob("*/row.json")]
    assert sorted({r["context"] for r in rows}) == ["no-context", "original-context", "rewritten-context"]
    assert {r["status"] for r in rows} == {"ok"} and len(rows) == 12
    report = build_report([tmp_path / "run"], with_figures=True)
    table2 = report.table("drcik-table2")
    assert table2.header[1:4] == ["No Context", "Original Context", "Rewritten Context"]
    assert not any("original-context needs" in note for note in table2.notes)
    figure = report.figures["drcik-figure5"]
    ticks = [t.get_text().replace("\n", " ") for t in figure.axes[0].get_xticklabels()]
    assert ticks == ["no-context", "original- context", "rewritten- context"]
    assert len(figure.axes[0].patches) == 3                                   # one bar per condition
    figure.savefig(tmp_path / "figure5.png")
    not_shown = report.table("drcik-not-shown") if any(t.key == "drcik-not-shown" for t in report.tables) else None
    assert not_shown is None or all("Figure 5 original" not in row[0] for row in not_shown.rows)

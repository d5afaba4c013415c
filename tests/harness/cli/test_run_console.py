"""What a run prints: titles kept literally by ``harness runs list``, the evidence agent in a staged run's
summary, and scripted runs saying that their dollar figures were not spent."""

from __future__ import annotations

import json

from click.testing import CliRunner
from rich.console import Console

from harness import plugins as registry
from harness.cli import cli
from harness.cli.run import Tally, _billed, summary_table


def test_runs_list_table_prints_bracketed_titles_literally(tmp_path):
    identity = {"task": "balldrop-low-direct", "profile": "x", "overrides": {"noise": "high", "n_test": 20}}
    (tmp_path / "over").mkdir()
    (tmp_path / "over" / "run.json").write_text(json.dumps({"identity": identity, "episodes": []}))
    result = CliRunner().invoke(cli, ["runs", "list", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "balldrop-low-direct [noise=high n_test=20]" in result.output


def test_a_staged_summary_tells_evidence_agents_apart():
    template = registry.get("task_template", "drcik")
    rows = [{"episode": f"naive_dr-evidence_task_42-{i}", "status": "ok", "template": "drcik", "forecaster": "naive",
             "context": "dr-evidence", "evidence_agent": agent, "scrps": 0.5}
            for i, agent in enumerate(("opendr-gemini-3-flash", "drbench-gemini-3-flash"))]
    console = Console(width=200, record=True)
    console.print(summary_table(rows, "forecast", [template]))
    text = console.export_text()
    assert "evidence agent" in text and "opendr-gemini-3-flash" in text and "drbench-gemini-3-flash" in text


def test_scripted_runs_say_no_money_was_spent():
    assert _billed("scripted") is False and _billed(None) is True
    tally = Tally(billed=False)
    tally.see("done", {"row": {"status": "ok", "total_tokens": 945_460, "cost_usd": 0.48}})
    assert tally.line().endswith("945,460 tokens · $0.48 (no money spent)")
    assert Tally().line().endswith("0 tokens · $0.00")


def test_a_scripted_run_ends_with_the_no_money_line(tmp_path):
    from tests.support.paths import REPO

    # llm-dp in the harness, its model_backend (scripted) from the task's params
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks/drcik/sample-dr-forecast.yaml"),
                                      "--set", "forecasters=[llm-dp]", "--set", "contexts=[no-context]",
                                      "--set", "samples=5", "--out", str(tmp_path / "r")], catch_exceptions=False)
    assert result.exit_code == 0, result.output[-2000:]
    assert "offline model backend: no money was spent" in " ".join(result.output.split())


def test_plugin_text_and_row_values_print_literally_not_as_markup(tmp_path, monkeypatch):
    """An install hint's ``.[extra]`` survives: a template's messages and the failed rows' reasons are text,
    not rich markup (which would silently eat ``[timesfm]``)."""
    from tests.support.paths import REPO

    hint = "timesfm is not installed; install: pip install -e '.[timesfm]'"
    rows = [{"episode": "e1", "status": "failed", "template": "drcik", "error_kind": "forecast_error", "error": hint}]
    console = Console(width=300, record=True)
    console.print(summary_table(rows, "forecast", [registry.get("task_template", "drcik")]))
    assert "pip install -e '.[timesfm]'" in console.export_text()

    template = type(registry.get("task_template", "drcik"))
    finish = template.finish

    def finish_with_a_hint(self, *args, **kwargs):
        summary = finish(self, *args, **kwargs)
        return {**summary, "messages": [*summary.get("messages", []), f"failed: {hint}"]}

    monkeypatch.setattr(template, "finish", finish_with_a_hint)
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks/drcik/sample-statistical.yaml"),
                                      "--set", "forecasters=[naive]", "--set", "contexts=[no-context]",
                                      "--out", str(tmp_path / "r")], catch_exceptions=False)
    assert result.exit_code == 0, result.output[-2000:]
    assert "pip install -e '.[timesfm]'" in " ".join(result.output.split())


def test_a_run_whose_every_episode_failed_exits_3_and_says_so(tmp_path, monkeypatch):
    """Documented in ``harness run --help``: 3 when no episode has status ok; one ok episode keeps exit 0."""
    from harness.cli import run as run_module
    from tests.support.paths import REPO

    statuses = ["failed", "infra_failed"]

    def execute(units, store, *args, **kwargs):
        return [{"episode": f"e{i}", "status": s, "template": "drcik", "error": "not installed"}
                for i, s in enumerate(statuses)]

    monkeypatch.setattr(run_module, "execute", execute)
    args = ["run", "--task", str(REPO / "tasks/drcik/sample-statistical.yaml"), "--set", "forecasters=[naive]",
            "--set", "contexts=[no-context]"]
    result = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "r")])
    assert result.exit_code == run_module.EXIT_ALL_FAILED == 3, result.output[-2000:]
    assert "error: every episode failed (2 of 2): exit 3" in result.output
    statuses[0] = "ok"
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "r2")]).exit_code == 0
    help_text = " ".join(CliRunner().invoke(cli, ["run", "--help"]).output.split())
    assert "3 the run finished but every episode failed" in help_text

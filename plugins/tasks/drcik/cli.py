"""The plugin's commands: ``harness dr-score`` judges a research run and prints Table 3 (Dr-CiK Appendix H.1,
Table 3); ``harness dr-validate`` checks a submission folder (:mod:`.forecast.validate`).

::

    harness dr-score RUN_DIR [--judge lexical]
    harness dr-score RUN_DIR --judge llm-judge [--judge-profile judge-gemini-3-flash]
                     [--model-backend scripted --script FILE] [--settings FILE] [--max-cost USD]

Writes ``RUN_DIR/dr_scores.jsonl`` (one row per agent × task, naming the judge; rows of other
judges are kept) and the judge's proxy logs under ``RUN_DIR/judge/``.  ``harness report RUN_DIR``
then shows Table 3, Figures 7 and 16 for every judge that scored the run.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.console import Console

DEFAULT_PROFILE = "judge-gemini-3-flash"  # = research.scoring.DEFAULT_JUDGE_PROFILE (read without importing it)


@click.command("dr-score")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--judge", "judge_name", default="lexical", show_default=True,
              help="Judge plugin (see `harness plugins list`): lexical (offline) or llm-judge.")
@click.option("--judge-profile", default=DEFAULT_PROFILE, show_default=True,
              help="Agent profile of the LLM judge's model.")
@click.option("--model-backend", default=None, help="Model backend (e.g. scripted); default: the profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script for the scripted model backend.")
@click.option("--settings", "settings_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Run settings YAML (rate_limits per provider apply to the judge's requests).")
@click.option("--max-cost", type=float, default=None, help="Stop judging once the judge has spent this much (USD).")
def dr_score(run_dir: Path, judge_name: str, judge_profile: str, model_backend: str | None,
             script: Path | None, settings_file: Path | None, max_cost: float | None) -> None:
    """Judge every research episode of RUN_DIR and write dr_scores.jsonl (Dr-CiK Table 3)."""
    from harness import UnknownPlugin, get_plugin as get
    from harness.reporting import render_report as render
    from tsagent_plugins.tasks.drcik.report import research_tables
    from tsagent_plugins.tasks.drcik.research import scoring

    try:
        judge = get("judge", judge_name)
    except UnknownPlugin as exc:
        raise click.UsageError(str(exc)) from None
    if judge.kind == "generation":
        raise click.UsageError(f"--judge {judge_name}: a dr-generate stage judge, not an evidence judge "
                               "(use llm-judge or lexical)")
    settings = None
    if hasattr(judge, "bind_model"):
        from harness import read_run_settings

        settings = read_run_settings(settings_file)
    rows = scoring.judge_with_model(run_dir, judge, judge_profile, model_backend,
                                    {"script": str(script.resolve())} if script else {}, settings, max_cost)
    if not rows:
        raise click.ClickException(f"{run_dir}: no finished research episode (episodes/*/key/research_key.json)")
    path = scoring.write_scores(run_dir, rows)
    click.echo(render("table", [research_tables.table3(rows)], [], {}, None))
    Console(stderr=True).print(f"wrote {len(rows)} row(s) judged by {rows[0]['judge_label']} to {path}")


@click.command("dr-validate")
@click.argument("folder", type=click.Path(path_type=Path))
@click.option("--tasks", "release", default=None, type=click.Path(path_type=Path),
              help="The release the submission answers: a release folder, flat tables or one task file "
                   "(default: the bundled public sample).")
@click.option("--hidden-only", is_flag=True, help="Only the hidden-label tasks must be answered (leaderboard).")
def dr_validate(folder: Path, release: Path | None, hidden_only: bool) -> None:
    """Check a Dr-CiK submission FOLDER against the release template: files, fields, ids, metadata.

    Prints one "error:" line per problem (file and field named) and exits 2, or says it is valid and
    exits 0; warnings (e.g. empty organization/contact) do not fail it."""
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
    from tsagent_plugins.tasks.drcik.forecast.validate import validate_folder

    tasks = load_tasks(release)  # a bad release is a ConfigError: one line, exit 2 (harness.cli.main)
    report = validate_folder(folder, tasks, hidden_only)
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)
    for error in report.errors:
        click.echo(f"error: {error}", err=True)
    if report.errors:
        click.echo(f"{folder}: INVALID ({len(report.errors)} error(s))", err=True)
        sys.exit(2)
    click.echo(f"{folder}: valid against the release template ({len(tasks)} task(s))")

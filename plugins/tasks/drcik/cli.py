"""``harness forecast``: Dr-CiK forecasters × context conditions -> a run directory (paper Sections 5.1-5.4).

::

    harness forecast --tasks DIR --forecaster NAME [--forecaster NAME ...] --context COND [--context ...]
                     [--samples S] [--seed N] [--time-limit SECONDS] [--out DIR]
                     [--agent PROFILE] [--model-backend scripted --script FILE] [--dr-evidence DIR] [--strict]
    harness forecast --spec tasks/drcik/sample-statistical.yaml [--out DIR] [--samples S] ...

With ``--spec`` the experiment comes from the YAML file
(:mod:`plugins.tasks.drcik.spec`) and options given on the command line
override its fields.  The run directory is described in
:mod:`plugins.tasks.drcik.runner`; ``harness report RUN_DIR`` prints Table 2.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pandas as pd
from rich.console import Console
from rich.table import Table

from plugins.tasks.drcik.spec import SAMPLE, load_spec, spec_from_options

MAX_WARNINGS_SHOWN = 3


@click.command("forecast")
@click.option("--spec", "spec_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Experiment spec YAML (forecasters, contexts, samples, seed, time_limit, tasks).")
@click.option("--tasks", "tasks_dir", default=None,
              help=f"Dr-CiK task folder or file ('{SAMPLE}': the embedded public sample).")
@click.option("--forecaster", "forecasters", multiple=True, help="Forecaster name (repeatable), e.g. naive, ses, "
              "chronos, llm-dp; see `harness plugins list`.")
@click.option("--context", "contexts", multiple=True, help="Context condition (repeatable): no-context, background, "
              "supporting-evidence, supporting-documents, dr-evidence, dr-report, verified-dr.")
@click.option("--samples", type=int, default=None, help="Sample paths per task S (default 25, as in the paper).")
@click.option("--seed", type=int, default=None, help="Seed (default 0).")
@click.option("--time-limit", type=float, default=None, help="Seconds per forecast (default 600).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run directory (default runs/<run_id>).")
@click.option("--agent", default=None, help="Agent profile for model-backed forecasters (llm-dp).")
@click.option("--model-backend", default=None, help="Model backend (e.g. scripted); default: the profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script for the scripted model backend.")
@click.option("--dr-evidence", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="A research run directory (one DR agent) or a folder of <benchmark_id>.json DR evidence "
                   "(dr-evidence, dr-report, verified-dr conditions).")
@click.option("--strict", is_flag=True, help="Exit with status 1 when a submission fails validation.")
def forecast(spec_file, tasks_dir, forecasters, contexts, samples, seed, time_limit, out, agent, model_backend,
             script, dr_evidence, strict) -> None:
    """Forecast Dr-CiK tasks under context conditions, score them, write the release's submission files."""
    from plugins.tasks.drcik.runner import run_forecast_experiment

    overrides = {"tasks": tasks_dir, "samples": samples, "seed": seed, "time_limit": time_limit, "agent": agent,
                 "model_backend": model_backend,
                 "script": str(script.resolve()) if script else None,
                 "dr_evidence": str(dr_evidence.resolve()) if dr_evidence else None}
    if forecasters:
        overrides["forecasters"] = list(forecasters)
    if contexts:
        overrides["contexts"] = list(contexts)
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if spec_file:
        spec = load_spec(spec_file)
        if "tasks" in overrides and overrides["tasks"] != SAMPLE:
            overrides["tasks"] = str(Path(overrides["tasks"]).resolve())
        spec = spec.model_validate({**spec.model_dump(), **overrides, "base_dir": spec.base_dir})
        where = str(spec_file)
    else:
        missing = [flag for flag, key in (("--forecaster", "forecasters"), ("--context", "contexts"))
                   if key not in overrides]
        if missing:
            raise click.UsageError(f"give --spec FILE, or {' and '.join(missing)}")
        spec = spec_from_options({"name": "cli", "tasks": SAMPLE, **overrides})
        where = "command line"

    err = Console(stderr=True)

    def progress(done: int, total: int, text: str) -> None:
        err.print(f"[{done}/{total}] {text}", highlight=False)

    result = run_forecast_experiment(spec, out, file=where, progress=progress)
    out_console = Console()
    out_console.width = max(out_console.width, 110)
    out_console.print(summary_table(result.rows, spec.name))
    for text in failure_reasons(result.rows):
        err.print(f"[yellow]failed:[/] {text}", highlight=False, soft_wrap=True)
    bad = report_validations(result.validations, err)
    click.echo(f"results: {result.root / 'results.parquet'}")
    click.echo(f"report: harness report {result.root}")
    if strict and bad:
        raise SystemExit(1)


def summary_table(rows, title: str) -> Table:
    """Per forecaster × context: scored tasks, sCRPS mean ± SE and the status counts."""
    from plugins.tasks.drcik.metrics import summary_table as cells

    table = Table(title=f"{title}: sCRPS per forecaster × context (mean ± SE over scored tasks)")
    for name in ("forecaster", "context", "n", "sCRPS", "fail", "hidden", "undefined"):
        table.add_column(name, justify="left" if name in ("forecaster", "context") else "right", no_wrap=True)
    for _, cell in cells(rows, ["forecaster", "context"]).iterrows():
        mean, se = cell["scrps_mean"], cell["scrps_se"]
        text = "–" if mean != mean else f"{mean:.3f} ± {se:.3f}" if se == se else f"{mean:.3f}"
        table.add_row(cell["forecaster"], cell["context"], str(cell["n"]), text, str(cell["fail"]),
                      str(cell["hidden"]), str(cell["undefined"]))
    return table


def failure_reasons(rows) -> list[str]:
    """One line per forecaster × context with failed tasks: how many, and the first reason."""
    frame = pd.DataFrame(rows)
    if frame.empty or "status" not in frame:
        return []
    failed = frame[frame["status"] == "failed"]
    return [f"{f} / {c}: {len(g)} task(s), e.g. {g['reason'].iloc[0]}"
            for (f, c), g in failed.groupby(["forecaster", "context"], sort=True)]


def report_validations(validations: dict, console: Console) -> int:
    """Print each submission's validation (errors in full, warnings grouped across submissions);
    returns how many submissions are invalid."""
    bad = 0
    grouped: dict[str, set[str]] = {}
    for key, check in validations.items():
        if check.ok:
            console.print(f"[green]submission {key}: valid[/]", highlight=False)
        else:
            bad += 1
            console.print(f"[bold red]submission {key}: INVALID[/] ({len(check.errors)} error(s))", highlight=False)
            for error in check.errors:
                console.print(f"  error: {error}", highlight=False, markup=False, soft_wrap=True)
        for warning in check.warnings:
            grouped.setdefault(_WHERE.sub("", warning), set()).add(key)
    for text, keys in list(grouped.items())[:MAX_WARNINGS_SHOWN * 2]:
        console.print(f"[yellow]warning[/] ({len(keys)} submission(s)): {text}", highlight=False, soft_wrap=True)
    if len(grouped) > MAX_WARNINGS_SHOWN * 2:
        console.print(f"... {len(grouped) - MAX_WARNINGS_SHOWN * 2} more kind(s) of warning in run.json")
    return bad


_WHERE = re.compile(r"^.*?(metadata\.json|forecasts\.jsonl)(:\d+)?: ")


__all__ = ["forecast", "summary_table", "report_validations"]

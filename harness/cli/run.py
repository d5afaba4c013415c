"""``harness run --task FILE [--agent PROFILE] [--seed N] [--out DIR]``."""

from __future__ import annotations

from pathlib import Path

import click
from rich import box
from harness.cli._console import console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.config import RunSettings, parse, read_yaml
from harness.run import execute, load_task, preflight, resolve_profile
from harness.store import RunStore

#: results column -> summary table header
SUMMARY_COLUMNS = {"episode": "episode", "status": "status", "accuracy": "acc", "shortlist": "short",
                   "heldout_accuracy": "held-out acc", "n_invalid": "invalid", "agent_seconds": "time (s)",
                   "total_tokens": "tokens", "cost_usd": "cost ($)"}


@click.command("run")
@click.option("--task", "task_file", required=True, type=click.Path(path_type=Path, dir_okay=False),
              help="Task spec YAML (see `harness tasks list`).")
@click.option("--agent", "agent_profile", default="euclidean-1nn", show_default=True,
              help="Agent profile name (agent_profiles/NAME.yaml) or path.")
@click.option("--seed", "seeds", type=int, multiple=True, help="Repetition seed(s); repeat for several episodes.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Run directory (default runs/<run_id>); an existing one is resumed.")
@click.option("--sandbox", default=None, help="Sandbox backend: auto (default), bubblewrap, unshare, docker, none.")
@click.option("--timeout", type=float, default=None, help="Episode wall-clock limit in seconds (default 3600).")
@click.option("--settings", "settings_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="RunSettings YAML (limits, budgets, retries).")
@click.option("--model-backend", default=None, help="Model backend for LLM agents (e.g. scripted); default: the profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script for the scripted model backend.")
def run(task_file, agent_profile, seeds, out, sandbox, timeout, settings_file, model_backend, script) -> None:
    """Run an agent on a task spec in a sandbox, score it and write runs/<run_id>/."""
    task = load_task(task_file)
    profile = resolve_profile(agent_profile)
    data = read_yaml(settings_file) if settings_file else {}
    if sandbox:
        data["sandbox"] = sandbox
    if timeout:
        data["episode_timeout"] = timeout
    settings = parse(RunSettings, data, settings_file or "--settings")
    options = {"script": str(script)} if script else {}
    if any(s < 0 for s in seeds):
        raise click.BadParameter("repetition seeds are non-negative integers", param_hint="--seed")
    preflight(task, profile, settings, model_backend, options)
    store = RunStore.create(out)
    err = console(stderr=True)

    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=False) as progress:
        bar = progress.add_task("preparing", total=None)

        def on_event(event: str, data: dict) -> None:
            if event == "start":
                err.print(f"run {store.run_id}: {data['episodes']} episode(s), agent {profile.name}, "
                          f"sandbox [bold]{data['sandbox']}[/]")
                if data.get("limits_not_enforced"):
                    err.print(f"limits not enforced by this backend: {data['limits_not_enforced']}", markup=False)
                progress.update(bar, total=data["episodes"], description="running")
            elif event == "episode":
                progress.update(bar, description=f"episode {data['key']}")
            elif event in ("done", "skip"):
                progress.advance(bar)
            elif event == "resume":
                err.print(f"resuming {store.root}: {data['finished']} finished episode(s) are kept")
            elif event == "retry":
                err.print(f"[yellow]retry {data['attempt']}[/] {data['key']}: {data['error']}")
            elif event == "message":
                progress.update(bar, description=data["text"])

        rows = execute(task, profile, list(seeds) or [None], store, settings, on_event,
                       model_backend=model_backend, model_options=options)

    table = Table(title=f"{task.spec.name} · {profile.name}", box=box.SIMPLE_HEAD)
    shown = [c for c in SUMMARY_COLUMNS if any(r.get(c) not in (None, 0) or c in ("episode", "status", "accuracy")
                                               for r in rows)]
    for col in shown:
        width = max(len(str(r.get(col))) for r in rows) if col == "episode" else None
        table.add_column(SUMMARY_COLUMNS[col], justify="left" if col in ("episode", "status") else "right",
                         overflow="fold", no_wrap=col != "episode", min_width=min(width or 0, 32) or None)
    failed = any(r.get("error_kind") or r.get("error") for r in rows)
    if failed:  # why each failed episode failed: error kind and a one-line reason
        table.add_column("why", justify="left", overflow="fold")
    for row in rows:
        cells = [_fmt(row.get(c)) for c in shown]
        if failed:
            why = ": ".join(str(x) for x in (row.get("error_kind"), row.get("error")) if x)
            cells.append(why or "")
        table.add_row(*cells)
    console().print(table)
    click.echo(f"results: {store.root / 'results.parquet'}")


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)

"""``harness rescore RUN_DIR [--yes] [--sandbox NAME] [--model-backend NAME --script FILE] [--wait]``."""

from __future__ import annotations

from pathlib import Path

import click


def _short(value) -> str:
    text = repr(value) if not isinstance(value, float) else f"{value:.6g}"
    return text if len(text) <= 40 else text[:37] + "..."


@click.command("rescore")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--yes", is_flag=True,
              help="Also recompute what needs a model (an LLM judge's verdicts), spending the cost printed first "
                   "(default: print the estimate and leave it).")
@click.option("--sandbox", default=None,
              help="Sandbox backend for programmatic answers run again (default: each episode's own).")
@click.option("--model-backend", default=None,
              help="Model backend of the LLM judges run again with --yes (e.g. one answering from a --script); "
                   "default: the judge profile's provider.")
@click.option("--script", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Script for a model backend that answers from a script.")
@click.option("--wait", is_flag=True, help="When another process is writing the run directory, wait for it "
                                           "(default: fail at once, naming it).")
def rescore(run_dir: Path, yes: bool, sandbox: str | None, model_backend: str | None, script: Path | None,
            wait: bool) -> None:
    """Recompute the stored scores and metrics of RUN_DIR with today's code, holding its lock.

    Scores each agent episode again from its workspace and key (a rule.py runs again in a rule sandbox),
    runs the metric extractors again on its stored trajectory and proxy log, scores in-harness episodes
    again from their stored outputs where the template can, and rewrites row.json, score.json and
    results.parquet with the new scorer and extractor versions.  Work that calls a model (LLM judges) is
    listed with its estimated cost and done only with --yes.  Prints each changed episode's values, and
    each episode left as it was with the reason.
    """
    from harness.rescore import rescore as run_rescore

    def on_event(event: str, data: dict) -> None:
        if event == "episode":
            changes = data["changed"]
            shown = ", ".join(f"{k} {_short(a)} -> {_short(b)}" for k, (a, b) in list(changes.items())[:6])
            more = f", ... ({len(changes)} columns)" if len(changes) > 6 else ""
            click.echo(f"rescored {data['key']}: " + (shown + more if changes else "unchanged"), err=True)
        elif event == "skip":
            click.echo(f"skipped {data['key']}: {data['reason']}", err=True)
        elif event == "model":
            cost = data["cost_usd"]
            estimate = f"estimated ${cost:.4f}" if isinstance(cost, (int, float)) else "cost unknown"
            click.echo(f"model rescoring: {data['description']}: {estimate}"
                       + ("" if data["run"] else " (not run: pass --yes to spend it)"), err=True)
        elif event == "model_done" and yes:
            click.echo(f"model rescoring: {data['description']}: {data['result']}", err=True)
        elif event == "message":
            click.echo(f"note: {data['text']}", err=True)
        elif event == "lock_wait":
            click.echo(f"waiting for the run folder's lock ({data['holder']})", err=True)

    options = {"script": str(script.resolve())} if script else {}
    outcome = run_rescore(run_dir, yes=yes, sandbox=sandbox, model_backend=model_backend, model_options=options,
                          on_event=on_event, wait=wait)
    click.echo(f"{run_dir}: {len(outcome.rescored)} episode(s) rescored, {len(outcome.changed)} changed, "
               f"{len(outcome.skipped)} left as they were")
    if outcome.invalid_exports:
        raise click.ClickException(f"{len(outcome.invalid_exports)} invalid export(s): "
                                   + ", ".join(outcome.invalid_exports[:5]))

"""``harness plan --task FILE | --experiment FILE [--out DIR] [--history DIR]``: episodes and expected cost."""

from __future__ import annotations

from pathlib import Path

import click
from rich import box
from rich.table import Table
from rich.text import Text

from harness.cli._console import console
from harness.cli.run import run_stages
from harness.plan import plan_costs


@click.command("plan")
@click.option("--task", "task_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Task spec YAML.")
@click.option("--experiment", "experiment_file", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="Experiment spec YAML.")
@click.option("--agent", "agent_profile", default=None, help="Agent profile (with --task).")
@click.option("--seed", "seeds", type=int, multiple=True, help="Repetition seed(s) (with --task).")
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE", help="Parameter override (with --task).")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="The target run directory (as for `harness run`): its finished episodes are counted as done.")
@click.option("--history", type=click.Path(path_type=Path, file_okay=False, exists=True), multiple=True,
              help="Directory of earlier runs whose episodes give the per-condition token estimate; repeatable.")
@click.option("--episodes/--no-episodes", "show_episodes", default=True, help="List every episode (default).")
def plan(task_file, experiment_file, agent_profile, seeds, sets, out, history, show_episodes) -> None:
    """The episodes a run expands to, which are done already, and the expected tokens and dollars per profile
    (from earlier runs in --history and the target directory, else the template's reported usage)."""
    if (task_file is None) == (experiment_file is None):
        raise click.UsageError("give exactly one of --task FILE and --experiment FILE")
    stages, title = run_stages(task_file, experiment_file, agent_profile, seeds, sets, out)
    con = console()
    total_eps = total_done = total_unknown = 0
    total_cost = 0.0
    for where, units, identity in stages:
        root = Path(where) if where is not None else Path("runs") / "<new>"
        episodes, profiles = plan_costs(units, root, list(history))
        stage = identity.get("stage")
        name = f"{title} · stage {stage}" if stage and stage != "main" else title
        if show_episodes:
            table = Table(title=Text(f"{name}: {len(episodes)} episodes", style="table.title"),
                          box=box.SIMPLE_HEAD)
            for col in ("episode", "profile", "seed", "done", "tokens", "est. $", "estimate from"):
                table.add_column(col, justify="right" if col in ("seed", "tokens", "est. $") else "left")
            for e in episodes:
                table.add_row(e.key, e.profile or "–", "–" if e.seed is None else str(e.seed),
                              "yes" if e.done else "", "?" if e.tokens is None else f"{e.tokens:,}",
                              "?" if e.cost_usd is None else f"{e.cost_usd:.2f}", e.source)
            con.print(table)
        summary = Table(title=Text(f"{name}: plan for {root}", style="table.title"), box=box.SIMPLE_HEAD)
        for col in ("profile", "episodes", "done", "to run", "est. tokens (M)", "est. $", "est. $/episode",
                    "reported $/episode"):
            summary.add_column(col, justify="left" if col == "profile" else "right")
        for p in profiles.values():
            per = (f"{min(p.per_episode_usd):.2f}–{max(p.per_episode_usd):.2f}" if p.per_episode_usd else "?")
            reported = f"{p.reported_usd[0]:.1f}–{p.reported_usd[1]:.1f}" if p.reported_usd else "–"
            cost = f"{p.cost_usd:,.2f}" + (f" (+{p.unknown} unknown)" if p.unknown else "")
            summary.add_row(p.profile or "–", str(p.episodes), str(p.done), str(p.episodes - p.done),
                            f"{p.tokens / 1e6:,.1f}", cost, per, reported)
            total_eps += p.episodes
            total_done += p.done
            total_cost += p.cost_usd
            total_unknown += p.unknown
        con.print(summary)
        for p in profiles.values():
            if p.sources != {"no model"}:  # a profile that calls no model costs nothing: nothing to explain
                con.print(f"  {p.profile or '–'}: estimate from {'; '.join(sorted(p.sources))}", highlight=False)
    con.print(f"total: {total_eps} episode(s), {total_done} done, {total_eps - total_done} to run, "
              f"expected ${total_cost:,.2f}" + (f" + {total_unknown} episode(s) of unknown cost" if total_unknown
                                                   else ""), highlight=False)

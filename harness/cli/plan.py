"""``harness plan --task FILE | --experiment FILE [--out DIR] [--history DIR] [--power [--detect D] [--pilot RUN]]``:
episodes, expected cost and the smallest detectable paired difference."""

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
@click.option("--episodes/--no-episodes", "show_episodes", default=False,
              help="Also list every episode (key, profile, seed, done, estimate), after the summary; default: "
                   "the summary only.")
@click.option("--power", "with_power", is_flag=True,
              help="Also print the smallest paired difference the planned seeds detect (docs/results/statistics.md).")
@click.option("--detect", type=click.FloatRange(0, 1, min_open=True), default=None, metavar="D",
              help="Also print the seeds needed to detect a difference D (0.10 = 10 points); implies --power.")
@click.option("--pilot", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="Run directory whose episodes give the variance (default: a binomial model).")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the two-sided test (--power).")
@click.option("--power-level", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.8,
              show_default=True, help="Probability of detecting the difference (--power).")
def plan(task_file, experiment_file, agent_profile, seeds, sets, out, history, show_episodes, with_power, detect,
         pilot, alpha, power_level) -> None:
    """The episodes a run expands to, which are done already, and the expected tokens and dollars per profile
    (from earlier runs in --history and the target directory, else the template's reported usage): a summary
    per profile, and with --episodes every episode after it; with --power, the smallest paired accuracy
    difference the planned seeds detect."""
    if (task_file is None) == (experiment_file is None):
        raise click.UsageError("give exactly one of --task FILE and --experiment FILE")
    with_power = with_power or detect is not None or pilot is not None
    pilot_rows = _pilot_rows(pilot) if pilot is not None else None
    stages, title = run_stages(task_file, experiment_file, agent_profile, seeds, sets, out)
    con = console()
    total_eps = total_done = total_unknown = 0
    total_cost = 0.0
    for where, units, identity in stages:
        root = Path(where) if where is not None else Path("runs") / "<new>"
        episodes, profiles = plan_costs(units, root, list(history))
        stage = identity.get("stage")
        name = f"{title} · stage {stage}" if stage and stage != "main" else title
        summary = Table(title=Text(f"{name}: {len(episodes)} episodes, plan for {root}", style="table.title"),
                        box=box.SIMPLE_HEAD)
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
        if with_power:
            print_power(con, name, episodes, alpha, power_level, detect, pilot_rows)
    if not show_episodes and total_eps:
        con.print("(--episodes lists every episode)", highlight=False)
    con.print(f"total: {total_eps} episode(s), {total_done} done, {total_eps - total_done} to run, "
              f"expected ${total_cost:,.2f}" + (f" + {total_unknown} episode(s) of unknown cost" if total_unknown
                                                   else ""), highlight=False)


def _pilot_rows(pilot: Path):
    from harness.report.load import load_results

    return load_results([pilot]).frame


def print_power(con, name: str, episodes, alpha: float, power: float, detect: float | None, pilot) -> None:
    """The power table of one stage: per stratum, the detectable difference beside the stage's cost (and the
    seeds needed for ``detect`` with their cost)."""
    from harness.power import min_clusters, plan_power

    rows, notes = plan_power(episodes, alpha, power, detect, pilot)
    if not rows:
        con.print(f"{name}: no template declares how its episodes pair: no power analysis", highlight=False)
        return
    known = [e.cost_usd for e in episodes if e.cost_usd is not None]
    cost = sum(known)
    unknown = len(episodes) - len(known)
    title = (f"{name}: power of a paired comparison of two agents (two-sided sign-flip test, α = {alpha:g}, "
             f"power {power:g})")
    table = Table(title=Text(title, style="table.title"), box=box.SIMPLE_HEAD)
    columns = ["template", "stratum", "clusters", "episodes/cluster", "seeds", "SD of cluster diff.",
               "detectable difference", "est. $"]
    if detect is not None:
        columns += [f"seeds for {100 * detect:g} points", "est. $ then"]
    for col in columns:
        table.add_column(col, justify="left" if col in ("template", "stratum") else "right")
    money = f"{cost:,.2f}" + (f" (+{unknown} unknown)" if unknown else "")
    for r in rows:
        lay = r.layout
        shown = ("–" if r.sd is None else f"never (< {min_clusters(alpha)} clusters)" if r.detectable is None
                 else f"{100 * r.detectable:.1f} points")
        cells = [r.template, lay.stratum, str(lay.clusters), str(lay.pooled), str(lay.replicates),
                 "–" if r.sd is None else f"{r.sd:.3f}", shown, money]
        if detect is not None:
            scaled = cost * r.seeds / lay.replicates if r.seeds is not None and lay.replicates else None
            cells += ["–" if r.seeds is None else str(r.seeds), "–" if scaled is None else f"{scaled:,.2f}"]
        table.add_row(*cells)
    con.print(table)
    for note in notes:
        con.print(f"  {note}", highlight=False)
    con.print("  detectable difference: the smallest true difference in mean accuracy (a − b) that `harness report "
              f"--compare` finds at α = {alpha:g} in {100 * power:g}% of such runs; est. $: the whole plan's cost "
              "(docs/results/statistics.md)", highlight=False)

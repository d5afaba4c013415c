"""``harness runs list [DIR]``: run directories with task, agents, episodes done / total and cost; ``harness runs
compact RUN``: an older run folder converted in place to today's storage (:mod:`harness.compact`)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich import box
from rich.table import Table
from rich.text import Text

from harness.billing import NOT_SPENT, cost_text, offline_backend
from harness.cli._console import console
from harness.experiment import task_title
from harness.store import episode_rows, run_dirs


def run_summary(root: Path) -> dict | None:
    """Task, agents (agent profiles, or the models under test of an in-harness run), done/total and cost of the
    run directory ``root`` (None: not a run directory).

    Done: episodes whose ``row.json`` is not ``infra_failed``, of which ``failed``: those whose status is
    ``failed`` (the agent crashed or gave no usable output); total: the episodes ``run.json`` lists;
    cost: the sum of the rows' ``cost_usd`` (each episode folder once); ``offline_backends``: the offline model
    backends that answered some rows' model calls (:mod:`harness.billing`: their cost is the profiles' prices, no
    money spent), ``offline_cost_usd`` the part of the cost they make."""
    path = root / "run.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
    except ValueError:
        return None
    identity = data.get("identity") or {}
    task = identity.get("task") and task_title(identity["task"], identity.get("overrides"))
    what = identity.get("experiment") or task or ", ".join(
        sorted({e.get("task") for e in data.get("episodes", []) if isinstance(e, dict) and e.get("task")}))
    if identity.get("stage") not in (None, "main"):
        what += f" / {identity['stage']}"
    done = failed = crashed = 0
    cost = offline_cost = 0.0
    offline: set[str] = set()
    backend = data.get("model_backend") if isinstance(data.get("model_backend"), str) else None
    for row in episode_rows(root, skip_invalid=True):
        if row.get("status") == "infra_failed":
            failed += 1
            continue
        done += 1
        crashed += row.get("status") == "failed"
        value = row.get("cost_usd")
        value = float(value) if isinstance(value, (int, float)) and value == value else 0.0
        cost += value
        if (name := offline_backend(row, backend)) is not None:
            offline.add(name)
            offline_cost += value
    agents = sorted(data.get("profiles") or {}) or sorted(
        {e.get("profile") for e in data.get("episodes", []) if isinstance(e, dict) and e.get("profile")}) or \
        _models_under_test(data.get("episodes", []))
    return {"dir": str(root), "task": what, "agents": agents, "done": done, "failed": crashed, "infra_failed": failed,
            "total": len(data.get("episodes", [])), "cost_usd": cost, "offline_backends": sorted(offline),
            "offline_cost_usd": offline_cost,
            "finished": data.get("finished_at") is not None and done == len(data.get("episodes", []))}


def _models_under_test(episodes: list) -> list[str]:
    """The names in each episode's experiment axis, the param its template declares
    (:attr:`harness.contracts.TaskTemplate.experiment_axis`): the models under test of an in-harness run, which
    has no agent profile (see ``harness.config.ExperimentSpec``).  The template is the one ``run.json`` records
    for the episode (``template``; runs made before it was recorded: the one its ``task_file`` names); an
    episode whose template is unknown here (its plugin is not installed) lists no name."""
    names: set[str] = set()
    axes: dict[str, str | None] = {}
    for episode in episodes:
        params = episode.get("params") if isinstance(episode, dict) else None
        axis = _axis(episode, axes) if isinstance(params, dict) else None
        entries = params.get(axis) if axis else None
        for entry in entries if isinstance(entries, list) else []:
            name = entry.get("name") if isinstance(entry, dict) else entry
            if isinstance(name, str) and name:
                names.add(name)
    return sorted(names)


def _axis(episode: dict, axes: dict[str, str | None]) -> str | None:
    """The experiment axis of ``episode``'s template (None: no axis, or the template is unknown); ``axes``
    caches the answer per template name and per task file."""
    template = episode.get("template")
    source = template if isinstance(template, str) else episode.get("task_file")
    if not isinstance(source, str) or not source:
        return None
    if source not in axes:
        from harness import plugins
        from harness.config import ConfigError, load_task_spec

        try:
            name = template if isinstance(template, str) else load_task_spec(source).template
            axes[source] = plugins.get("task_template", name).experiment_axis
        except (ConfigError, OSError, plugins.UnknownPlugin):
            axes[source] = None
    return axes[source]


@click.group("runs")
def runs_group() -> None:
    """Run directories: list them, convert an older one in place to today's storage (compact)."""


@runs_group.command("list")
@click.argument("base", type=click.Path(path_type=Path, file_okay=False), default=Path("runs"))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line instead of a table.")
def list_runs(base: Path, as_json: bool) -> None:
    """Run directories under BASE (default ./runs; stages of an experiment are listed each)."""
    found = [s for p in run_dirs(base) if (s := run_summary(p))]
    if as_json:
        for s in found:
            click.echo(json.dumps(s))
        return
    table = Table(box=box.SIMPLE_HEAD)
    numeric = ("done / total", "failed", "infra failed", "cost ($)")
    for col in ("run directory", "task / experiment", "agents", *numeric):
        table.add_column(col, justify="right" if col in numeric else "left")
    for s in found:
        # titles such as "a-task [noise=high n_test=20]" are text, not console markup
        table.add_row(Text(str(s["dir"])), Text(str(s["task"])), Text(", ".join(s["agents"]) or "–"),
                      f"{s['done']} / {s['total']}", str(s["failed"] or ""),
                      str(s["infra_failed"] or ""), Text(run_cost(s)))
    console().print(table if found else f"no run directories under {base}")
    if any(s["offline_backends"] for s in found):
        console().print(f"(NAME) after a cost: {NOT_SPENT}", markup=False, highlight=False)


def run_cost(summary: dict) -> str:
    """A run's cost as ``harness runs list`` shows it: ``0.42``, with its offline backends marked
    (``0.42 (NAME)``, or ``1.20 (0.42 NAME)`` when only part of it is no money spent)."""
    names, part = summary["offline_backends"], summary["offline_cost_usd"]
    if not names:
        return f"{summary['cost_usd']:.2f}"
    if part < summary["cost_usd"] - 0.005:
        return f"{summary['cost_usd']:.2f} ({part:.2f} {', '.join(names)})"
    return cost_text(summary["cost_usd"], names, dollar=False)


def size_text(n: int | None) -> str:
    """Bytes as ``harness runs compact`` shows them: ``812 B``, ``39.3 kB``, ``4.81 MB`` (decimal units); ``–``
    for None."""
    if n is None:
        return "–"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n} B"


@runs_group.command("compact")
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--dry-run", is_flag=True, help="Print what would be converted (each file, its size now and the "
                                              "size it would take) and change nothing.")
@click.option("--wait", is_flag=True, help="When another process is writing the run folder, wait for it "
                                           "(default: fail at once, naming it).")
def compact(run_dir: Path, dry_run: bool, wait: bool) -> None:
    """Convert RUN_DIR, written by an older harness, in place to today's storage, holding its lock.

    Plain proxy logs (proxy.jsonl) become compressed (proxy.jsonl.zst), the agents' own logs under each
    episode's home/ are stored compressed as today's runs store them, and generated inputs the agent left
    unchanged are kept by reference.  Each file is converted on its own and atomically, so an interrupted
    compaction leaves a run every command reads as before; running it again finishes it, and a compact run
    has nothing to do.  Prints the sizes before and after, per kind and for the whole folder.  RUN_DIR may
    hold several run folders (an experiment's stages): each is compacted under its own lock.
    """
    from harness.compact import compact as run_compact, run_folders

    out = console()
    for root in run_folders(run_dir):
        def on_event(event: str, data: dict) -> None:
            if event == "step" and dry_run:
                verb = "would release the inputs of" if data["kind"] == "inputs" else "would compress"
                now = size_text(data["before"]) + (f" -> ~{size_text(data['after'])}" if data["after"] is not None else "")
                out.print(Text(f"{verb} {data['path']} ({now})"), soft_wrap=True)
            elif event == "lock_wait":
                click.echo(f"waiting for the run folder's lock ({data['holder']})", err=True)

        outcome = run_compact(root, dry_run=dry_run, wait=wait, on_event=on_event)
        for note in outcome.notes:
            out.print(Text(f"note: {note}"), soft_wrap=True)
        if outcome.nothing_to_do:
            out.print(Text(f"{root}: nothing to do, it is compact already ({size_text(outcome.total_before)})"),
                      soft_wrap=True)
            continue
        out.print(Text(f"{root}" + (" (dry run: nothing changed)" if dry_run else " compacted")), soft_wrap=True)
        out.print(_compact_table(outcome))


def _compact_table(outcome) -> Table:
    """Files and bytes before and after, per kind, and the whole run folder's."""
    table = Table(box=box.SIMPLE_HEAD)
    for col in ("kind", "files", "before", "after", "saved"):
        table.add_column(col, justify="left" if col == "kind" else "right")

    def saved(before: int, after: int | None) -> str:
        return "–" if after is None or before <= 0 else f"{'~' * outcome.dry_run}{100 * (before - after) / before:.0f}%"

    for kind, (files, before, after) in outcome.by_kind().items():
        shown = f"~{size_text(after)}" if outcome.dry_run and after is not None else size_text(after)
        table.add_row(kind, str(files), size_text(before), shown, saved(before, after))
    table.add_row("run folder (total)", "", size_text(outcome.total_before), size_text(outcome.total_after),
                  saved(outcome.total_before, outcome.total_after), style="bold")
    return table

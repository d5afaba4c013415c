"""``harness tasks list``: the shipped task specs and experiment specs, with their template."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from harness.cli._console import console
from harness.config import REPO_ROOT, ConfigError, load_experiment, load_task_spec, read_yaml, task_files


def spec_files(root: Path) -> list[Path]:
    """Task and experiment spec files under ``root`` (told apart by :func:`is_experiment`)."""
    return sorted(p for p in root.rglob("*.y*ml") if p.is_file())


def is_experiment(path: Path) -> bool:
    """An experiment spec has no ``template`` and lists ``tasks`` or ``stages``."""
    try:
        data = read_yaml(path)
    except ConfigError:
        return False
    return "template" not in data and ("stages" in data or "tasks" in data)


def command_spec(path: Path) -> str | None:
    """The command a spec is for when it says so (``command: NAME``, a plugin command's own spec), else None."""
    try:
        data = read_yaml(path)
    except ConfigError:
        return None
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) and "template" not in data else None


def _points(grid: dict) -> int:
    n = 1
    for values in grid.values():
        n *= len(values)
    return n


def _runners(stage) -> tuple[int, str]:
    """How many agent profiles or entries of a template-declared axis a stage lists, and which (``(1, "")``
    for neither: the specs' own); an axis ``models`` is counted as ``model(s)``."""
    if stage.agents:
        return len(dict.fromkeys(stage.agents)), "agent(s)"
    if stage.axis:
        name, entries = stage.axis
        return len(entries), (name[:-1] if name.endswith("s") else name) + "(s)"
    return 1, ""


def stage_runs(stage, stages: dict, path: Path) -> tuple[str, int]:
    """``(product, runs)``: the task runs a stage expands to (a task spec after overrides × agent profile or
    axis entry × grid point × seed × evidence source: the units of :func:`harness.experiment.expand_stage`)
    and the product that gives their number.

    A task run is one or more episodes, as its template expands it; counting them needs the template's
    plugin, which ``tasks list`` does not load (start-up), so it counts task runs and ``harness plan``
    counts episodes."""
    specs = len(task_files(stage.tasks, path.resolve().parent, path))
    (runners, kind), points, seeds = _runners(stage), _points(stage.grid), len(stage.seeds) or 1
    sources = _runners(stages[stage.evidence_from])[0] if stage.evidence_from else 1
    text = (f"{specs} spec(s)" + (f" × {runners} {kind}" if kind else "")
            + f" × {points} grid point(s) × {seeds} seed(s)"
            + (f" × {sources} evidence source(s) (from {stage.evidence_from})" if stage.evidence_from else ""))
    return text, specs * runners * points * seeds * sources


def _stage_text(stage, stages: dict, path: Path) -> str:
    """``name: S spec(s) × A agent(s) × G grid point(s) × N seed(s) = R task run(s)``."""
    text, runs = stage_runs(stage, stages, path)
    return f"{stage.name}: {text} = {runs} task run(s)"


#: what the experiment rows count, said once under the table
RUNS_CAPTION = ("Experiments count task runs: spec × agent or forecaster × grid point × seed (× evidence source); "
                "a task template expands each run into one or more episodes — `harness plan --experiment FILE` "
                "counts the episodes.")


@click.group("tasks")
def tasks_group() -> None:
    """Inspect task specs."""


@tasks_group.command("list")
@click.option("--dir", "root", type=click.Path(path_type=Path), default=None,
              help="Folder of task specs (default: ./tasks, else the shipped tasks/).")
@click.option("--long", "long_", is_flag=True, help="Show each spec's description.")
def list_tasks(root: Path | None, long_: bool) -> None:
    """List task specs (run with `harness run --task FILE`) and experiment specs (`harness run --experiment
    FILE`): file, template, parameters."""
    root = root or (Path("tasks") if Path("tasks").is_dir() else REPO_ROOT / "tasks")
    table = Table(title=f"Task specs in {root}", caption=RUNS_CAPTION, caption_justify="left")
    for col in ("file", "template", "run with", "params") + (("description",) if long_ else ()):
        table.add_column(col, overflow="fold")
    for path in spec_files(root):
        name = str(path.relative_to(root))
        try:
            command = command_spec(path)
            if command is not None:  # a spec a plugin command reads (e.g. a generation spec)
                data = read_yaml(path)
                text = " ".join(f"{k}={v}" for k, v in data.items() if k not in ("command", "name", "description")
                                and not isinstance(v, dict))
                table.add_row(name, "(command)", f"harness {command} FILE", text,
                              *((str(data.get("description", "")),) if long_ else ()))
                continue
            if is_experiment(path):
                spec = load_experiment(path)
                stages = {s.name: s for s in spec.stage_list()}
                text = "; ".join(_stage_text(s, stages, path) for s in stages.values())
                table.add_row(name, "(experiment)", "--experiment", text, *((spec.description,) if long_ else ()))
                continue
            spec = load_task_spec(path)
        except ConfigError as exc:
            table.add_row(name, "[red]invalid[/]", "", "; ".join(exc.problems), *(("",) if long_ else ()))
            continue
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        table.add_row(name, spec.template, "--task", params, *((spec.description,) if long_ else ()))
    console().print(table)

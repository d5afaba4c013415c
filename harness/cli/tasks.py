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


def _points(grid: dict) -> int:
    n = 1
    for values in grid.values():
        n *= len(values)
    return n


def _stage_text(stage, path: Path) -> str:
    """``name: S spec(s) × A agent(s)/forecaster(s) × G grid point(s) × N seed(s) = E episode(s)``."""
    specs = len(task_files(stage.tasks, path.resolve().parent, path))
    runners = len(stage.agents) or len(stage.forecasters) or 1
    points, seeds = _points(stage.grid), len(stage.seeds) or 1
    return (f"{stage.name}: {specs} spec(s) × {runners} agent(s)/forecaster(s) × {points} grid point(s) × "
            f"{seeds} seed(s) = {specs * runners * points * seeds} episode(s)"
            + (f" per evidence source (evidence from {stage.evidence_from})" if stage.evidence_from else ""))


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
    table = Table(title=f"Task specs in {root}")
    for col in ("file", "template", "run with", "params") + (("description",) if long_ else ()):
        table.add_column(col, overflow="fold")
    for path in spec_files(root):
        name = str(path.relative_to(root))
        try:
            if is_experiment(path):
                spec = load_experiment(path)
                stages = spec.stage_list()
                text = "; ".join(_stage_text(s, path) for s in stages)
                table.add_row(name, "(experiment)", "--experiment", text, *((spec.description,) if long_ else ()))
                continue
            spec = load_task_spec(path)
        except ConfigError as exc:
            table.add_row(name, "[red]invalid[/]", "", "; ".join(exc.problems), *(("",) if long_ else ()))
            continue
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        table.add_row(name, spec.template, "--task", params, *((spec.description,) if long_ else ()))
    console().print(table)

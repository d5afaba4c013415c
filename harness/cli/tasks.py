"""``harness tasks list``: the shipped task specs and experiment specs, with their template."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from harness.cli._console import console
from harness.config import REPO_ROOT, ConfigError, load_experiment, load_task_spec, read_yaml


def task_files(root: Path) -> list[Path]:
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
    for path in task_files(root):
        name = str(path.relative_to(root))
        try:
            if is_experiment(path):
                spec = load_experiment(path)
                stages = spec.stage_list()
                text = "; ".join(f"{s.name}: {len(s.tasks)} spec(s) × {len(s.agents) or len(s.forecasters) or 1} "
                                 f"agent(s)/forecaster(s) × {_points(s.grid)} grid point(s) × {len(s.seeds) or 1} seed(s)"
                                 + (f" (evidence from {s.evidence_from})" if s.evidence_from else "") for s in stages)
                table.add_row(name, "(experiment)", "--experiment", text, *((spec.description,) if long_ else ()))
                continue
            spec = load_task_spec(path)
        except ConfigError as exc:
            table.add_row(name, "[red]invalid[/]", "", "; ".join(exc.problems), *(("",) if long_ else ()))
            continue
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        table.add_row(name, spec.template, "--task", params, *((spec.description,) if long_ else ()))
    console().print(table)

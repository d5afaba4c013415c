"""``harness tasks list``: the shipped task specs."""

from __future__ import annotations

from pathlib import Path

import click
from harness.cli._console import console
from rich.table import Table

from harness.config import ConfigError, load_task_spec
from harness.run import REPO_ROOT


def task_files(root: Path) -> list[Path]:
    """Task spec files under ``root``; experiment specs (under ``experiments/``) are not task specs."""
    return sorted(p for p in root.rglob("*.y*ml") if p.is_file() and "experiments" not in p.relative_to(root).parts)


@click.group("tasks")
def tasks_group() -> None:
    """Inspect task specs."""


@tasks_group.command("list")
@click.option("--dir", "root", type=click.Path(path_type=Path), default=None,
              help="Folder of task specs (default: ./tasks, else the shipped tasks/).")
@click.option("--long", "long_", is_flag=True, help="Show each spec's description.")
def list_tasks(root: Path | None, long_: bool) -> None:
    """List task specs: file, name, template and parameters."""
    root = root or (Path("tasks") if Path("tasks").is_dir() else REPO_ROOT / "tasks")
    table = Table(title=f"Task specs in {root}")
    for col in ("file", "template", "params") + (("description",) if long_ else ()):
        table.add_column(col, overflow="fold")
    for path in task_files(root):
        try:
            spec = load_task_spec(path)
        except ConfigError as exc:
            table.add_row(str(path.relative_to(root)), "[red]invalid[/]", "; ".join(exc.problems))
            continue
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        table.add_row(str(path.relative_to(root)), spec.template, params, *((spec.description,) if long_ else ()))
    console().print(table)

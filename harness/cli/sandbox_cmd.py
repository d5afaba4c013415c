"""``harness sandbox``: housekeeping for sandbox backends."""

from __future__ import annotations

import click
from harness.cli._console import console as make_console

console = make_console()


@click.group("sandbox")
def sandbox() -> None:
    """Sandbox housekeeping."""


@sandbox.command("cleanup")
@click.option("--run", "run_id", metavar="ID", default=None,
              help="Only remove what run ID created (default: every harness-managed container and volume).")
def cleanup(run_id: str | None) -> None:
    """Remove Docker containers and volumes labelled harness.managed=1 (left behind by killed runs)."""
    from harness.sandbox.docker import cleanup as docker_cleanup

    containers, volumes = docker_cleanup(run_id)
    scope = f"run {run_id}" if run_id else "all runs"
    console.print(f"removed {len(containers)} container(s) and {len(volumes)} volume(s) ({scope})", highlight=False)
    for name in containers:
        console.print(f"  container {name}", highlight=False)
    for name in volumes:
        console.print(f"  volume {name}", highlight=False)

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
              help="Remove every Docker container and volume run ID created (whatever their owner).")
@click.option("--all", "include_live", is_flag=True,
              help="Remove every leftover, also those of runs still going and those without an owner record.")
def cleanup(run_id: str | None, include_live: bool) -> None:
    """Remove what killed runs left behind, for every backend.

    Local sandboxes: temp folders (launch configurations, submitted rules) and
    control groups with any process left in them.  Docker: containers and
    volumes labelled harness.managed=1.  By default only leftovers whose
    recorded owner (pid and process start time) is no longer a live process.
    """
    from harness.sandbox.cleanup import cleanup as run_cleanup

    removed = run_cleanup(run_id, include_live=include_live)
    scope = "every owner" if include_live else "owners no longer running"
    console.print(f"removed {len(removed.folders)} temp folder(s), {len(removed.groups)} control group(s), "
                  f"{len(removed.containers)} container(s) and {len(removed.volumes)} volume(s) ({scope})",
                  highlight=False)
    for kind, names in (("folder", removed.folders), ("cgroup", removed.groups),
                        ("container", removed.containers), ("volume", removed.volumes)):
        for name in names:
            console.print(f"  {kind} {name}", highlight=False)
    if removed.docker_error:
        console.print(f"docker: not checked ({removed.docker_error})", highlight=False)

"""``harness view``: browse runs, episodes and trajectories in a local web viewer, or export them."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli._console import console

out = console()


@click.command("view")
@click.argument("run_dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; anything but a loopback address exposes the runs to the network.")
@click.option("--port", default=8765, show_default=True, type=int, help="Port (0: any free port).")
@click.option("--bundle", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the pages as a static site to this folder instead of serving.")
@click.option("--with-answers", is_flag=True,
              help="With --bundle: include true labels, held-out results and document roles "
                   "(never for tasks whose labels are not public).")
def view(run_dirs: tuple[Path, ...], host: str, port: int, bundle: Path | None, with_answers: bool) -> None:
    """Serve RUN_DIR... as web pages (leaderboards, comparisons, episodes, trajectories, model calls) on
    127.0.0.1; pages follow runs still in progress."""
    from harness.view.data import load_runs

    runs = load_runs(list(run_dirs))
    if bundle is not None:
        from harness.view.bundle import export_bundle

        folder, count = export_bundle(runs, bundle, with_answers=with_answers)
        out.print(f"wrote {count} files to {folder} (open {folder / 'index.html'}); "
                  f"answers {'included where labels are public' if with_answers else 'left out'}")
        return
    if with_answers:
        raise click.UsageError("--with-answers applies to --bundle (the local viewer always shows answers)")
    from harness.view.server import is_loopback, serve
    from harness.view.site import Site

    if not is_loopback(host):
        out.print(f"[bold yellow]warning:[/] serving on {host}: anyone who can reach it sees these runs and answers")
    serve(Site(runs, live=True), host, port, ready=lambda url: out.print(f"harness view: {url}  (Ctrl-C to stop)"))

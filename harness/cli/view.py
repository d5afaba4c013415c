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
    127.0.0.1; pages follow runs still in progress.  A folder that is no run but has a plugin's folder page
    (e.g. a generated benchmark) is shown on that page; a writable one only on a loopback address."""
    from harness.view.data import load_runs
    from harness.view.folders import split_folders
    from harness.view.pages import registered_folder_pages

    roots, folders = split_folders(list(run_dirs), registered_folder_pages())
    runs = load_runs(roots)
    if bundle is not None:
        from harness.view.bundle import export_bundle

        folder, count = export_bundle(runs, bundle, with_answers=with_answers, folders=folders)
        out.print(f"wrote {count} files to {folder} (open {folder / 'index.html'}); "
                  f"answers {'included where labels are public' if with_answers else 'left out'}")
        for f in folders:
            if f.page.writable:
                out.print(f"left out: {f.root} (a writable page, {f.page.title}, is never bundled)")
        return
    if with_answers:
        raise click.UsageError("--with-answers applies to --bundle (the local viewer always shows answers)")
    from harness.view.server import is_loopback, serve
    from harness.view.site import Site

    writable = [str(f.root) for f in folders if f.page.writable]
    if writable and not is_loopback(host):
        raise click.UsageError(f"{', '.join(writable)}: a writable page is served on a loopback address only "
                               f"(not --host {host})")
    if not is_loopback(host):
        out.print(f"[bold yellow]warning:[/] serving on {host}: anyone who can reach it sees these runs and answers")

    def ready(url: str) -> None:
        out.print(f"harness view: {url}  (Ctrl-C to stop)")
        for f in folders:
            out.print(f"  {f.page.title}: {url}folders/{f.slug}/index.html")

    serve(Site(runs, live=True, folders=folders), host, port, ready=ready)

"""``harness generate``: build a simulator's filtered sample pool (TraceBench Section 3.4, App. B, C.1).

    harness generate --simulator balldrop --per-class 142 --seed 0 --out pools/

writes the pool into ``OUT/<sim>-v<version>-seed<S>-n<N>/`` (the cache layout of
:mod:`tsagent_plugins.tasks.tracebench.pool`; ``--out`` defaults to the cache root that runs read, so a
generated pool is used by later runs with the same ``pool_seed`` and ``pool_per_class``), with
a progress bar, on every usable core.  ``--released DIR`` also writes it in the published
TraceBench layout (:mod:`tsagent_plugins.tasks.tracebench.released`).  The files are byte-identical for
the same seed and library versions whatever ``--workers`` is, except ``timings.json``.
"""

from __future__ import annotations

from pathlib import Path

import click


@click.command("generate")
@click.option("--simulator", "sim_name", required=True, help="Registered simulator name, e.g. balldrop.")
@click.option("--per-class", type=click.IntRange(1), default=160, show_default=True,
              help="Samples per class (each parameter label and 'no parameter change').")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Pool seed.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Pool root directory (default: the cache root runs read).")
@click.option("--workers", type=click.IntRange(1), default=None, help="Processes (default: every usable core).")
@click.option("--released", "released_dir", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Also write the pool in the published TraceBench layout into this directory.")
def generate(sim_name: str, per_class: int, seed: int, out: Path | None, workers: int | None,
             released_dir: Path | None) -> None:
    """Generate (or find cached) the filtered sample pool of a simulator."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from harness import UnknownPlugin, get_plugin as get
    from tsagent_plugins.tasks.tracebench import _generation
    from tsagent_plugins.tasks.tracebench.pool import default_cache_root, load_pool

    try:
        sim = get("simulator", sim_name)
    except UnknownPlugin as exc:
        raise click.BadParameter(str(exc), param_hint="--simulator") from None
    console = Console(stderr=True)
    root = out if out is not None else default_cache_root()
    n_workers = workers or _generation.default_workers()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=False) as bar:
        task = bar.add_task(f"{sim.name} pool (seed {seed}, {per_class} per class, {n_workers} workers)", total=None)
        pool = load_pool(sim, pool_seed=seed, per_class=per_class, cache_dir=root, workers=n_workers,
                         progress=lambda done, total: bar.update(task, completed=done, total=total))
    s = pool.stats()
    how = "found in cache" if s.get("from_cache") else (
        f"generated in {s.get('wall_seconds', 0):.1f} s: {s['configurations']} configurations, "
        f"{s['candidates']} candidates, {s['accepted']} accepted")
    console.print(f"{len(pool)} samples {how}")
    if released_dir is not None:
        from tsagent_plugins.tasks.tracebench.released import write_released

        write_released(pool, released_dir)
        console.print(f"released layout: {released_dir}")
    click.echo(str(pool.path))

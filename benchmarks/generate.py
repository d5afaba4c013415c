"""Benchmark: generate a fresh filtered sample pool and report throughput per stage.

Usage: ``python benchmarks/generate.py [--simulator balldrop] [--per-class 142] [--workers N]``

Generates a pool (TraceBench Section 3.4 / Appendix B filter with N = 128 then
1,024, Appendix C.1 configuration rule) into a temporary directory, then prints
candidates/s, accepted samples/s, the rejections per rule/stage and the time
spent in each stage (summed over workers), plus the machine load.  Target for
BallDrop: 710 accepted samples (142 per class) in under 2 minutes on 2 cores.
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.plugins import get
from tsagent_plugins.tasks.tracebench import _generation
from tsagent_plugins.tasks.tracebench.pool import load_pool

STAGE_ORDER = ("sampling", "simulate", "rules", "noise@N=128", "noise@N=1024", "ratios", "writing")


@click.command()
@click.option("--simulator", "sim_name", default="balldrop", show_default=True, help="registered simulator name")
@click.option("--per-class", default=142, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, help="pool seed")
@click.option("--workers", default=None, type=click.IntRange(1), help="processes (default: usable CPUs)")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="write the pool under this cache root instead of a temporary directory")
def main(sim_name: str, per_class: int, seed: int, workers: int | None, keep: Path | None) -> None:
    console = Console()
    sim = get("simulator", sim_name)
    workers = workers or _generation.default_workers()
    load0 = os.getloadavg()
    cpu0 = _cpu_seconds()
    with tempfile.TemporaryDirectory(prefix="pool-bench-") as tmp:
        root = keep or Path(tmp)
        t0 = time.perf_counter()
        pool = load_pool(sim, pool_seed=seed, per_class=per_class, cache_dir=root / "fresh" if keep is None else root,
                         workers=workers)
        wall = time.perf_counter() - t0
    load1 = os.getloadavg()
    cpu = _cpu_seconds() - cpu0
    s = pool.stats()
    if s.get("from_cache"):
        console.print(f"[yellow]pool was already cached under {pool.path}; nothing generated[/]")
        return

    summary = Table(title=f"{sim.name} v{sim.version} pool: seed {seed}, {per_class} per class, {workers} workers")
    summary.add_column("quantity")
    summary.add_column("value", justify="right")
    for name, value in [
        ("wall time (s)", f"{wall:.1f}"),
        ("configurations processed / kept", f"{s['configurations']} / {s['configurations_kept']}"),
        ("candidates evaluated", f"{s['candidates']}"),
        ("candidates accepted", f"{s['accepted']}"),
        ("pool samples", f"{len(pool)}"),
        ("candidates / s", f"{s['candidates'] / wall:.1f}"),
        ("accepted candidates / s", f"{s['accepted'] / wall:.1f}"),
        ("pool samples / s", f"{len(pool) / wall:.1f}"),
        ("CPU time, this process + workers (s)", f"{cpu:.1f} ({cpu / wall:.2f} cores busy on average)"),
        ("intervention draws per parameter", f"{s['draws_per_parameter']}"),
        ("load average before / after (1 min)", f"{load0[0]:.2f} / {load1[0]:.2f} on {os.cpu_count()} CPUs"),
    ]:
        summary.add_row(name, value)
    console.print(summary)

    rej = Table(title="rejected candidates by first failing rule / stage")
    rej.add_column("rule / stage")
    rej.add_column("candidates", justify="right")
    rej.add_column("share of all", justify="right")
    for stage, n in sorted(s["rejections"].items(), key=lambda kv: -kv[1]):
        rej.add_row(stage, str(n), f"{n / max(1, s['candidates']):.1%}")
    rej.add_row("(accepted)", str(s["accepted"]), f"{s['accepted'] / max(1, s['candidates']):.1%}")
    console.print(rej)

    tim = Table(title="time per stage (seconds, summed over worker processes)")
    tim.add_column("stage")
    tim.add_column("seconds", justify="right")
    tim.add_column("ms per candidate", justify="right")
    timings = s["timings"]
    for stage in [*STAGE_ORDER, *sorted(set(timings) - set(STAGE_ORDER))]:
        if stage in timings:
            tim.add_row(stage, f"{timings[stage]:.2f}", f"{1e3 * timings[stage] / max(1, s['candidates']):.3f}")
    console.print(tim)
    verdict = "met" if sim_name != "balldrop" or per_class != 142 or wall < 120 else "MISSED"
    console.print(f"target (BallDrop, 710 samples < 120 s): {verdict}")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


if __name__ == "__main__":
    main()

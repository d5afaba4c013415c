"""Benchmark: generate a fresh filtered sample pool and report throughput per stage.

Usage: ``python benchmarks/generate.py [--simulator NAME ...] [--per-class 142] [--workers N]``

For each simulator (default: balldrop, bounceball and massslide) generates a pool (TraceBench Section 3.4 / Appendix B filter with N = 128 then
1,024, Appendix C.1 configuration rule) into a temporary directory, then prints
candidates/s, accepted samples/s, the rejections per rule/stage and the time
spent in each stage (summed over workers), plus the machine load (other users of a shared
machine slow it down: read the wall time with the load); then the total.  Targets on 2 cores:
BallDrop's 710 samples (142 per class) in under 40 s; the three held-out pools (142 per class
each) in under 2 minutes in total.
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


SIMULATORS = ("balldrop", "bounceball", "massslide")
TOTAL_TARGET_S = 120.0


@click.command()
@click.option("--simulator", "sim_names", multiple=True, default=SIMULATORS, show_default=True,
              help="registered simulator name (repeat for several)")
@click.option("--per-class", default=142, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, help="pool seed")
@click.option("--workers", default=None, type=click.IntRange(1), help="processes (default: usable CPUs)")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="write the pools under this cache root instead of a temporary directory")
def main(sim_names: tuple[str, ...], per_class: int, seed: int, workers: int | None, keep: Path | None) -> None:
    console = Console()
    load0 = os.getloadavg()
    walls = {name: one(console, name, per_class, seed, workers, keep) for name in sim_names}
    total = sum(w for w in walls.values() if w is not None)
    console.print("wall time per simulator: " + ", ".join(f"{k} {v:.1f} s" for k, v in walls.items() if v is not None)
                  + f"; total {total:.1f} s (load average 1 min {load0[0]:.2f} -> {os.getloadavg()[0]:.2f} "
                  f"on {os.cpu_count()} CPUs)")
    if set(sim_names) == set(SIMULATORS) and per_class == 142:
        console.print(f"target (three pools, 142 per class, < {TOTAL_TARGET_S:.0f} s in total): "
                      + ("met" if total < TOTAL_TARGET_S else "MISSED"))


def one(console: Console, sim_name: str, per_class: int, seed: int, workers: int | None,
        keep: Path | None) -> float | None:
    """Generate one pool and print its figures; returns the wall time (None when it was cached)."""
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
        return None

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
    return wall

    if sim_name == "balldrop" and per_class == 142:
        verdict = "met" if wall < 40 else "MISSED"
        console.print(f"target (BallDrop, 710 samples < 40 s on 2 cores): {verdict} ({wall:.1f} s, "
                      f"load {load1[0]:.2f} on {os.cpu_count()} CPUs)")


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process and its reaped children (the workers)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        r = resource.getrusage(who)
        total += r.ru_utime + r.ru_stime
    return total


if __name__ == "__main__":
    main()

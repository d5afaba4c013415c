"""Pool summary: a freshly generated pool against the paper's tables (TraceBench App. A, C.1).

Usage: ``python benchmarks/pool_summary.py [--simulator NAME] [--per-class 142] [--seed 0]``
(NAME: balldrop, bounceball or massslide).

Prints, for the simulator's retained pool, every figure computed the same way for each simulator
from its ``reference`` tables: per-channel SNR mean +- SD at both noise levels next to the SNR
table (BallDrop Table 7, BounceBall Table 12, MassSlide Table 17); each variable's retained
min / median / max next to the ranges table (Tables 5, 10, 15), baseline values (one per retained
sample) and post-intervention values separately; the C.1 checks (fewest passing root causes per retained configuration, and the
balanced accuracy of a leave-one-configuration-out 5-NN classifier on the standardised baseline
parameters and initial states, against chance + 0.10).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.plugins import get
from tsagent_plugins.tasks.tracebench import summary
from tsagent_plugins.tasks.tracebench.pool import load_pool


def _ok(v) -> str:
    return "" if v is None else ("[green]met[/]" if v else "[red]MISSED[/]")


@click.command()
@click.option("--simulator", "sim_name", default="balldrop", show_default=True)
@click.option("--per-class", default=142, show_default=True, type=click.IntRange(1))
@click.option("--seed", default=0, show_default=True, help="pool seed")
@click.option("--workers", default=None, type=click.IntRange(1))
@click.option("--cache", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="pool cache root to reuse (default: a fresh temporary directory)")
def main(sim_name: str, per_class: int, seed: int, workers: int | None, cache: Path | None) -> None:
    console = Console(width=150)
    sim = get("simulator", sim_name)
    with tempfile.TemporaryDirectory(prefix="pool-summary-") as tmp:
        t0 = time.perf_counter()
        pool = load_pool(sim, pool_seed=seed, per_class=per_class, cache_dir=cache or Path(tmp), workers=workers)
        wall = time.perf_counter() - t0
        console.print(f"{sim.name} v{sim.version}: {len(pool)} samples, {per_class} per class, pool seed {seed}; "
                      f"generation {wall:.1f} s; load {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
        src = sim.reference.source if sim.reference else "no reference tables"

        snr = summary.snr_table(sim, pool)
        t = Table(title=f"SNR (dB), mean +- SD over the pool vs {src}")
        for col in ("channel", "level", "pool", "paper", "diff mean / SD", "within the paper's spread"):
            t.add_column(col, justify="right")
        for r in snr.itertuples():
            t.add_row(r.channel, r.level, f"{r.mean:.2f} +- {r.sd:.2f}", f"{r.t_mean:.2f} +- {r.t_sd:.2f}",
                      f"{r.mean - r.t_mean:+.2f} / {r.sd - r.t_sd:+.2f}", _ok(r.ok))
        console.print(t)

        rng = summary.range_table(sim, pool.recipes)
        t = Table(title=f"retained values: min / median / max vs {src}")
        for col in ("variable", "values", "n", "pool", "paper", "edges / median off (% span)", "check"):
            t.add_column(col, justify="right")
        for r in rng.itertuples():
            span = r.t_max - r.t_min
            off = (f"{100 * (r.min - r.t_min) / span:+.1f} {100 * (r.max - r.t_max) / span:+.1f} / "
                   f"{100 * (r.median - r.t_median) / span:+.1f}") if span == span and span > 0 else ""
            t.add_row(r.variable, r.which, str(r.n), f"{r.min:.4g} / {r.median:.4g} / {r.max:.4g}",
                      f"{r.t_min:.4g} / {r.t_median:.4g} / {r.t_max:.4g}", off, _ok(r.ok))
        console.print(t)

        c = summary.configuration_check(sim, pool)
        console.print(f"C.1: fewest passing root causes of a retained sample's configuration: {c['min_passed']} "
                      f"(need >= 2) {_ok(c['min_passed'] >= 2)}; {c['configurations']} configurations")
        console.print(f"samples whose configuration contributes no other sample: {c['single_sample_configs']}")
        console.print(f"leave-one-configuration-out {summary.KNN_K}-NN on baseline values: balanced accuracy "
                      f"{c['knn_balanced_accuracy']:.3f} (chance {c['chance']:.3f}, limit "
                      f"{c['chance'] + summary.KNN_MARGIN:.3f}) {_ok(c['knn_ok'])}")
        met = bool(snr["ok"].dropna().all() and rng["ok"].dropna().all() and c["knn_ok"] and c["min_passed"] >= 2)
        console.print(f"all checks: {_ok(met)}")


if __name__ == "__main__":
    main()

"""Pool summary against a simulator's ranges and SNR tables (TraceBench Appendix A; issue targets).

For a freshly generated pool: per-channel SNR ``10 log10(sum y^2 / sum (y_noisy - y)^2)`` per
sample (noise seed = the sample's row index), mean and sample SD at ``kappa_ref`` and
``kappa_high``, next to the SNR table; each variable's retained min / median / max (baseline
values, one per retained sample) next to the ranges table, and the post-intervention values
separately; and a leave-one-configuration-out 5-nearest-neighbour classifier on the standardised
baseline values, whose balanced accuracy should not beat chance + 0.10 (Appendix C.1's aim).

Targets: SNR mean and SD within 1.5 dB; min, max and median within 10 % of the table's span.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SNR_TOL_DB = 1.5
SPAN_TOL = 0.10


@dataclass
class Row:
    """One printed comparison: ``what``, our value, the table's, ``met``."""

    what: str
    ours: str
    table: str
    met: bool


def snr_rows(sim, pool, kappa: float) -> np.ndarray:
    """Per-sample SNR (dB), shape (n_samples, C); channels whose clean signal is all zero are NaN."""
    rows = []
    for seed, sid in enumerate(pool.recipes.index):
        tr = pool.clean(sid)
        y = tr.values
        sig = (y ** 2).sum(axis=0)
        err = ((sim.observe(tr, kappa, seed) - y) ** 2).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            rows.append(np.where((sig > 0) & (err > 0), 10 * np.log10(sig / err), np.nan))
    return np.array(rows)


def loco_knn_balanced_accuracy(pool, k: int = 5) -> float:
    """Leave-one-configuration-out k-NN (Euclidean, standardised baselines) balanced accuracy."""
    cols = [c for c in pool.recipes.columns if c.startswith(("x0_", "theta_"))]
    X = pool.recipes[cols].to_numpy(dtype=float)
    sd = X.std(axis=0)
    X = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    y = pool.recipes["label"].to_numpy()
    cfg = pool.recipes["config_id"].to_numpy()
    classes = sorted(set(y))
    pred = []
    for i in range(len(X)):
        other = cfg != cfg[i]
        d = np.sum((X[other] - X[i]) ** 2, axis=1)
        nn = np.argsort(d, kind="stable")[:k]
        votes = {c: 0 for c in classes}
        for lab in y[other][nn]:
            votes[lab] += 1
        pred.append(max(classes, key=lambda c: (votes[c], -classes.index(c))))
    pred = np.array(pred)
    return float(np.mean([np.mean(pred[y == c] == c) for c in classes]))


def summarize(sim, pool, table_ranges: dict, table_snr: dict, snr_names: list[str]) -> list[Row]:
    """Comparison rows; ``table_ranges``: name -> (min, median, max); ``table_snr``:
    ``{"low"|"high": [(mean, sd) per channel]}``."""
    out: list[Row] = []
    for level, kappa in (("low", sim.kappa_ref), ("high", sim.kappa_high)):
        snr = snr_rows(sim, pool, kappa)
        for c, name in enumerate(snr_names):
            col = snr[:, c][np.isfinite(snr[:, c])]
            m, s = float(col.mean()), float(col.std(ddof=1))
            tm, ts = table_snr[level][c]
            out.append(Row(f"SNR {level} {name}", f"{m:.2f} +- {s:.2f}", f"{tm:.2f} +- {ts:.2f}",
                           abs(m - tm) <= SNR_TOL_DB and abs(s - ts) <= SNR_TOL_DB))
    rec = pool.recipes
    for name, (lo, med, hi) in table_ranges.items():
        col = f"x0_{name}" if f"x0_{name}" in rec else f"theta_{name}"
        v = rec[col].to_numpy(dtype=float)
        span = hi - lo
        ok = [abs(v.min() - lo) <= SPAN_TOL * span, abs(np.median(v) - med) <= SPAN_TOL * span,
              abs(v.max() - hi) <= SPAN_TOL * span, lo - 1e-9 <= v.min() and v.max() <= hi + 1e-9]
        out.append(Row(f"baseline {name} min/median/max", f"{v.min():.4g} / {np.median(v):.4g} / {v.max():.4g}",
                       f"{lo:.5g} / {med:.5g} / {hi:.5g}", all(ok)))
        post = rec.loc[rec["parameter"] == name, "new_value"].to_numpy(dtype=float)
        if post.size:
            out.append(Row(f"post-intervention {name} min/median/max",
                           f"{post.min():.4g} / {np.median(post):.4g} / {post.max():.4g}",
                           f"{lo:.5g} / - / {hi:.5g}", bool(lo - 1e-9 <= post.min() and post.max() <= hi + 1e-9)))
    n_cls = len(sim.labels)
    acc = loco_knn_balanced_accuracy(pool)
    out.append(Row("LOCO 5-NN balanced accuracy on baselines", f"{acc:.3f}",
                   f"<= {1 / n_cls + 0.10:.3f} (chance {1 / n_cls:.3f} + 0.10)", acc <= 1 / n_cls + 0.10))
    return out


def main(sim_name: str, table_ranges: dict, table_snr: dict, snr_names: list[str]) -> None:
    """Command-line body shared by ``benchmarks/pool_summary_<sim>.py``."""
    import tempfile
    import time
    import os
    from pathlib import Path

    import click
    from rich.console import Console
    from rich.table import Table

    from harness import get_plugin as get
    from tsagent_plugins.tasks.tracebench.pool import load_pool

    @click.command()
    @click.option("--per-class", default=142, show_default=True, type=click.IntRange(1))
    @click.option("--seed", default=0, show_default=True, help="pool seed")
    @click.option("--workers", default=None, type=click.IntRange(1))
    def cli(per_class: int, seed: int, workers: int | None) -> None:
        console = Console(width=140)
        sim = get("simulator", sim_name)
        load0 = os.getloadavg()[0]
        with tempfile.TemporaryDirectory(prefix="pool-summary-") as tmp:
            t0 = time.perf_counter()
            pool = load_pool(sim, pool_seed=seed, per_class=per_class, cache_dir=Path(tmp), workers=workers)
            wall = time.perf_counter() - t0
            pool._load()
            rows = summarize(sim, pool, table_ranges, table_snr, snr_names)
        table = Table(title=f"{sim.name} v{sim.version} pool: seed {seed}, {per_class} per class "
                            f"({wall:.1f} s, load {load0:.2f} -> {os.getloadavg()[0]:.2f})")
        for col in ("quantity", "ours", "paper table", "target"):
            table.add_column(col)
        for r in rows:
            table.add_row(r.what, r.ours, r.table, "met" if r.met else "[red]MISSED[/]")
        console.print(table)
        s = pool.stats()
        console.print(f"configurations {s['configurations']} (kept {s['configurations_kept']}), "
                      f"candidates {s['candidates']}, accepted {s['accepted']}, rejections {s['rejections']}")

    cli()

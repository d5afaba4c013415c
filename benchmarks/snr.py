"""BallDrop observation-model calibration and speed (TraceBench Table 7).

Prints, per channel and noise level, the pool mean +- sd of the per-sample SNR
``10 log10(sum y^2 / sum (y_noisy - y)^2)`` next to Table 7 and the difference in dB, for

* ``sampled``: N Latin-hypercube configurations, 4 of 5 with a random intervention;
* ``rule-passing`` (``--rules``): intervention candidates that pass every Table 4 rule, a pool
  closer in composition to the released one;

and the time per ``simulate()``, per ``rejection_rules()``, per ``observe()`` and per
``noise_power(N=1024)`` call (plus the one-off per-process moment computation).

    python benchmarks/snr.py --n 400 --rules

Table 7 describes the *retained* pool: ``benchmarks/pool_summary.py`` checks it on a freshly
generated, filtered pool (same SNR definition); the unfiltered ``sampled`` set here keeps
many balls that soon rest and reads lower.
"""

from __future__ import annotations

import time

import click
import numpy as np
from rich.console import Console
from rich.table import Table

from tsagent_plugins.simulators.balldrop import BallDrop, noise
from tsagent_plugins.tasks.tracebench.noise import kappa_high

TABLE7 = {"low": (1.0, (42.41, 36.58, 21.07), (3.19, 2.60, 2.55)),
          "high": (4.0, (30.58, 24.54, 9.03), (3.14, 2.60, 2.55))}
NAMES = ("Position", "Velocity", "Impulse")


def snr_rows(sim: BallDrop, trajectories, kappa: float) -> np.ndarray:
    rows = []
    for seed, tr in enumerate(trajectories):
        y = tr.values
        sig = (y**2).sum(axis=0)
        if np.all(sig > 0):
            rows.append(10 * np.log10(sig / ((sim.observe(tr, kappa, seed) - y) ** 2).sum(axis=0)))
    return np.array(rows)


def report(console: Console, title: str, sim: BallDrop, trajectories) -> None:
    table = Table(title=f"{title}: {len(trajectories)} trajectories")
    for col in ("level", "channel", "mean +- sd (dB)", "Table 7", "diff (dB)"):
        table.add_column(col, justify="right")
    for level, (kappa, means, sds) in TABLE7.items():
        rows = snr_rows(sim, trajectories, kappa)
        for c, name in enumerate(NAMES):
            m, s = rows[:, c].mean(), rows[:, c].std(ddof=1)
            table.add_row(level, name, f"{m:.2f} +- {s:.2f}", f"{means[c]:.2f} +- {sds[c]:.2f}", f"{m - means[c]:+.2f}")
    console.print(table)


@click.command()
@click.option("--n", default=300, show_default=True, help="sampled configurations")
@click.option("--seed", default=0, show_default=True)
@click.option("--rules/--no-rules", default=False, show_default=True, help="also the rule-passing pool")
@click.option("--rules-configs", default=2000, show_default=True, help="configurations tried for it")
def main(n: int, seed: int, rules: bool, rules_configs: int) -> None:
    console = Console()
    sim = BallDrop()
    rng = np.random.default_rng(seed)
    cfgs = sim.sample_configurations(n, rng)
    ivs = [None if i % 5 == 4 else sim.sample_intervention(c, sim.parameters[i % 5].name, rng)
           for i, c in enumerate(cfgs)]
    t0 = time.perf_counter()
    trs = [sim.simulate(c, iv) for c, iv in zip(cfgs, ivs)]
    t_sim = (time.perf_counter() - t0) / n
    report(console, "sampled", sim, trs)

    if rules:
        passing, t_rules, calls = [], 0.0, 0
        for c in sim.sample_configurations(rules_configs, rng):
            base = sim.simulate(c)
            for p in sim.parameters:
                iv = sim.sample_intervention(c, p.name, rng)
                tr = sim.simulate(c, iv)
                t1 = time.perf_counter()
                ok = all(r.passed for r in sim.rejection_rules(c, iv, tr, base))
                t_rules += time.perf_counter() - t1
                calls += 1
                if ok:
                    passing.append(tr)
        report(console, f"rule-passing ({len(passing)}/{calls} candidates)", sim, passing)
        console.print(f"rejection_rules(): {t_rules / calls * 1e3:.3f} ms per call")

    t0 = time.perf_counter()
    noise.moments(1024, sim.n_samples)
    t_mom = time.perf_counter() - t0
    t0 = time.perf_counter()
    for tr in trs:
        sim.noise_power(tr, kappa_high(sim), 1024)
    t_np = (time.perf_counter() - t0) / len(trs)
    t0 = time.perf_counter()
    for s, tr in enumerate(trs[:100]):
        sim.observe(tr, kappa_high(sim), s)
    t_obs = (time.perf_counter() - t0) / min(100, len(trs))
    console.print(f"simulate(): {t_sim * 1e3:.3f} ms per call")
    console.print(f"observe(): {t_obs * 1e3:.3f} ms per call")
    console.print(f"noise_power(N=1024): {t_np * 1e3:.3f} ms per call "
                  f"(+ {t_mom:.2f} s once per process for the seed moments)")


if __name__ == "__main__":
    main()

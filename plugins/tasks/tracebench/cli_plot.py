"""``harness plot-sample``: draw one pool sample (clean, low and high noise) as a PNG.

    harness plot-sample --simulator balldrop --label gravity --out sample.png
    harness plot-sample --simulator balldrop --pool DIR --sample 3f2a... --out sample.png

``--pool`` takes a generated pool directory (``harness generate`` output) or a released
TraceBench directory; without it the cached pool of ``--seed`` / ``--per-class`` is used
(generated first when absent).  The noise is the episode noise of repetition ``--rep-seed``.
"""

from __future__ import annotations

from pathlib import Path

import click

from tsagent_plugins.tasks.tracebench.noise import kappa_high


def open_pool(sim, pool_dir: Path | None, seed: int, per_class: int):
    """A released directory, a generated pool directory, or the cached pool (seed, per_class)."""
    from tsagent_plugins.tasks.tracebench import pool as pool_mod
    from tsagent_plugins.tasks.tracebench import released

    if pool_dir is None:
        return pool_mod.load_pool(sim, pool_seed=seed, per_class=per_class)
    if (pool_dir / released.QUESTIONS).exists():
        return released.load_released(sim, pool_dir)
    if (pool_dir / "meta.json").exists():
        return pool_mod._open(sim, pool_dir, from_cache=True)
    raise click.BadParameter(f"{pool_dir}: neither a pool directory (meta.json) nor a released one "
                             f"({released.QUESTIONS})", param_hint="--pool")


@click.command("plot-sample")
@click.option("--simulator", "sim_name", required=True, help="Registered simulator name, e.g. balldrop.")
@click.option("--pool", "pool_dir", type=click.Path(path_type=Path, file_okay=False, exists=True), default=None,
              help="Pool directory (generated or released); default: the cached pool of --seed/--per-class.")
@click.option("--seed", type=click.IntRange(0), default=0, show_default=True, help="Pool seed.")
@click.option("--per-class", type=click.IntRange(1), default=160, show_default=True,
              help="Samples per class of the cached pool to open (with --seed; ignored with --pool).")
@click.option("--sample", "sample_id", default=None, help="Sample id (default: the first of --label).")
@click.option("--label", default=None, help="Class label or parameter name (default: the first parameter's).")
@click.option("--rep-seed", type=click.IntRange(0), default=0, show_default=True, help="Repetition seed of the noise.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), required=True, help="PNG file to write.")
def plot_sample_cmd(sim_name: str, pool_dir: Path | None, seed: int, per_class: int, sample_id: str | None,
                    label: str | None, rep_seed: int, out: Path) -> None:
    """Plot one sample's channels: clean, low noise and high noise, intervention time marked."""
    from harness import UnknownPlugin, get_plugin as get
    from tsagent_plugins.tasks.tracebench.files import noise_seed
    from tsagent_plugins.tasks.tracebench.plot import plot_sample

    try:
        sim = get("simulator", sim_name)
    except UnknownPlugin as exc:
        raise click.BadParameter(str(exc), param_hint="--simulator") from None
    pool = open_pool(sim, pool_dir, seed, per_class)
    rec = pool.recipes
    if sample_id is None:
        names = {p.name: p.label for p in sim.parameters}
        want = names.get(label, label) if label else sim.labels[0]
        hits = rec.index[rec["label"] == want]
        if len(hits) == 0:
            raise click.BadParameter(f"no sample with label {want!r}; labels: {sim.labels}", param_hint="--label")
        sample_id = str(hits[0])
    elif sample_id not in rec.index:
        raise click.BadParameter(f"no sample {sample_id!r} in {pool.path}", param_hint="--sample")
    clean = pool.clean(sample_id)
    if hasattr(pool, "conditions"):  # released: noise seeds live in the manifest per condition
        ns = noise_seed(0, rep_seed)
    else:
        ns = pool.noise_seed(sample_id, rep_seed)
    iv = pool.intervention(sample_id)
    row = rec.loc[sample_id]
    what = "no parameter change" if iv is None else (
        f"{row['label']}: {row['old_value']:.4g} -> {iv.new_value:.4g} at t = {iv.time:.2f} s")
    plot_sample(sim, clean, sim.observe(clean, sim.kappa_ref, ns), sim.observe(clean, kappa_high(sim), ns), out,
                title=f"{sim.name} sample {sample_id} ({what}); noise seed {ns}",
                t_int=None if iv is None else iv.time)
    click.echo(str(out))


plot_sample = plot_sample_cmd

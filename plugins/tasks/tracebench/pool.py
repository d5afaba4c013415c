"""The filtered sample pool of one simulator (TraceBench Sections 3.4, 4.5, Appendix C.1).

A pool holds ``per_class`` clean samples for every class (each parameter label
plus ``"no parameter change"``) that passed the solvability filter
(:mod:`tsagent_plugins.tasks.tracebench.filtering`) and the configuration rule (an
initial configuration is kept only when at least two distinct parameters pass;
NI samples come only from kept configurations).  It is generated once per
``(simulator name, simulator version, pool seed, per_class)`` and cached in
``<cache root>/<sim>-v<version>-seed<seed>-n<per_class>/``; the cache root is
``cache_dir`` if given, else ``$HARNESS_CACHE_DIR/pools``, else
``~/.cache/harness/pools``.  Generation details: :mod:`._generation`; file
layout and atomic writing: :mod:`._store`; episode splits: :mod:`._split`.

Recipe columns (index ``sample_id``, an opaque stable string):
``config_id`` (int), ``label`` (class label), ``parameter`` (machine name or
None), ``draw`` (intervention draw, -1 for NI), ``t_int`` (s), ``old_value``,
``new_value`` (NaN for NI), ``x0_<state variable>``, ``theta_<parameter>``
(baseline values) and the filter ratios ``r_ni_<N>``, ``r_sc_<N>`` (NaN for NI).
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from harness import NO_CHANGE, Configuration, Intervention, Simulator, SimulatedTrajectory as Trajectory
from tsagent_plugins.tasks.tracebench import _generation, _split, _store
from tsagent_plugins.tasks.tracebench._split import Split
from tsagent_plugins.tasks.tracebench._store import PoolCacheError
from tsagent_plugins.tasks.tracebench.filtering import PROBES, FilterSettings, ratio_key
from tsagent_plugins.tasks.tracebench.noise import kappa_high

__all__ = ["Pool", "Split", "PoolCacheError", "load_pool", "default_cache_root", "pool_key"]

_ID_NAMESPACE = uuid.UUID("6f1c4a52-2f0e-4b7e-9d0a-5b1e3c8d7a21")


def default_cache_root() -> Path:
    """``$HARNESS_CACHE_DIR/pools`` when set, else ``~/.cache/harness/pools``."""
    env = os.environ.get("HARNESS_CACHE_DIR")
    return (Path(env) if env else Path.home() / ".cache" / "harness") / "pools"


def pool_key(simulator: Simulator, pool_seed: int, per_class: int) -> str:
    """Directory name ``<sim>-v<version>-seed<seed>-n<per_class>``."""
    return f"{simulator.name}-v{simulator.version}-seed{pool_seed}-n{per_class}"


def sample_id(simulator: Simulator, pool_seed: int, config_index: int, parameter: str | None, draw: int) -> str:
    """Opaque, stable id of one sample (16 hex characters)."""
    text = f"{simulator.name}|{simulator.version}|{pool_seed}|{config_index}|{parameter or 'NI'}|{draw}"
    return uuid.uuid5(_ID_NAMESPACE, text).hex[:16]


class Pool:
    """A loaded pool.  ``recipes``: DataFrame indexed by sample_id (module docstring);
    ``configs``: one row per processed configuration (``config_id``, ``status``
    kept/rejected/skipped, ``kept``, ``n_passed``, ``passed`` (comma-separated
    parameter names), ``n_candidates``, ``x0_*``, ``theta_*``); ``path``: its directory."""

    def __init__(self, simulator: Simulator, recipes: pd.DataFrame, configs: pd.DataFrame, path: Path,
                 stats: dict, trajectories: list[Trajectory] | None = None):
        self.simulator = simulator
        self.recipes = recipes
        self.configs = configs
        self.path = path
        self._stats = stats
        self._trajectories = trajectories
        self._row = {sid: i for i, sid in enumerate(recipes.index)}
        self._pool_seed: int | None = None

    def __len__(self) -> int:
        return len(self.recipes)

    def _load(self) -> list[Trajectory]:
        if self._trajectories is None:
            self._trajectories = _store.read_trajectories(self.path, len(self.recipes), len(self.simulator.channels))
        return self._trajectories

    def _check(self, sample_id: str) -> int:
        try:
            return self._row[sample_id]
        except KeyError:
            raise KeyError(f"no sample {sample_id!r} in pool {self.path}") from None

    def clean(self, sample_id: str) -> Trajectory:
        """The clean trajectory of ``sample_id`` (a copy): time (T,) s, values (T, C), events (E,) s."""
        t = self._load()[self._check(sample_id)]
        return Trajectory(t.time.copy(), t.values.copy(), t.events.copy())

    def paired_clean(self, sample_id: str) -> Trajectory:
        """The clean no-intervention trajectory of ``sample_id``'s configuration (its paired NI
        run, for privileged baselines): the pool's NI sample of that configuration when it has
        one, else ``simulator.simulate(config)`` -- the same deterministic run the filter used
        as its NI probe.  For a no-intervention sample it is the sample itself."""
        cfg = int(self.recipes.iloc[self._check(sample_id)]["config_id"])
        ni = self.recipes.index[(self.recipes["config_id"] == cfg) & self.recipes["parameter"].isna()]
        if len(ni):
            return self.clean(str(ni[0]))
        return self.simulator.simulate(self.config(sample_id), None)

    def config(self, sample_id: str) -> Configuration:
        """The initial configuration (initial state, baseline parameters) of ``sample_id``."""
        row = self.recipes.iloc[self._check(sample_id)]
        return Configuration(
            {v.name: float(row[f"x0_{v.name}"]) for v in self.simulator.state_variables},
            {p.name: float(row[f"theta_{p.name}"]) for p in self.simulator.parameters},
        )

    def intervention(self, sample_id: str) -> Intervention | None:
        """The ground-truth intervention of ``sample_id``; None for a no-intervention sample."""
        row = self.recipes.iloc[self._check(sample_id)]
        if row["parameter"] is None:
            return None
        return Intervention(str(row["parameter"]), float(row["t_int"]), float(row["new_value"]))

    def split(self, rep_seed: int, n_test: int, n_support_per_class: int, n_heldout_per_class: int = 142) -> Split:
        """Test, support and held-out sample ids for repetition ``rep_seed`` (see :mod:`._split`).

        Test samples are chosen first and do not depend on ``n_support_per_class``;
        test and support samples come from pairwise distinct configurations;
        held-out samples are disjoint from both.  ValueError when the pool is too small."""
        return _split.choose(self.recipes, self.simulator.labels, rep_seed, n_test, n_support_per_class,
                             n_heldout_per_class, where=f"pool {self.path}")

    def noise_seed(self, sample_id: str, rep_seed: int) -> int:
        """Seed of ``Simulator.observe`` for ``sample_id`` in repetition ``rep_seed``: the episode's seed,
        the same for every sample (:func:`tsagent_plugins.tasks.tracebench.files.noise_seed` of this
        pool's seed).  KeyError for a sample not in the pool."""
        from tsagent_plugins.tasks.tracebench.files import noise_seed

        self._check(sample_id)
        if self._pool_seed is None:
            self._pool_seed = int(_store.read_json(self.path / "meta.json")["pool_seed"])
        return noise_seed(self._pool_seed, rep_seed)

    def stats(self) -> dict:
        """Generation statistics: ``configurations`` (processed), ``configurations_kept``,
        ``configurations_skipped``, ``candidates`` (evaluated), ``accepted`` (candidates that
        passed), ``rejections`` {first failing rule or stage: count} (so ``candidates ==
        accepted + sum(rejections)``), ``samples``, ``workers``, ``draws_per_parameter``,
        ``timings`` {sampling, simulate, rules, noise@N=128, noise@N=1024, ratios, writing:
        seconds, summed over worker processes}, ``wall_seconds``, ``from_cache``."""
        return dict(self._stats)


def load_pool(
    simulator: Simulator, pool_seed: int = 0, per_class: int = 160, cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None, workers: int | None = None,
    settings: FilterSettings | None = None,
) -> Pool:
    """Load the cached pool, generating and caching it first when absent or stale.

    ``cache_dir``: the cache root (the pool lives in ``cache_dir/<pool_key>``).
    ``progress(done, total)``: samples selected so far, during generation only.
    ``workers``: processes for generation (default: usable CPUs; results do not
    depend on it).  ``settings``: filter constants (Appendix B defaults).
    A cache whose ``meta.json`` differs in format or settings is regenerated; an
    unreadable one raises :class:`PoolCacheError` naming the file and field.
    """
    if per_class < 1:
        raise ValueError(f"per_class must be >= 1, got {per_class}")
    settings = settings or FilterSettings()
    root = Path(cache_dir) if cache_dir is not None else default_cache_root()
    key = pool_key(simulator, pool_seed, per_class)
    meta = _meta(simulator, pool_seed, per_class, settings)
    path = root / key
    if _is_current(path, meta):
        return _open(simulator, path, from_cache=True)  # no progress: a run's output shows no rebuild

    selection = _generation.generate(simulator, pool_seed, per_class, settings, workers, progress)
    recipes, trajectories = _recipes(simulator, pool_seed, selection, settings)
    configs = _configs_table(simulator, selection)
    stats = dict(selection.stats)
    final = _store.publish(root, key, lambda tmp: _store.write_dir(tmp, recipes, trajectories, configs, meta, stats),
                           is_current=lambda p: _is_current(p, meta))
    stats["from_cache"] = False
    return Pool(simulator, recipes, configs, final, stats, trajectories)


def _is_current(path: Path, meta: dict) -> bool:
    """A complete pool with exactly this ``meta`` exists at ``path``."""
    return (path / "meta.json").exists() and _store.read_json(path / "meta.json") == meta


def _meta(sim: Simulator, pool_seed: int, per_class: int, settings: FilterSettings) -> dict:
    return {
        "format": _store.FORMAT,
        "simulator": sim.name,
        "version": str(sim.version),
        "pool_seed": int(pool_seed),
        "per_class": int(per_class),
        "labels": list(sim.labels),
        "channels": [c.name for c in sim.channels],
        "filter": dataclasses.asdict(settings) | {
            "kappa": float(kappa_high(sim) if settings.kappa is None else settings.kappa)},
        "draws_per_parameter": _generation.DRAWS_PER_PARAMETER,
        "round_size": _generation.ROUND_SIZE,
        "n_samples": int(per_class) * len(sim.labels),
    }


def _open(sim: Simulator, path: Path, from_cache: bool) -> Pool:
    recipes = _store.read_recipes(path)
    try:
        configs = pd.read_parquet(path / "configs.parquet")
    except Exception as exc:  # noqa: BLE001
        raise PoolCacheError(f"{path / 'configs.parquet'}: unreadable ({exc})") from exc
    stats = _store.read_json(path / "stats.json") | {"from_cache": from_cache}
    if (path / "timings.json").exists():
        stats |= _store.read_json(path / "timings.json")
    bad = set(recipes["label"]) - set(sim.labels)
    if bad:
        raise PoolCacheError(f"{path / 'recipes.parquet'}: field 'label' has unknown labels {sorted(bad)}")
    return Pool(sim, recipes, configs, path, stats)


def _recipes(sim: Simulator, pool_seed: int, sel: _generation.Selection, settings: FilterSettings):
    label_of = {p.name: p.label for p in sim.parameters}
    rkeys = [ratio_key(q, n) for n in settings.stages for q in PROBES]
    items = []
    for entries in sel.per_class.values():
        items += entries
    class_order = {lab: i for i, lab in enumerate(sim.labels)}
    items.sort(key=lambda e: (e[0].index, class_order[label_of[e[1]] if e[1] else NO_CHANGE]))
    rows, trajectories = [], []
    for out, name in items:
        row = {"config_id": out.index}
        if name is None:
            draw, traj = -1, out.ni
            row |= {"label": NO_CHANGE, "parameter": None, "draw": draw, "t_int": np.nan,
                    "old_value": np.nan, "new_value": np.nan} | {k: np.nan for k in rkeys}
        else:
            cand = out.passed[name]
            draw, traj = cand.draw, cand.target
            iv = cand.intervention
            row |= {"label": label_of[name], "parameter": name, "draw": draw, "t_int": iv.time,
                    "old_value": float(out.config.parameters[name]), "new_value": iv.new_value}
            row |= {k: cand.ratios.get(k, np.nan) for k in rkeys}
        row |= {f"x0_{v.name}": float(out.config.initial_state[v.name]) for v in sim.state_variables}
        row |= {f"theta_{p.name}": float(out.config.parameters[p.name]) for p in sim.parameters}
        row["sample_id"] = sample_id(sim, pool_seed, out.index, name, draw)
        rows.append(row)
        trajectories.append(traj)
    return _store.normalize_recipes(pd.DataFrame(rows).set_index("sample_id")), trajectories


def _configs_table(sim: Simulator, sel: _generation.Selection) -> pd.DataFrame:
    rows = []
    for out in sel.outcomes:
        passed = [p.name for p in sim.parameters if p.name in out.passed]
        row = {"config_id": out.index, "status": out.status, "kept": bool(out.kept), "n_passed": len(passed),
               "passed": ",".join(passed), "n_candidates": len(out.candidates)}
        row |= {f"x0_{v.name}": float(out.config.initial_state[v.name]) for v in sim.state_variables}
        row |= {f"theta_{p.name}": float(out.config.parameters[p.name]) for p in sim.parameters}
        rows.append(row)
    return pd.DataFrame(rows)

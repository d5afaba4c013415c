"""TraceBench episode inputs kept by reference (``harness.inputs``): every sample file of an episode is
rebuilt, one at a time, from its recipe, so that an episode folder keeps only what is new in it.

What is referenced (:func:`references`): each test sample (``workspace/test_samples/``, and its pristine copy
``key/test_samples/`` that a programmatic submission is run on), each support sample
(``workspace/train_samples/``), each held-out sample (``key/heldout_samples/``) and each privileged clean pair
(``workspace/clean_pairs/{test,train}_samples/``).  A reference holds what one file is made of:

- a generated pool's sample: ``simulator``, ``simulator_version``, ``pool_seed``, the sample's ``config_id``,
  ``parameter`` (None: no intervention) and intervention ``draw`` (the pool's recipe: ``key/recipes.json`` for
  test and support samples, the pool's own for held-out ones),
  ``sample_id``, ``kappa`` and ``noise_seed`` (``key/key.json``); rebuilt by drawing that one configuration
  and intervention again as the pool generator drew them
  (``tsagent_plugins.tasks.tracebench._generation.sample_recipe``), simulating it and adding the noise
  (``Simulator.observe(clean, kappa, noise_seed)``): about 40 ms for BallDrop, never the pool (whose clean
  trajectories are 369 MB for BallDrop's 160 per class) and never the pool's cache;
- a clean pair (``clean_pair: true``): the same configuration simulated without intervention, no noise;
- a released pool's sample (``released_pool``: the release directory, ``frame_sha256``: the sha256 of its
  ``dataframes/<sample id>.parquet``): that one frame read again (checked against the digest) and noised;
  a clean pair of a released pool is not referenced (kept as it is), since it is simulated from the
  generated pool (``TracebenchTemplate.write_privileged``).

Each reference also says where it comes from (``source``, e.g. ``balldrop pool seed 0 (simulator v2)``),
which an error about a rebuilt sample that no longer matches names.  A rebuilt file is checked against the
digest of the values written at the episode's start (:func:`.files.values_digest`: sha256 over the column
names and float64 values, not the Parquet bytes, which embed the pyarrow version).

The held-out batch used to be written once per (sample, noise seed, kappa) into a shared store of observed
samples (``<cache>/observed``) and hard-linked into each episode, so a copy of a run folder without ``-H``,
an archive or a Dask worker's tar carried about 95 MB per programmatic episode and the store only grew.  It
is gone: every episode writes private copies, which its end drops.  Measured on BallDrop (two cores): noising
and writing one held-out sample from the loaded pool takes 6.3 ms against 0.4 ms to copy it from such a
store, so 710 held-out files cost about 4.5 s instead of 0.3 s, next to the 20 s of the programmatic
episode's own rule evaluation; a store would save little time and cost a bounded cache's bookkeeping.
Rebuilding them later (``harness rescore``) goes through the harness's bounded inputs cache.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from harness import Simulator, lazy_module
from tsagent_plugins.tasks.tracebench import files as sample_files

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

#: batch -> the folders (relative to the episode folder) its sample files are in
FOLDERS = {"test": ("workspace/test_samples", "key/test_samples"), "support": ("workspace/train_samples",),
           "heldout": ("key/heldout_samples",)}
#: batch -> the folder of its privileged clean pairs
CLEAN_PAIRS = {"test": "workspace/clean_pairs/test_samples", "support": "workspace/clean_pairs/train_samples"}


def _source(key: dict) -> str:
    if key.get("released_pool"):
        return f"{key.get('simulator')} released pool {key['released_pool'].get('path')}"
    return f"{key.get('simulator')} pool seed {key.get('pool_seed')} (simulator v{key.get('simulator_version')})"


def references(key: dict, recipe: dict[str, dict], root: Path) -> dict[str, dict[str, Any]]:
    """The references of the sample files of the episode in folder ``root`` (module docstring), from its
    answer key (``key.json`` content) and its samples' pool recipes (sample id -> at least ``config_id``,
    ``parameter``, ``draw``); files not in the folder, and samples whose recipe lacks what a rebuild needs
    (a pool without ``config_id``/``parameter``/``draw``), are left out (kept as they are)."""
    released = key.get("released_pool") or None
    common = {"source": _source(key), "simulator": key.get("simulator"),
              "simulator_version": str(key.get("simulator_version")), "pool_seed": key.get("pool_seed"),
              "kappa": key.get("kappa")}
    out: dict[str, dict[str, Any]] = {}
    frames: dict[str, str] = {}
    for group, folders in FOLDERS.items():
        for name, truth in sorted((key.get(group) or {}).items()):
            sid = str(truth.get("sample_id"))
            ref: dict[str, Any] = {**common, "sample_id": sid, "noise_seed": truth.get("noise_seed")}
            if released:
                frame = Path(released["path"]) / "dataframes" / f"{sid}.parquet"
                if sid not in frames:
                    try:
                        frames[sid] = sample_files.file_sha256(frame)
                    except OSError:
                        continue  # the release moved: kept as it is
                ref.update(released_pool=str(released["path"]), frame_sha256=frames[sid])
            else:
                made = recipe.get(sid) or {}
                if not all(k in made for k in ("config_id", "parameter", "draw")) \
                        or not isinstance(made["config_id"], int):
                    continue
                ref.update(config_id=made["config_id"], parameter=made["parameter"], draw=int(made["draw"]))
                if made.get("exact_floats"):  # the drawn values themselves: rebuilt without drawing again
                    ref["config"] = {k: v for k, v in made.items() if k.startswith(("x0_", "theta_"))}
                    if made["parameter"] is not None:
                        ref["intervention"] = [made["t_int"], made["new_value"]]
            for folder in folders:
                if (root / folder / name).is_file():
                    out[f"{folder}/{name}"] = ref
            pair = CLEAN_PAIRS.get(group)
            if pair and not released and (root / pair / name).is_file():
                out[f"{pair}/{name}"] = {**{k: v for k, v in ref.items() if k not in ("noise_seed", "kappa")},
                                         "clean_pair": True}
    return out


_released: dict[str, Any] = {}
_released_lock = threading.Lock()


def _released_clean(sim: Simulator, reference: dict[str, Any]):
    """The clean trajectory of a released pool's sample: its one frame, checked against ``frame_sha256``."""
    from tsagent_plugins.tasks.tracebench.released import load_released

    path = str(reference["released_pool"])
    frame = Path(path) / "dataframes" / f"{reference['sample_id']}.parquet"
    found = sample_files.file_sha256(frame)
    if found != reference["frame_sha256"]:
        raise ValueError(f"{frame}: sha256 {found}, the run read {reference['frame_sha256']}")
    with _released_lock:
        pool = _released.get(path)
    if pool is None:
        pool = load_released(sim, Path(path))  # questions.json and the manifest: no frame is read
        with _released_lock:
            _released.clear()
            _released[path] = pool
    return pool.clean(str(reference["sample_id"]))


def rebuild(sim: Simulator, reference: dict[str, Any], dest: Path) -> None:
    """Write the sample file ``reference`` names (:func:`references`) at ``dest``, from that one sample's
    recipe.  Raises ValueError when ``sim`` is not the simulator version the episode ran with, or a released
    frame changed."""
    if sim.name != reference.get("simulator") or str(sim.version) != str(reference.get("simulator_version")):
        raise ValueError(f"the simulator here is {sim.name} v{sim.version}; the episode used "
                         f"{reference.get('simulator')} v{reference.get('simulator_version')}")
    if reference.get("released_pool"):
        clean = _released_clean(sim, reference)
    else:
        config, intervention = recipe_of(sim, reference)
        if reference.get("clean_pair"):
            pair = sim.simulate(config, None)
            sample_files.write_sample(Path(dest), pair.time, np.asarray(pair.values, dtype=np.float64))
            return
        clean = sim.simulate(config, intervention)
    noisy = np.asarray(sim.observe(clean, float(reference["kappa"]), int(reference["noise_seed"])), dtype=np.float64)
    sample_files.write_sample(Path(dest), clean.time, noisy)


def recipe_of(sim: Simulator, reference: dict[str, Any]):
    """(configuration, intervention or None) of a generated pool's sample: the drawn values when the reference
    holds them (``config``, ``intervention``: from a ``recipes.json`` written with whole floats), else drawn
    again as the pool generator drew them (``sample_recipe``: the same values, at the cost of loading the
    configuration sampler, scipy.stats, about 60 MB, which a viewer showing test samples does not need)."""
    from harness import Configuration, Intervention

    if "config" not in reference:
        from tsagent_plugins.tasks.tracebench._generation import sample_recipe

        return sample_recipe(sim, int(reference["pool_seed"]), int(reference["config_id"]),
                             reference.get("parameter"), int(reference["draw"]))
    values = reference["config"]
    config = Configuration({v.name: float(values[f"x0_{v.name}"]) for v in sim.state_variables},
                           {p.name: float(values[f"theta_{p.name}"]) for p in sim.parameters})
    if reference.get("parameter") is None:
        return config, None
    time, new_value = reference["intervention"]
    return config, Intervention(str(reference["parameter"]), float(time), float(new_value))


def read_recipes(key_dir: Path) -> list[dict]:
    """``key_dir/recipes.json`` (the episode's pool recipes), or [] when missing or unreadable."""
    try:
        data = json.loads((Path(key_dir) / "recipes.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else []


def recipes_of(key: dict, key_dir: Path, pool_recipes: Callable[[], Any]) -> dict[str, dict]:
    """Sample id -> recipe of every sample of the episode whose answer key is ``key``: from
    ``key_dir/recipes.json`` (test and support samples; every sample in a folder written before the held-out
    recipes were left to the pool), the rest (``config_id``, ``parameter``, ``draw``) from the pool's recipe
    table, which ``pool_recipes()`` gives (called only when needed)."""
    recipes = {str(r.get("sample_id")): r for r in read_recipes(key_dir) if isinstance(r, dict)}
    missing = [t.get("sample_id") for g in FOLDERS for t in (key.get(g) or {}).values()
               if t.get("sample_id") not in recipes]
    if missing:
        table = pool_recipes()
        columns = [c for c in ("config_id", "parameter", "draw") if c in table.columns]
        for sid in missing:
            if sid in table.index:
                recipes[sid] = {c: exact(table.at[sid, c]) for c in columns}
    return recipes


def exact(value: Any) -> Any:
    """A pool recipe's value as JSON has it: numpy scalars as Python numbers (a float whole: ``json`` writes the
    shortest text that reads back to the same double), NaN and None as None."""
    value = value.item() if hasattr(value, "item") else value
    if value is None or isinstance(value, float) and value != value:
        return None
    return value

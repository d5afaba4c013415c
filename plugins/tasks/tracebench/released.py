"""The published TraceBench dataset layout: read it, and write our pools in it (Appendix C.2).

One directory per simulator::

    questions.json          conditions (keyed by slug), label mapping, ground truth per sample
    sample_manifest.json    per condition slug: repetitions with test / train / held-out sample
                            ids and their noise seeds
    dataframes/<uuid>.parquet   clean signals + time, one file per sample
    model_record.json       how the samples were made (simulator, version, grid, generator)

The published files could not be inspected when this reader was built: the field names below
follow the documented description of the release (questions keyed by slug with the label
mapping and the ground-truth interventions -- changed parameter, time, new value, initial
parameters; a manifest of per-condition sample ids and seeds; clean Parquet trajectories) and
are UNVERIFIED against the real files.  Field mapping (release -> pool recipe):

==========================================  =============================================
``questions.json``                          pool
==========================================  =============================================
``label_mapping`` {parameter: label}        the release's display string of each parameter
``ground_truth.<uuid>.label``               ``label``: the simulator's label of
                                            ``changed_parameter`` (the release's display
                                            string, e.g. BounceBall's "weight of the mass",
                                            is accepted for it), else "no parameter change"
``ground_truth.<uuid>.changed_parameter``   ``parameter`` (null: no intervention)
``ground_truth.<uuid>.intervention_time``   ``t_int`` (s)
``ground_truth.<uuid>.new_value``           ``new_value``
``ground_truth.<uuid>.initial_parameters``  ``theta_<name>`` (baseline parameters)
``ground_truth.<uuid>.initial_state``       ``x0_<name>`` (optional)
``ground_truth.<uuid>.configuration``       ``config_id`` (optional; else samples with equal
                                            initial state and parameters share one)
``ground_truth.<uuid>.impact_times``        ``Trajectory.events`` (optional, written by us;
                                            else :meth:`Simulator.events_from_clean`)
``questions.<slug>``                        condition: ``noise``, ``submission``,
                                            ``context``, ``examples_per_class``, ``n_test``
==========================================  =============================================

``sample_manifest.json``: ``{slug: [{"seed": s, "test": [[uuid, noise seed], ...], "train":
[...], "heldout": [...]}, ...]}`` -- lists in episode order.  ``dataframes/<uuid>.parquet``:
float64 columns named after the simulator's channels (``Position``, ...) plus ``time``, or
``col1..colC`` plus ``col{C+1}`` (time last).

The observation noise of the release is not public: episodes on a released pool add *our*
observation model with the manifest's noise seeds, and say so in the run's parameters.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness import NO_CHANGE, Configuration, Intervention, Simulator, SimulatedTrajectory as Trajectory
from tsagent_plugins.tasks.tracebench._split import Split
from tsagent_plugins.tasks.tracebench._store import PoolCacheError, normalize_recipes
from tsagent_plugins.tasks.tracebench.files import noise_seed
from tsagent_plugins.tasks.tracebench.conditions import PAPER_CONDITIONS

QUESTIONS, MANIFEST, RECORD, FRAMES = "questions.json", "sample_manifest.json", "model_record.json", "dataframes"
NOISE_NOTE = ("clean samples and assignments from the released dataset; observation noise from this "
              "harness's model (the released noise code is not public)")


# ------------------------------------------------------------------ writing
def write_released(pool, out: Path, rep_seeds: Iterable[int] = (0,), n_test: int = 10, n_support_per_class: int = 3,
                   heldout_per_class: int = 142, pool_seed: int | None = None) -> Path:
    """Write ``pool`` (a :class:`tsagent_plugins.tasks.tracebench.pool.Pool`) in the released layout.

    Every paper condition gets, per repetition seed, the split and noise seeds a run on the
    pool itself with these batch sizes would use (so an episode on the written copy equals one
    on the pool).  ``heldout_per_class`` is lowered to the largest size every split can
    serve (the pool's ValueError when even 0 fails); a run
    reproducing the written episodes uses the recorded ``heldout_per_class``.  Returns ``out``.
    """
    sim: Simulator = pool.simulator
    out = Path(out)
    (out / FRAMES).mkdir(parents=True, exist_ok=True)
    meta = json.loads((Path(pool.path) / "meta.json").read_text())
    seed = int(meta["pool_seed"] if pool_seed is None else pool_seed)
    per_class = int(pool.recipes["label"].value_counts().min())
    k = len(sim.labels)
    label_of = {p.name: p.label for p in sim.parameters}
    truth = {}
    for sid, row in pool.recipes.iterrows():
        clean = pool.clean(sid)
        _write_frame(out / FRAMES / f"{sid}.parquet", sim, clean)
        truth[sid] = {
            "label": row["label"], "changed_parameter": row["parameter"],
            "intervention_time": None if row["parameter"] is None else float(row["t_int"]),
            "new_value": None if row["parameter"] is None else float(row["new_value"]),
            "initial_parameters": {p.name: float(row[f"theta_{p.name}"]) for p in sim.parameters},
            "initial_state": {v.name: float(row[f"x0_{v.name}"]) for v in sim.state_variables},
            "configuration": int(row["config_id"]),
            "impact_times": [float(t) for t in clean.events],
        }
    questions, manifest = {}, {}
    # the held-out size a run with ``heldout_per_class`` uses (it shapes the support draw too),
    # lowered to the largest one every repetition's split can serve
    held = max(0, min(heldout_per_class, per_class - n_support_per_class - math.ceil(n_test / k)))
    while True:
        try:
            for rep in rep_seeds:
                pool.split(int(rep), n_test, n_support_per_class, held)
            break
        except ValueError:
            if held == 0:
                raise
            held -= 1
    for slug, (noise, submission, context, examples) in PAPER_CONDITIONS.items():
        n_sup = n_support_per_class if examples else 0
        questions[slug] = {"noise": noise, "submission": submission, "context": context,
                           "examples_per_class": n_sup, "n_test": n_test,
                           "heldout_per_class": held if submission == "programmatic" else 0}
        reps = []
        for rep in rep_seeds:
            split = pool.split(int(rep), n_test, n_sup, held)
            entry = {"seed": int(rep)}
            for name, ids in (("test", split.test), ("train", split.support),
                              ("heldout", split.heldout if submission == "programmatic" else [])):
                entry[name] = [[sid, noise_seed(seed, int(rep))] for sid in ids]
            reps.append(entry)
        manifest[slug] = reps
    doc = {"simulator": sim.name, "labels": list(sim.labels),
           "label_mapping": label_of | {"none": NO_CHANGE}, "questions": questions, "ground_truth": truth}
    (out / QUESTIONS).write_text(json.dumps(doc, indent=1))
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1))
    record = {"simulator": sim.name, "version": str(sim.version), "pool_seed": seed, "per_class": per_class,
              "horizon": sim.horizon, "dt": sim.dt, "channels": [c.name for c in sim.channels],
              "generator": "tsagent-harness", "noise": "not included: clean signals only"}
    (out / RECORD).write_text(json.dumps(record, indent=1))
    return out


def _write_frame(path: Path, sim: Simulator, clean: Trajectory) -> None:
    values = np.asarray(clean.values, dtype=np.float64)
    cols = {ch.name: values[:, i] for i, ch in enumerate(sim.channels)} | {"time": np.asarray(clean.time, np.float64)}
    table = pa.table({k: pa.array(v, type=pa.float64()) for k, v in cols.items()})
    pq.write_table(table.replace_schema_metadata(None), path)


# ------------------------------------------------------------------ reading
def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except OSError as exc:
        raise PoolCacheError(f"{path}: cannot read released file ({exc})") from exc
    except ValueError as exc:
        raise PoolCacheError(f"{path}: not valid JSON ({exc})") from exc


def _field(doc: dict, key: str, where: str):
    if not isinstance(doc, dict) or key not in doc:
        raise PoolCacheError(f"{where}: field {key!r} missing")
    return doc[key]


class ReleasedPool:
    """A pool read from the released layout; the interface of :class:`..pool.Pool` that the
    template uses (``simulator``, ``recipes``, ``configs``, ``path``, ``clean``, ``config``,
    ``intervention``, ``split``, ``noise_seed``, ``stats``), plus ``conditions``.

    ``split`` and ``noise_seed`` come from the manifest of one condition slug (``condition``,
    or the slug passed to :meth:`split`).  Raises :class:`PoolCacheError` naming the file and
    field for anything missing or inconsistent.
    """

    def __init__(self, simulator: Simulator, path: Path):
        self.simulator = sim = simulator
        self.path = path = Path(path)
        qfile = path / QUESTIONS
        doc = _read_json(qfile)
        self.conditions: dict = _field(doc, "questions", str(qfile))
        self._manifest = _read_json(path / MANIFEST)
        mapping = _field(doc, "label_mapping", str(qfile))
        truth = _field(doc, "ground_truth", str(qfile))
        if doc.get("simulator", sim.name) != sim.name:
            raise PoolCacheError(f"{qfile}: field 'simulator' is {doc.get('simulator')!r}, expected {sim.name!r}")
        known = {p.name for p in sim.parameters}
        label_of = {p.name: p.label for p in sim.parameters}
        rows = []
        for sid, g in truth.items():
            where = f"{qfile}: ground_truth[{sid!r}]"
            par = g.get("changed_parameter")
            if par is not None and par not in known:
                raise PoolCacheError(f"{where}: field 'changed_parameter' {par!r} is not a {sim.name} parameter")
            given = g.get("label") or (mapping.get(par) if par else NO_CHANGE)
            # a parameter's class is ours whatever display string the release gave it ("weight of the mass")
            label = label_of[par] if par is not None else given
            if par is not None and given not in (label, mapping.get(par)):
                raise PoolCacheError(f"{where}: field 'label' {given!r} is neither {label!r} nor "
                                     f"label_mapping[{par!r}]")
            if label not in sim.labels:
                raise PoolCacheError(f"{where}: field 'label' {label!r} is not one of {sim.labels}")
            theta = _field(g, "initial_parameters", where)
            x0 = g.get("initial_state", {})
            row = {"sample_id": sid, "label": label, "parameter": par, "draw": 0 if par else -1,
                   "t_int": float(g["intervention_time"]) if par else np.nan,
                   "new_value": float(g["new_value"]) if par else np.nan,
                   "old_value": float(theta[par]) if par else np.nan}
            for p in sim.parameters:
                row[f"theta_{p.name}"] = float(_field(theta, p.name, f"{where}.initial_parameters"))
            for v in sim.state_variables:
                row[f"x0_{v.name}"] = float(x0.get(v.name, np.nan))
            row["config_id"] = int(g["configuration"]) if "configuration" in g else _config_hash(theta, x0)
            rows.append(row)
        if not rows:
            raise PoolCacheError(f"{qfile}: field 'ground_truth' is empty")
        self.recipes = normalize_recipes(pd.DataFrame(rows).set_index("sample_id"))
        self._truth = truth
        cfg_cols = ["config_id"] + [c for c in self.recipes.columns if c.startswith(("x0_", "theta_"))]
        self.configs = self.recipes[cfg_cols].drop_duplicates("config_id").reset_index(drop=True)
        self._cache: dict[str, Trajectory] = {}

    def __len__(self) -> int:
        return len(self.recipes)

    def stats(self) -> dict:
        return {"released": True, "samples": len(self), "from_cache": True}

    def _check(self, sample_id: str) -> None:
        if sample_id not in self._truth:
            raise KeyError(f"no sample {sample_id!r} in released pool {self.path}")

    def clean(self, sample_id: str) -> Trajectory:
        """The clean trajectory of ``sample_id`` from ``dataframes/<uuid>.parquet`` (a copy)."""
        self._check(sample_id)
        if sample_id not in self._cache:
            self._cache[sample_id] = self._read_frame(sample_id)
        t = self._cache[sample_id]
        return Trajectory(t.time.copy(), t.values.copy(), t.events.copy())

    def _read_frame(self, sid: str) -> Trajectory:
        file = self.path / FRAMES / f"{sid}.parquet"
        try:
            tab = pq.read_table(file)
        except Exception as exc:  # noqa: BLE001 - any parquet failure names the file
            raise PoolCacheError(f"{file}: unreadable ({exc})") from exc
        names = [c.name for c in self.simulator.channels]
        n = len(names)
        if all(c in tab.column_names for c in names) and "time" in tab.column_names:
            cols, tcol = names, "time"
        elif all(f"col{i}" in tab.column_names for i in range(1, n + 2)):
            cols, tcol = [f"col{i}" for i in range(1, n + 1)], f"col{n + 1}"
        else:
            raise PoolCacheError(f"{file}: fields {names + ['time']} (or col1..col{n + 1}) missing; "
                                 f"found {tab.column_names}")
        values = np.column_stack([tab.column(c).to_numpy().astype(np.float64) for c in cols])
        time = tab.column(tcol).to_numpy().astype(np.float64)
        ev = self._truth[sid].get("impact_times")
        events = np.asarray(ev, dtype=float) if ev is not None else np.asarray(
            self.simulator.events_from_clean(time, values), dtype=float)
        return Trajectory(time, values, events)

    def paired_clean(self, sample_id: str) -> Trajectory:
        """The clean no-intervention run of ``sample_id``'s configuration: a released
        no-intervention sample of the same configuration, else simulated by our simulator from
        the released initial state and parameters (ValueError when the state is absent)."""
        self._check(sample_id)
        cfg = self.recipes.loc[sample_id, "config_id"]
        ni = self.recipes.index[(self.recipes["config_id"] == cfg) & self.recipes["parameter"].isna()]
        if len(ni):
            return self.clean(str(ni[0]))
        return self.simulator.simulate(self.config(sample_id), None)

    def config(self, sample_id: str) -> Configuration:
        self._check(sample_id)
        row = self.recipes.loc[sample_id]
        return Configuration({v.name: float(row[f"x0_{v.name}"]) for v in self.simulator.state_variables},
                             {p.name: float(row[f"theta_{p.name}"]) for p in self.simulator.parameters})

    def intervention(self, sample_id: str) -> Intervention | None:
        self._check(sample_id)
        row = self.recipes.loc[sample_id]
        if row["parameter"] is None:
            return None
        return Intervention(str(row["parameter"]), float(row["t_int"]), float(row["new_value"]))

    def _repetition(self, condition: str, rep_seed: int) -> dict:
        where = f"{self.path / MANIFEST}"
        reps = _field(self._manifest, condition, where)
        for entry in reps:
            if int(_field(entry, "seed", f"{where}[{condition!r}]")) == int(rep_seed):
                return entry
        raise PoolCacheError(f"{where}: field {condition!r} has no repetition with seed {rep_seed} "
                             f"(seeds: {[e.get('seed') for e in reps]})")

    def split(self, rep_seed: int, n_test: int, n_support_per_class: int, n_heldout_per_class: int = 142,
              condition: str | None = None) -> Split:
        """The manifest's assignment for ``condition`` and repetition ``rep_seed``.

        Raises ValueError when the manifest's batch sizes differ from the requested ones."""
        if condition is None:
            raise ValueError(f"released pool {self.path}: name the condition slug (one of {sorted(self._manifest)})")
        entry = self._repetition(condition, rep_seed)
        where = f"{self.path / MANIFEST}[{condition!r}] seed {rep_seed}"
        ids = {}
        for name in ("test", "train", "heldout"):
            ids[name] = [str(x[0]) for x in entry.get(name, [])]
            for sid in ids[name]:
                if sid not in self._truth:
                    raise PoolCacheError(f"{where}: field {name!r} names sample {sid!r}, absent from {QUESTIONS}")
        k = len(self.simulator.labels)
        if len(ids["test"]) != n_test or len(ids["train"]) != n_support_per_class * k:
            raise ValueError(f"{where}: {len(ids['test'])} test and {len(ids['train'])} train samples, but the task "
                             f"asks for n_test={n_test} and {n_support_per_class} examples per class")
        if n_heldout_per_class and len(ids["heldout"]) < n_heldout_per_class * k:
            raise ValueError(f"{where}: {len(ids['heldout'])} held-out samples, fewer than "
                             f"{n_heldout_per_class} per class")
        self._seeds = {(condition, int(rep_seed), str(x[0])): int(x[1])
                       for name in ("test", "train", "heldout") for x in entry.get(name, [])}
        return Split(test=ids["test"], support=ids["train"], heldout=ids["heldout"][: n_heldout_per_class * k])

    def noise_seed(self, sample_id: str, rep_seed: int, condition: str | None = None) -> int:
        """The manifest's noise seed of ``sample_id`` (after :meth:`split` of that condition)."""
        for (cond, rep, sid), s in getattr(self, "_seeds", {}).items():
            if sid == sample_id and rep == int(rep_seed) and condition in (None, cond):
                return s
        raise KeyError(f"released pool {self.path}: no noise seed for sample {sample_id!r} (call split first)")


def _config_hash(theta: dict, x0: dict) -> int:
    text = json.dumps([sorted(theta.items()), sorted(x0.items())])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:6], "big")


def load_released(simulator: Simulator, path: Path) -> ReleasedPool:
    """Open a released-layout directory for ``simulator``; PoolCacheError names a bad file/field."""
    path = Path(path)
    for name in (QUESTIONS, MANIFEST):
        if not (path / name).exists():
            raise PoolCacheError(f"{path}: {name} missing (not a released TraceBench directory)")
    return ReleasedPool(simulator, path)

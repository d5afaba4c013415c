"""The ``tracebench`` task template (TraceBench Sections 3.1-3.2, 4.2, 4.5; Appendix H).

One TaskSpec picks a setting on each of the four task axes: domain context,
observation noise (``kappa_ref`` or ``kappa_high = 4 kappa_ref``), labeled
examples per class (the support batch) and submission mode.  Each spec with
a repetition ``seed`` is one episode: a test batch of ``n_test`` samples (class
counts differ by at most one), an optional labeled support batch, and for
programmatic submission a held-out batch (``heldout_per_class`` per class,
142 in the paper) that only the scorer sees.

Workspace (mounted into the agent's sandbox)::

    test_samples/<12 hex>.parquet     unlabeled test batch
    train_samples/<12 hex>.parquet    support batch (examples_per_class > 0)
    train_labels.json                 {file name: label as shown}

Answer key (``key_dir``, never mounted)::

    key.json              settings, labels as shown, label mapping, and per file
                          (test / support / heldout): sample id, label, noise seed
    recipes.json          the pool recipes of the test and support samples
    test_samples/         pristine copies of the test files (programmatic submission only: rule.py is
                          run on these; direct answers are scored from key.json alone)
    heldout_samples/      noisy held-out files (programmatic submission only)

Privileged inputs (only for agents that declare ``privileged_inputs``: the
privileged classical baselines of Appendix E; :meth:`TracebenchTemplate.write_privileged`)::

    clean_pairs/test_samples/<name>.parquet    clean no-intervention trajectory of the
    clean_pairs/train_samples/<name>.parquet   same initial configuration, same grid, no noise

Every sample file is kept by reference once the episode has run (``harness.inputs``; :mod:`.inputs`):
the files the agent left unchanged leave the episode folder and are rebuilt, one at a time, when read.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from harness import AgentTaskTemplate, EpisodeScore, Materialized, Simulator, SubmissionRunner, lazy_module
from tsagent_plugins.tasks.tracebench.columns import RESULT_COLUMNS
from tsagent_plugins.tasks.tracebench.conditions import PAPER_CONDITIONS, paper_slug  # noqa: F401 - API
from tsagent_plugins.tasks.tracebench.noise import kappa as noise_kappa
from tsagent_plugins.tasks.tracebench.prompts import build_prompt, column_names, shown_labels
from tsagent_plugins.tasks.tracebench.scoring import score_episode, submission_problem

if TYPE_CHECKING:
    import numpy as np

    from tsagent_plugins.tasks.tracebench import files as sample_files
    from tsagent_plugins.tasks.tracebench.params import TracebenchParams
else:  # the sample files (hashlib) load with the first episode written
    np = lazy_module("numpy")
    sample_files = lazy_module("tsagent_plugins.tasks.tracebench.files")

KEY_FILE = "key.json"
RECIPES_FILE = "recipes.json"

Progress = Callable[[int, int], None]
PoolLoader = Callable[[Simulator, int, int, "Progress | None"], Any]
"""``(simulator, pool_seed, per_class, progress) -> Pool`` (see ``tsagent_plugins.tasks.tracebench.pool``)."""


def read_key(key_dir: Path | str) -> dict:
    """An episode's answer key (``key_dir/key.json``, written by :meth:`TracebenchTemplate.materialize`): the
    one reader of it.  A missing or malformed key raises (OSError, ValueError): an infrastructure fault."""
    return json.loads((Path(key_dir) / KEY_FILE).read_text())


_pool_cache: dict[tuple, Any] = {}


def default_pool_loader(simulator: Simulator, pool_seed: int, per_class: int, progress: Progress | None = None) -> Any:
    """Load (generating and caching on disk on first use) the filtered sample pool; memoised per process.

    ``progress(done, total)`` is called while a pool is generated.
    """
    from tsagent_plugins.tasks.tracebench.pool import load_pool

    key = (simulator.name, getattr(simulator, "version", ""), pool_seed, per_class)
    if key not in _pool_cache:
        _pool_cache[key] = load_pool(simulator, pool_seed=pool_seed, per_class=per_class, progress=progress)
    return _pool_cache[key]


def default_simulator(name: str) -> Simulator:
    from harness import get_plugin as get

    return get("simulator", name)



def recipe_rows(recipes: Any, ids: list[str]) -> dict[str, dict]:
    """The pool recipes of ``ids`` as ``{sample_id: {column: value}}`` (the values ``recipes.loc[sample_id]``
    gives), taken from the frame in one ``.loc``: one per sample cost 0.25 ms, 13 ms for a direct episode.
    KeyError for an id the pool lacks."""
    frame = recipes.loc[list(dict.fromkeys(ids))]
    columns = list(frame.columns)
    return {str(sid): dict(zip(columns, row))
            for sid, row in zip(frame.index, frame.itertuples(index=False, name=None))}


class TracebenchTemplate(AgentTaskTemplate):
    """TraceBench root-cause attribution episodes over a simulator's sample pool.

    ``pool_loader`` and ``simulator_lookup`` default to the pool module and the
    plugin registry; tests pass small fakes.
    """

    name = "tracebench"
    scorer_version = "1"  # :mod:`.scoring`'s: bumped with any change of a score (tests/plugins/test_tasks_versions.py)
    privileged_inputs = True
    result_columns = RESULT_COLUMNS
    summary_columns = {"accuracy": "acc", "shortlist": "short", "heldout_accuracy": "held-out acc",
                       "n_invalid": "invalid"}
    @property
    def params_model(self) -> type[TracebenchParams]:  # type: ignore[override]  # pydantic: imported on first use
        from tsagent_plugins.tasks.tracebench.params import TracebenchParams

        return TracebenchParams

    @property
    def paired_design(self):  # type: ignore[override]  # read from report/ on first use: listing plugins loads no pandas
        from tsagent_plugins.tasks.tracebench.report.design import PAIRED_DESIGN

        return PAIRED_DESIGN

    def __init__(self, pool_loader: PoolLoader | None = None,
                 simulator_lookup: Callable[[str], Simulator] | None = None):
        self._load_pool = pool_loader or default_pool_loader
        self._simulator = simulator_lookup or default_simulator

    def usage_estimate(self, params: TracebenchParams, profile: Any) -> dict[str, Any] | None:
        """The paper's reported model usage (:mod:`tsagent_plugins.tasks.tracebench.usage`)."""
        from tsagent_plugins.tasks.tracebench.usage import usage_estimate

        return usage_estimate(params, profile)

    def episodes(self, params: TracebenchParams) -> list[str]:
        """One episode per params (``"0"``); repetitions vary ``params.seed``."""
        return ["0"]

    def episode_label(self, task_name: str, params: TracebenchParams, episode: str) -> str:
        """The episode folder's name, from the settings the episode ran with rather than the spec's name, so
        an override (``--set noise=high``) or an experiment grid point shows in it:
        ``<simulator>-<noise>-<submission>[-noexamples|-k<examples_per_class>][-nocontext][-n<n_test>]
        [-pool<pool_seed>][-released]-seed<seed>``; the paper's values (3 examples, 10 test samples, pool
        seed 0, a generated pool) add nothing, so a shipped spec's episodes keep its name
        (``balldrop-high-direct-noexamples-seed0``).  ``heldout_per_class`` and ``pool_per_class`` are
        in the results row and the episode id only."""
        parts = [params.simulator, params.noise, params.submission]
        if params.examples_per_class != 3:
            parts.append("noexamples" if params.examples_per_class == 0 else f"k{params.examples_per_class}")
        if not params.context:
            parts.append("nocontext")
        if params.n_test != 10:
            parts.append(f"n{params.n_test}")
        if params.pool_seed != 0:
            parts.append(f"pool{params.pool_seed}")
        if params.pool is not None:
            parts.append("released")
        return "-".join(parts + [f"seed{params.seed}"])

    def default_agent(self, params: TracebenchParams) -> str:
        """``harness run --task`` without ``--agent`` runs the Euclidean 1-NN baseline (Appendix E): no
        model, no API key, so a first run of a shipped spec works offline."""
        return "euclidean-1nn"

    def summary_notes(self, rows: list[dict[str, Any]]) -> list[str]:
        """The chance level of top-1 accuracy for each simulator of ``rows``: 1 / its number of classes
        (its parameter labels and no change)."""
        sims = sorted({str(r["simulator"]) for r in rows if r.get("simulator")})
        if not sims:
            return []
        counts = {sim: len(self._simulator(sim).labels) for sim in sims}
        mean = sum(1 / n for n in counts.values()) / len(counts)  # Table 1's "random-chance accuracy is 0.189"
        return ["chance accuracy (1 / classes): " + ", ".join(f"{sim} {1 / n:.3f} ({n} classes)"
                                                               for sim, n in counts.items())
                + (f"; mean over simulators {mean:.3f}" if len(counts) > 1 else "")]

    def prepare(self, params: TracebenchParams, progress: Callable[[int, int, str], None]) -> None:
        """Build (or load) the sample pool and check it can serve this episode's batches.

        Raises the pool's ValueError when it is too small for the requested batches.
        """
        sim = self._simulator(params.simulator)
        text = f"{sim.name} sample pool (pool seed {params.pool_seed})"
        pool = self._pool(sim, params, lambda done, total: progress(done, total, text))
        self._split(pool, params)

    def _pool(self, sim: Simulator, params: TracebenchParams, progress: Progress | None = None) -> Any:
        """The generated pool, or the released one when ``params.pool`` is set."""
        if params.pool is not None:
            from tsagent_plugins.tasks.tracebench.released import load_released  # numpy, pandas, pyarrow: on use

            key = ("released", sim.name, str(Path(params.pool.path).resolve()))
            if key not in _pool_cache:
                _pool_cache[key] = load_released(sim, Path(params.pool.path))
            return _pool_cache[key]
        return self._load_pool(sim, params.pool_seed, self.pool_per_class(params, len(sim.labels)), progress)

    @staticmethod
    def _split(pool, params: TracebenchParams):
        if params.pool is not None:
            slug = params.pool.condition or paper_slug(params.noise, params.submission, params.context,
                                                       params.examples_per_class)
            if slug is None:
                raise ValueError(f"no released condition for submission={params.submission}, noise={params.noise}, "
                                 f"context={params.context}, examples_per_class={params.examples_per_class}; name "
                                 "one with pool.condition")
            return pool.split(params.seed, params.n_test, params.examples_per_class,
                              params.heldout_per_class if params.submission == "programmatic" else 0,
                              condition=slug)
        return pool.split(params.seed, params.n_test, params.examples_per_class, params.heldout_per_class)

    def pool_per_class(self, params: TracebenchParams, n_classes: int) -> int:
        """Pool size per class: ``params.pool_per_class`` (default 160), or more when the batches need it."""
        from tsagent_plugins.tasks.tracebench.params import DEFAULT_POOL_PER_CLASS, needed_per_class

        return max(params.pool_per_class or DEFAULT_POOL_PER_CLASS, needed_per_class(params, n_classes))

    def materialize(self, params: TracebenchParams, episode: str, workspace: Path, key_dir: Path) -> Materialized:
        """Write the test (and support) batch to ``workspace`` and the answer key to ``key_dir``.

        Returns the Appendix H prompt and ``task_info`` = ``{"submission",
        "labels" (as shown), "examples_per_class", "columns" (Parquet column
        names, time last), "impulse_columns" (impulse channels' columns; empty
        without domain context)}``.  Raises ValueError for an
        episode id not from :meth:`episodes`, FileExistsError when the workspace
        already holds a test batch, and the pool's ValueError when it is too small.
        """
        if episode not in self.episodes(params):
            raise ValueError(f"unknown episode {episode!r} for these params (expected {self.episodes(params)})")
        workspace, key_dir = Path(workspace), Path(key_dir)
        if (workspace / "test_samples").exists():
            raise FileExistsError(f"{workspace / 'test_samples'} already exists: materialize into a fresh workspace")
        sim = self._simulator(params.simulator)
        labels = shown_labels(sim, params.context)
        as_shown = dict(zip(sim.labels, labels))
        pool = self._pool(sim, params)
        split = self._split(pool, params)
        kappa = noise_kappa(sim, params.noise)

        names_seed = sample_files.derive_seed("tracebench-names", sim.name, params.pool_seed, params.seed)
        rng = np.random.default_rng(names_seed)
        taken: set[str] = set()
        heldout_ids = list(split.heldout) if params.submission == "programmatic" else []
        groups = {
            # the pristine copies a programmatic submission is run on; direct answers are scored from key.json
            "test": (list(split.test), [workspace / "test_samples"]
                     + ([key_dir / "test_samples"] if params.submission == "programmatic" else [])),
            "support": (list(split.support) if params.examples_per_class > 0 else [], [workspace / "train_samples"]),
            "heldout": (heldout_ids, [key_dir / "heldout_samples"]),
        }
        key: dict[str, Any] = {
            "simulator": sim.name, "simulator_version": getattr(sim, "version", ""),
            "noise": params.noise, "kappa": float(kappa), "context": params.context,
            "examples_per_class": params.examples_per_class, "submission": params.submission,
            "seed": params.seed, "pool_seed": params.pool_seed,
            "labels": labels, "label_mapping": {shown: cls for cls, shown in as_shown.items()},
        }
        if params.pool is not None:
            key["released_pool"] = params.pool.model_dump(mode="json")
        rows = recipe_rows(pool.recipes, [sid for ids, _ in groups.values() for sid in ids])
        for group, (ids, folders) in groups.items():
            key[group] = self._write_group(pool, rows, sim, params, ids, folders, rng, taken, kappa, as_shown)

        if key["support"]:
            (workspace / "train_labels.json").write_text(
                json.dumps({f: v["label"] for f, v in sorted(key["support"].items())}, indent=2))
        key_dir.mkdir(parents=True, exist_ok=True)
        (key_dir / KEY_FILE).write_text(json.dumps(key, separators=(",", ":")))  # 700+ held-out entries: compact
        self._write_recipes(rows, key, key_dir / RECIPES_FILE)

        prompt = build_prompt(sim, context=params.context, submission=params.submission,
                              examples=params.examples_per_class > 0)
        columns = column_names(len(sim.channels))
        impulse = [col for col, ch in zip(columns, sim.channels) if ch.impulse] if params.context else []
        info = {"submission": params.submission, "labels": labels, "examples_per_class": params.examples_per_class,
                "columns": columns, "impulse_columns": impulse}
        return Materialized(prompt=prompt, task_info=info)

    def write_privileged(self, params: TracebenchParams, episode: str, workspace: Path, key_dir: Path) -> None:
        """Write the clean paired no-intervention trajectory of every test and support sample
        (Appendix E's privileged input) to ``workspace/clean_pairs/{test,train}_samples/<same name>``.

        The pair is ``simulate(config)`` without intervention: the sample's own clean
        trajectory for a no-intervention sample.  Raises ValueError when a pair's time
        grid differs from its sample's.
        """
        key = read_key(key_dir)
        sim = self._simulator(params.simulator)
        pool = self._load_pool(sim, params.pool_seed, self.pool_per_class(params, len(sim.labels)), None)
        for group, folder in (("test", "test_samples"), ("support", "train_samples")):
            out = Path(workspace) / "clean_pairs" / folder
            for name, truth in key[group].items():
                sample = pool.clean(truth["sample_id"])
                pair = sample if pool.intervention(truth["sample_id"]) is None else sim.simulate(
                    pool.config(truth["sample_id"]), None)
                if np.shape(pair.values) != np.shape(sample.values) or not np.allclose(pair.time, sample.time):
                    raise ValueError(f"{sim.name}: clean pair of sample {truth['sample_id']} has another time grid")
                out.mkdir(parents=True, exist_ok=True)
                sample_files.write_sample(out / name, pair.time, np.asarray(pair.values, dtype=np.float64))

    @staticmethod
    def _write_group(pool, rows: dict[str, dict], sim: Simulator, params: TracebenchParams, ids: list[str],
                     folders: list[Path], rng: np.random.Generator, taken: set[str], kappa: float, as_shown: dict[str, str]) -> dict:
        """Write one batch under opaque names, in shuffled order, as private files of the episode (never links
        into a shared store: :mod:`.inputs` says why); returns {file: truth}."""
        names = sample_files.opaque_names(rng, len(ids), taken)
        order = rng.permutation(len(ids))
        entries: dict[str, dict] = {}
        for folder in folders if ids else []:
            folder.mkdir(parents=True, exist_ok=True)
        for i in order:
            sample_id, name = ids[i], names[i]
            class_label = str(rows[sample_id]["label"])
            if class_label not in as_shown:
                raise ValueError(f"pool sample {sample_id!r} has label {class_label!r}, not one of {list(as_shown)}")
            if params.noise_seeds == "sample":
                seed = sample_files.sample_noise_seed(params.pool_seed, sample_id, params.seed)
            else:
                seed = (pool.noise_seed(sample_id, params.seed) if hasattr(pool, "noise_seed")
                        else sample_files.noise_seed(params.pool_seed, params.seed))
            clean = pool.clean(sample_id)
            noisy = np.asarray(sim.observe(clean, kappa, seed), dtype=np.float64)
            if noisy.shape != np.shape(clean.values):
                raise ValueError(f"{sim.name}.observe returned shape {noisy.shape}, expected {np.shape(clean.values)}")
            sample_files.write_sample(folders[0] / name, clean.time, noisy)
            for copy in folders[1:]:
                shutil.copyfile(folders[0] / name, copy / name)
            entries[name] = {"sample_id": str(sample_id), "label": as_shown[class_label],
                             "class_label": class_label, "noise_seed": seed}
        return dict(sorted(entries.items()))

    @staticmethod
    def _write_recipes(recipes: dict[str, dict], key: dict, path: Path) -> None:
        """The pool recipes of the test and support samples (the held-out samples' are the pool's, under the
        sample ids ``key.json`` gives: written here they were 95% of an episode's key)."""
        from tsagent_plugins.tasks.tracebench.inputs import exact

        rows = []
        for group in ("test", "support"):
            for file, truth in key[group].items():
                recipe = {k: exact(v) for k, v in recipes[truth["sample_id"]].items()}  # floats whole
                rows.append({"split": group, "file": file, "sample_id": truth["sample_id"], **recipe,
                             "exact_floats": True})
        path.write_text(json.dumps(rows, indent=2))

    def input_references(self, params: TracebenchParams, episode: str, root: Path) -> dict[str, dict]:
        """Every sample file of the episode in folder ``root`` (test, support, held-out, clean pairs) with the
        recipe it is rebuilt from, one sample at a time (:func:`.inputs.references`)."""
        from tsagent_plugins.tasks.tracebench import inputs

        key = read_key(Path(root) / "key")
        # the held-out samples' recipes are the pool's (in memory once the episode was materialized)
        recipes = inputs.recipes_of(key, Path(root) / "key",
                                    lambda: self._pool(self._simulator(params.simulator), params).recipes)
        return inputs.references(key, recipes, Path(root))

    def rebuild_input(self, params: TracebenchParams, episode: str, reference: dict, dest: Path) -> None:
        """One sample file, drawn again, simulated and noised, the pool not loaded (:func:`.inputs.rebuild`)."""
        from tsagent_plugins.tasks.tracebench.inputs import rebuild

        rebuild(self._simulator(str(reference.get("simulator") or params.simulator)), reference, dest)

    def input_values_digest(self, path: Path) -> str:
        """sha256 over a sample file's column names and float64 values (:func:`.inputs.values_digest`)."""
        return sample_files.values_digest(path)

    def inputs_digest(self, params: TracebenchParams, episode: str, key_dir: Path | None) -> str | None:
        """:func:`~tsagent_plugins.tasks.tracebench.files.key_digest` of the episode's answer key (None without)."""
        found = key_dir is not None and (Path(key_dir) / KEY_FILE).is_file()
        return sample_files.key_digest(read_key(key_dir)) if found else None

    def score(self, params: TracebenchParams, episode: str, workspace: Path, key_dir: Path,
              run_submission: SubmissionRunner) -> EpisodeScore:
        """Top-1 accuracy and shortlist score of the episode (see :mod:`.scoring`).

        Metrics: ``accuracy``, ``shortlist``, ``n_test``, ``n_invalid``; for
        programmatic submission also ``heldout_accuracy``, ``heldout_shortlist``,
        ``heldout_n``, ``heldout_n_invalid``.  Raises only when the answer key is
        missing (an infrastructure fault, not the agent's).
        """
        key = read_key(key_dir)
        return score_episode(Path(workspace), Path(key_dir), key, run_submission)

    def submission_problem(self, params: TracebenchParams, episode: str, score: EpisodeScore) -> str | None:
        """None unless every test prediction is invalid (:func:`.scoring.submission_problem`)."""
        return submission_problem(score)

    def conformance_params(self) -> TracebenchParams | None:
        """The agent kit's episode: BallDrop, low noise, one example per class, two test samples, direct answers,
        no held-out batch, a pool of 8 per class (10 s once, then cached); None without BallDrop."""
        from harness import UnknownPlugin

        try:
            self._simulator("balldrop")
        except UnknownPlugin:
            return None
        return self.params_model(simulator="balldrop", noise="low", context=True, examples_per_class=1,
                                 submission="direct", n_test=2, heldout_per_class=0, pool_per_class=8)


#: names of :mod:`.params` this module exported before the params model moved there (pydantic: on first use)
_PARAMS_NAMES = ("TracebenchParams", "ReleasedPoolRef", "needed_per_class", "DEFAULT_POOL_PER_CLASS",
                 "MAX_POOL_PER_CLASS")


def __getattr__(name: str) -> Any:
    if name in _PARAMS_NAMES:
        from tsagent_plugins.tasks.tracebench import params

        return getattr(params, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

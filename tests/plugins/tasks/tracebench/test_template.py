"""The ``tracebench`` template: params, workspace layout, leakage, matched conditions, specs, scoring."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

import harness.plugins
from tests.support.tracebench_fakes import FakePool, StandInBallDrop, registry_with
from harness.config import ConfigError, TaskSpec, load_task_spec, task_params
from harness.contracts import NO_CHANGE, CallResult
from tsagent_plugins.tasks.tracebench.files import noise_seed
from tsagent_plugins.tasks.tracebench.prompts import build_prompt
from tsagent_plugins.tasks.tracebench.template import DEFAULT_POOL_PER_CLASS, TracebenchParams, TracebenchTemplate
from tests.support.paths import REPO, TESTS

SPECS = REPO / "tasks" / "tracebench"
NAME = re.compile(r"^[0-9a-f]{12}\.parquet$")


@pytest.fixture(autouse=True)
def simulators():
    """Register stand-in simulators named ``toyball`` and ``balldrop`` for params validation."""
    sims = {n: StandInBallDrop(n) for n in ("toyball", "balldrop")}
    old = harness.plugins.reset(registry_with(*sims.values()))
    yield sims
    harness.plugins.reset(old)


@pytest.fixture
def env(simulators):
    pools: dict = {}
    loads: list = []

    def loader(sim, pool_seed, per_class, progress):
        loads.append((sim.name, pool_seed, per_class))
        if progress is not None:
            progress(0, 60)
            progress(60, 60)
        return pools.setdefault((sim.name, pool_seed), FakePool(sim))

    template = TracebenchTemplate(pool_loader=loader, simulator_lookup=simulators.__getitem__)
    return template, pools, loads


def make_params(**kw) -> TracebenchParams:
    base = dict(simulator="toyball", noise="low", context=True, examples_per_class=3, submission="direct",
                n_test=10, seed=0, pool_seed=0, heldout_per_class=2)
    return TracebenchParams.model_validate(base | kw)


def materialize(env, tmp_path: Path, tag: str, **kw):
    template = env[0]
    params = make_params(**kw)
    ws, key_dir = tmp_path / tag / "ws", tmp_path / tag / "key"
    mat = template.materialize(params, template.episodes(params)[0], ws, key_dir)
    key = json.loads((key_dir / "key.json").read_text())
    return mat, ws, key_dir, key


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def all_files(root: Path) -> dict[str, Path]:
    return {str(p.relative_to(root)): p for p in sorted(root.rglob("*")) if p.is_file()}


# -- params ---------------------------------------------------------------------------------------

def test_params_defaults():
    p = TracebenchParams.model_validate({"simulator": "toyball", "noise": "high", "submission": "programmatic"})
    assert (p.context, p.examples_per_class, p.n_test, p.seed, p.pool_seed, p.heldout_per_class) == (True, 3, 10, 0, 0, 142)
    with pytest.raises(Exception):
        p.seed = 3  # frozen


@pytest.mark.parametrize("params, field", [
    ({"nosie": "low"}, "params.nosie: Extra inputs are not permitted"),
    ({"noise": "medium"}, "params.noise: Input should be 'low' or 'high'"),
    ({"submission": "json"}, "params.submission: Input should be 'direct' or 'programmatic'"),
    ({"examples_per_class": -1}, "params.examples_per_class: Input should be greater than or equal to 0"),
    ({"n_test": 0}, "params.n_test: Input should be greater than or equal to 1"),
    ({"context": "maybe"}, "params.context: expected true or false, not a string (got: 'maybe')"),
    ({"simulator": "pendulum"}, "params.simulator: no simulator named 'pendulum' (known: balldrop, toyball)"),
])
def test_malformed_params_name_the_field(tmp_path, params, field):
    body = {"simulator": "toyball", "noise": "low", "submission": "direct"} | params
    spec = TaskSpec(name="x", template="tracebench", params=body)
    with pytest.raises(ConfigError) as err:
        task_params(spec, TracebenchParams, tmp_path / "x.yaml")
    assert str(err.value).startswith(f"{tmp_path / 'x.yaml'}: ")
    assert field in str(err.value)


def test_missing_required_param_is_named(tmp_path):
    spec = TaskSpec(name="x", template="tracebench", params={"simulator": "toyball", "noise": "low"})
    with pytest.raises(ConfigError, match=r"params\.submission: Field required"):
        task_params(spec, TracebenchParams, tmp_path / "x.yaml")


def test_no_context_without_examples_is_rejected(tmp_path):
    spec = TaskSpec(name="x", template="tracebench", params={
        "simulator": "toyball", "noise": "high", "submission": "direct", "context": False, "examples_per_class": 0})
    with pytest.raises(ConfigError) as err:
        task_params(spec, TracebenchParams, tmp_path / "x.yaml")
    text = str(err.value)
    assert "params: context: false with examples_per_class: 0 is not a TraceBench condition" in text
    make_params(context=False, examples_per_class=1)   # any support batch makes it valid
    make_params(context=True, examples_per_class=0)


# -- workspace layout and leakage ------------------------------------------------------------------

def test_workspace_layout_and_parquet_format(env, tmp_path, simulators):
    mat, ws, key_dir, key = materialize(env, tmp_path, "a")
    files = all_files(ws)
    tests = [n for n in files if n.startswith("test_samples/")]
    train = [n for n in files if n.startswith("train_samples/")]
    assert set(files) == set(tests) | set(train) | {"train_labels.json"}
    assert len(tests) == 10 and len(train) == 15
    assert all(NAME.match(Path(n).name) for n in tests + train)
    assert not set(Path(n).name for n in tests) & set(Path(n).name for n in train)

    pool = env[1][("toyball", 0)]
    sim = simulators["toyball"]
    for rel in tests + train:
        path = files[rel]
        pf = pq.ParquetFile(path)
        assert pf.metadata.metadata is None and pf.schema_arrow.metadata is None
        assert pf.schema_arrow.names == ["col1", "col2", "col3", "col4"]
        assert all(str(t) == "double" for t in pf.schema_arrow.types)
        df = pd.read_parquet(path)
        assert isinstance(df.index, pd.RangeIndex) and list(df.columns) == ["col1", "col2", "col3", "col4"]
        truth = key["test" if rel.startswith("test_") else "support"][path.name]
        clean = pool.clean(truth["sample_id"])
        np.testing.assert_array_equal(df["col4"].to_numpy(), clean.time)
        assert np.all(np.diff(df["col4"].to_numpy()) > 0)
        expected = sim.observe(clean, sim.kappa_ref, noise_seed(0, 0))
        np.testing.assert_array_equal(df[["col1", "col2", "col3"]].to_numpy(), expected)
        assert truth["noise_seed"] == noise_seed(0, 0)  # one seed per episode (the reference's question seed)

    labels = json.loads((ws / "train_labels.json").read_text())
    assert set(labels) == {Path(n).name for n in train}
    assert sorted(pd.Series(labels).value_counts().to_dict().items()) == sorted((lab, 3) for lab in sim.labels)
    test_counts = pd.Series([t["label"] for t in key["test"].values()]).value_counts()
    assert test_counts.max() - test_counts.min() <= 1 and len(test_counts) == 5


def test_file_names_are_opaque_and_shuffled(env, tmp_path):
    template, pools, _ = env
    _, ws0, _, key0 = materialize(env, tmp_path, "s0", seed=0)
    _, ws1, _, key1 = materialize(env, tmp_path, "s1", seed=1)
    split = pools[("toyball", 0)].split(0, 10, 3, 2)
    # names sorted (as `ls` shows them) do not follow the pool's split order
    assert [key0["test"][n]["sample_id"] for n in sorted(key0["test"])] != split.test
    assert set(key0["test"]) != set(key1["test"])
    for ws in (ws0, ws1):
        text = " ".join(all_files(ws))
        assert "sid-" not in text and "cfg-" not in text


def test_no_context_workspace_reveals_neither_class_nor_simulator(env, tmp_path, simulators):
    mat, ws, key_dir, key = materialize(env, tmp_path, "nc", context=False, noise="high")
    sim = simulators["toyball"]
    secrets = [sim.name, *sim.labels, *(c.name for c in sim.channels), *(c.description for c in sim.channels),
               "pandas", "ARROW:schema", "sid-", "cfg-"]
    for rel, path in all_files(ws).items():
        blob = path.read_bytes().lower()
        for secret in secrets:
            assert secret.lower().encode() not in blob, (rel, secret)
    labels = json.loads((ws / "train_labels.json").read_text())
    assert set(labels.values()) == {f"label_{i}" for i in range(5)}
    assert mat.task_info == {"submission": "direct", "labels": [f"label_{i}" for i in range(5)], "examples_per_class": 3,
                             "columns": ["col1", "col2", "col3", "col4"], "impulse_columns": []}
    assert key["label_mapping"] == {f"label_{i}": lab for i, lab in enumerate(sim.labels)}
    assert key["label_mapping"]["label_4"] == NO_CHANGE
    for truth in key["test"].values():
        assert key["label_mapping"][truth["label"]] == truth["class_label"]
    for secret in [sim.name, *sim.labels[:-1], "ball"]:
        assert secret not in mat.prompt


def test_answer_key_stays_out_of_the_workspace(env, tmp_path):
    _, ws, key_dir, key = materialize(env, tmp_path, "p", submission="programmatic")
    ws_names = {p.name for p in ws.rglob("*")}
    assert "key.json" not in ws_names and "recipes.json" not in ws_names and not (ws / "heldout_samples").exists()
    heldout = sorted((key_dir / "heldout_samples").iterdir())
    assert len(heldout) == 5 * 2 and [p.name for p in heldout] == sorted(key["heldout"])
    ws_digests = {digest(p) for p in ws.rglob("*.parquet")}
    assert not ws_digests & {digest(p) for p in heldout}
    assert not set(key["heldout"]) & ws_names
    assert not {v["sample_id"] for v in key["heldout"].values()} & {v["sample_id"] for v in key["test"].values()}
    # pristine test copies kept for running rule.py
    for name in key["test"]:
        assert digest(key_dir / "test_samples" / name) == digest(ws / "test_samples" / name)
    recipes = json.loads((key_dir / "recipes.json").read_text())
    assert len(recipes) == 10 + 15  # the held-out samples' recipes are the pool's
    assert {r["split"] for r in recipes} == {"test", "support"}
    assert all(r["label"] == key[r["split"]][r["file"]]["class_label"] for r in recipes)


def test_direct_submission_writes_no_heldout_and_no_key_copies(env, tmp_path):
    _, ws, key_dir, key = materialize(env, tmp_path, "d")
    assert key["heldout"] == {} and not (key_dir / "heldout_samples").exists()
    # direct answers are scored from key.json alone: no pristine copies of the test files
    assert not (key_dir / "test_samples").exists() and len(list((ws / "test_samples").iterdir())) == 10


# -- matched conditions ----------------------------------------------------------------------------

def test_matched_conditions_share_test_samples_and_noise(env, tmp_path):
    variants = {}
    for sub in ("direct", "programmatic"):
        for k in (3, 0):
            variants[(sub, k)] = materialize(env, tmp_path, f"{sub}{k}", noise="high", submission=sub, examples_per_class=k)
    ref_ws, ref_key = variants[("direct", 3)][1], variants[("direct", 3)][3]
    ref = {n: digest(ref_ws / "test_samples" / n) for n in ref_key["test"]}
    for (sub, k), (_, ws, _, key) in variants.items():
        assert {n: digest(ws / "test_samples" / n) for n in key["test"]} == ref, (sub, k)
        assert key["test"] == ref_key["test"]
        assert (ws / "train_samples").exists() is (k > 0)
    # direct and programmatic with examples also share the support batch
    d3, p3 = variants[("direct", 3)], variants[("programmatic", 3)]
    assert (d3[1] / "train_labels.json").read_text() == (p3[1] / "train_labels.json").read_text()


def test_low_and_high_noise_share_seeds_but_differ(env, tmp_path, simulators):
    _, ws_low, _, key_low = materialize(env, tmp_path, "low", noise="low")
    _, ws_high, _, key_high = materialize(env, tmp_path, "high", noise="high")
    assert key_low["test"] == key_high["test"]             # same files, sample ids and noise seeds
    assert (key_low["kappa"], key_high["kappa"]) == (1.0, 4.0)
    pool = env[1][("toyball", 0)]
    for name, truth in key_low["test"].items():
        low = pd.read_parquet(ws_low / "test_samples" / name).to_numpy()
        high = pd.read_parquet(ws_high / "test_samples" / name).to_numpy()
        clean = pool.clean(truth["sample_id"]).values
        assert not np.allclose(low[:, :3], high[:, :3])
        np.testing.assert_allclose(high[:, :3] - clean, 4.0 * (low[:, :3] - clean), rtol=1e-9, atol=1e-12)
        np.testing.assert_array_equal(low[:, 3], high[:, 3])


def test_one_noise_seed_per_episode_shared_by_test_and_support(env, tmp_path):
    """The reference materialises every sample of a question with the question's single seed: test and
    support samples of an episode share one seed, another repetition draws another, and pool-wide SNR
    statistics use a seed per sample."""
    from tsagent_plugins.tasks.tracebench.files import sample_noise_seed

    _, _, _, key0 = materialize(env, tmp_path, "rep0", seed=0)
    _, _, _, key1 = materialize(env, tmp_path, "rep1", seed=1)
    seeds0 = {t["noise_seed"] for group in ("test", "support") for t in key0[group].values()}
    seeds1 = {t["noise_seed"] for group in ("test", "support") for t in key1[group].values()}
    assert seeds0 == {noise_seed(0, 0)} and seeds1 == {noise_seed(0, 1)} and noise_seed(0, 0) != noise_seed(0, 1)
    ids = [t["sample_id"] for t in key0["test"].values()]
    assert len({sample_noise_seed(0, sid) for sid in ids}) == len(ids)


def test_the_other_noise_seed_reading_gives_each_sample_its_own_seed(env, simulators, tmp_path):
    """``noise_seeds: sample`` (the other reading, run beside the kept one by benchmarks/baselines.py): every
    test and support sample is noised with its own seed, the one the SNR statistics use, and its file holds
    that draw; a released pool's manifest fixes the seeds, so it refuses the option."""
    from tsagent_plugins.tasks.tracebench.files import sample_noise_seed

    _, ws, _, key = materialize(env, tmp_path, "per-sample", seed=1, noise_seeds="sample")
    truths = [t for group in ("test", "support") for t in key[group].values()]
    assert [t["noise_seed"] for t in truths] == [sample_noise_seed(0, t["sample_id"], 1) for t in truths]
    assert len({t["noise_seed"] for t in truths}) == len(truths)
    sim, pool = simulators["toyball"], env[1][("toyball", 0)]
    name, truth = next(iter(key["test"].items()))
    clean = pool.clean(truth["sample_id"])
    np.testing.assert_array_equal(pd.read_parquet(ws / "test_samples" / name).to_numpy()[:, :3],
                                  sim.observe(clean, sim.kappa_ref, truth["noise_seed"]))
    assert make_params().noise_seeds == "episode"
    with pytest.raises(ValueError, match="noise_seeds"):
        make_params(noise_seeds="sample", pool={"path": str(tmp_path)})
    with pytest.raises(ValueError):
        make_params(noise_seeds="question")


def test_materialize_is_deterministic(env, tmp_path):
    a = all_files(materialize(env, tmp_path, "x1", submission="programmatic")[1])
    b = all_files(materialize(env, tmp_path, "x2", submission="programmatic")[1])
    assert a.keys() == b.keys() and all(digest(a[k]) == digest(b[k]) for k in a)


# -- prompt, episodes, pool size -----------------------------------------------------------------

def test_prompt_and_task_info(env, tmp_path, simulators):
    mat, *_ = materialize(env, tmp_path, "pr", submission="programmatic", examples_per_class=0)
    assert mat.prompt == build_prompt(simulators["toyball"], context=True, submission="programmatic", examples=False)
    assert mat.task_info == {"submission": "programmatic", "labels": simulators["toyball"].labels, "examples_per_class": 0,
                             "columns": ["col1", "col2", "col3", "col4"], "impulse_columns": ["col3"]}


def test_episodes_and_guards(env, tmp_path):
    template = env[0]
    params = make_params(seed=4)
    assert template.episodes(params) == ["0"]
    with pytest.raises(ValueError, match="unknown episode 'seed4'"):
        template.materialize(params, "seed4", tmp_path / "ws", tmp_path / "key")
    template.materialize(params, "0", tmp_path / "ws", tmp_path / "key")
    with pytest.raises(FileExistsError, match="fresh workspace"):
        template.materialize(params, "0", tmp_path / "ws", tmp_path / "key2")


def test_prepare_builds_the_pool_with_progress_and_checks_its_size(env):
    template, pools, loads = env
    seen = []
    template.prepare(make_params(pool_seed=2), lambda done, total, text: seen.append((done, total, text)))
    assert loads == [("toyball", 2, DEFAULT_POOL_PER_CLASS)] and ("toyball", 2) in pools
    assert seen == [(0, 60, "toyball sample pool (pool seed 2)"), (60, 60, "toyball sample pool (pool seed 2)")]
    with pytest.raises(ValueError, match="pool too small"):
        template.prepare(make_params(heldout_per_class=11), lambda *a: None)   # FakePool has 12 per class


def test_pool_size_per_class(env, tmp_path):
    template, _, loads = env
    materialize(env, tmp_path, "ps", pool_seed=0)
    assert loads == [("toyball", 0, DEFAULT_POOL_PER_CLASS)]
    assert template.pool_per_class(make_params(heldout_per_class=142), 5) == 160
    assert template.pool_per_class(make_params(heldout_per_class=200, n_test=10), 5) == 200 + 3 + 2


# -- scoring through the template ------------------------------------------------------------------

class InProcessRunner:
    """Imports the submitted module and calls ``function`` on each Parquet file (no isolation)."""

    def __init__(self):
        self.inputs: list[Path] = []

    def __call__(self, module, function, inputs):
        spec = importlib.util.spec_from_file_location("submitted_rule", module)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out = []
        for path in inputs:
            self.inputs.append(Path(path))
            try:
                out.append(CallResult(value=getattr(mod, function)(pd.read_parquet(path))))
            except Exception as exc:  # noqa: BLE001
                out.append(CallResult(error=f"{type(exc).__name__}: {exc}"))
        return out


def test_score_direct_answers_from_the_key(env, tmp_path):
    template = env[0]
    params = make_params(context=False)
    mat, ws, key_dir, key = materialize(env, tmp_path, "sd", context=False)
    answers = {name: [t["label"].upper()] for name, t in key["test"].items()}
    first = sorted(answers)[0]
    answers[first] = ["label_0", "label_1", "label_2", "label_3", "label_4"]
    (ws / "results.json").write_text(json.dumps(answers))
    score = template.score(params, "0", ws, key_dir, lambda *a: pytest.fail("no runner in direct mode"))
    correct_first = key["test"][first]["label"] == "label_0"
    assert score.metrics["accuracy"] == pytest.approx((9 + correct_first) / 10)
    assert score.metrics["shortlist"] == pytest.approx((9 + 0.2) / 10)
    assert score.metrics["n_invalid"] == 0 and score.metrics["n_test"] == 10
    assert len(score.details) == 10 and all(d["split"] == "test" for d in score.details)


def test_score_programmatic_runs_rule_on_test_and_heldout(env, tmp_path):
    template = env[0]
    params = make_params(submission="programmatic")
    mat, ws, key_dir, key = materialize(env, tmp_path, "sp", submission="programmatic")
    (ws / "rule.py").write_text("def predict(df):\n    assert list(df.columns) == ['col1', 'col2', 'col3', 'col4']\n"
                                "    return ['MASS ', 'no parameter change']\n")
    for p in (ws / "test_samples").iterdir():   # the agent may tamper with its copies; the key's are used
        p.write_bytes(b"garbage")
    runner = InProcessRunner()
    score = template.score(params, "0", ws, key_dir, runner)
    assert all(p.parent in (key_dir / "test_samples", key_dir / "heldout_samples") for p in runner.inputs)
    n_mass = sum(t["class_label"] == "mass" for t in key["test"].values())
    n_none = sum(t["class_label"] == NO_CHANGE for t in key["test"].values())
    m = score.metrics
    assert m["accuracy"] == pytest.approx(n_mass / 10)
    assert m["shortlist"] == pytest.approx((n_mass + n_none) * 0.5 / 10)
    assert (m["heldout_accuracy"], m["heldout_shortlist"], m["heldout_n"], m["heldout_n_invalid"]) == (0.2, 0.2, 10, 0)


# -- plugin registration and task specs ------------------------------------------------------------

def test_registered_through_the_entry_point():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        registered = harness.plugins.Plugins().registry("task_template")["tracebench"]
    assert isinstance(registered.obj, TracebenchTemplate) and registered.plugin == "tracebench"


# file stem -> (paper condition slug, noise, submission, context, examples per class)
CONDITIONS = {
    "balldrop-low-direct": ("gentle-cloud", "low", "direct", True, 3),
    "balldrop-high-direct": ("gentle-pine", "high", "direct", True, 3),
    "balldrop-low-programmatic": ("gentle-flame", "low", "programmatic", True, 3),
    "balldrop-high-programmatic": ("gentle-orbit", "high", "programmatic", True, 3),
    "balldrop-high-direct-noexamples": ("frost-pine", "high", "direct", True, 0),
    "balldrop-high-programmatic-noexamples": ("frost-orbit", "high", "programmatic", True, 0),
    "balldrop-high-direct-nocontext": ("gentle-harbor", "high", "direct", False, 3),
    "balldrop-high-programmatic-nocontext": ("gentle-tide", "high", "programmatic", False, 3),
}
SLUGS = {"gentle-cloud", "gentle-pine", "gentle-flame", "gentle-orbit", "frost-pine", "frost-orbit",
         "gentle-harbor", "gentle-tide"}


def test_exactly_the_eight_balldrop_specs():
    assert sorted(p.stem for p in SPECS.glob("balldrop-*.yaml")) == sorted(CONDITIONS)


@pytest.mark.parametrize("stem", sorted(CONDITIONS))
def test_task_spec_matches_its_paper_condition(stem):
    slug, noise, submission, context, k = CONDITIONS[stem]
    path = SPECS / f"{stem}.yaml"
    spec = load_task_spec(path)
    params = task_params(spec, TracebenchParams, path)
    assert (spec.name, spec.template) == (stem, "tracebench")
    assert (params.simulator, params.noise, params.submission, params.context, params.examples_per_class) == \
        ("balldrop", noise, submission, context, k)
    assert (params.n_test, params.seed, params.pool_seed, params.heldout_per_class) == (10, 0, 0, 142)
    assert [s for s in SLUGS if s in spec.description] == [slug]
    assert params.slug == slug


# -- with the real BallDrop simulator and sample pool --------------------------------------------

@pytest.mark.slow
def test_balldrop_episode_end_to_end(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        real = harness.plugins.Plugins()
    if "balldrop" not in real.registry("simulator"):
        pytest.skip("the BallDrop simulator plugin is not registered (yet)")
    pool_module = pytest.importorskip("tsagent_plugins.tasks.tracebench.pool")
    sim = real.get("simulator", "balldrop")
    harness.plugins.reset(real)

    def loader(simulator, pool_seed, per_class, progress):
        return pool_module.load_pool(simulator, pool_seed=pool_seed, per_class=30, cache_dir=tmp_path / "pools")

    template = TracebenchTemplate(pool_loader=loader)
    out = {}
    for tag, kw in {"low": {"noise": "low"}, "high": {"noise": "high"},
                    "blind": {"noise": "high", "context": False, "submission": "programmatic"}}.items():
        params = TracebenchParams.model_validate(
            {"simulator": "balldrop", "submission": "direct", "heldout_per_class": 1} | kw)
        ws, key_dir = tmp_path / tag / "ws", tmp_path / tag / "key"
        mat = template.materialize(params, "0", ws, key_dir)
        out[tag] = (params, mat, ws, key_dir, json.loads((key_dir / "key.json").read_text()))

    params, mat, ws, key_dir, key = out["low"]
    golden = TESTS / "golden" / "prompts" / "context-direct-examples.txt"
    assert mat.prompt == golden.read_text()
    first = pd.read_parquet(next((ws / "test_samples").iterdir()))
    assert list(first.columns) == ["col1", "col2", "col3", "col4"] and len(first) == 3999
    assert first["col4"].iloc[0] == pytest.approx(1 / 400) and first["col4"].iloc[-1] == pytest.approx(3999 / 400)
    (ws / "results.json").write_text(json.dumps({n: [t["label"]] for n, t in key["test"].items()}))
    assert template.score(params, "0", ws, key_dir, None).metrics["accuracy"] == 1.0

    assert out["high"][4]["test"] == key["test"]
    name = sorted(key["test"])[0]
    low = pd.read_parquet(ws / "test_samples" / name).to_numpy()
    high = pd.read_parquet(out["high"][2] / "test_samples" / name).to_numpy()
    assert not np.allclose(low[:, :3], high[:, :3]) and np.array_equal(low[:, 3], high[:, 3])

    blind_ws = out["blind"][2]
    for path in blind_ws.rglob("*"):
        if path.is_file():
            blob = path.read_bytes().lower()
            for secret in ["balldrop", "position", "velocity", "hard_stop", *sim.labels]:
                assert secret.encode() not in blob, (path.name, secret)


def test_every_sample_file_is_a_private_copy_of_the_episode(env, tmp_path):
    """Two programmatic episodes of the same pool, seed and noise share no file on disk (no hard link into a
    shared store: a copy of a run folder, an archive or a Dask worker's tar carries what it lists)."""
    import os

    folders = [materialize(env, tmp_path, tag, submission="programmatic")[1].parent for tag in ("one", "two")]
    files = [sorted(f.rglob("*.parquet")) for f in folders]
    assert [p.relative_to(folders[0]) for p in files[0]] == [p.relative_to(folders[1]) for p in files[1]]
    assert len(files[0]) == 10 + 15 + 10 + 10  # test, support, the key's test copies, held-out
    assert all(p.stat().st_nlink == 1 for group in files for p in group)
    assert {os.stat(p).st_ino for p in files[0]}.isdisjoint(os.stat(p).st_ino for p in files[1])

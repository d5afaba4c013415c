"""Released TraceBench layout (Appendix C.2): write our pool in it, read it back, run the same episode.

The published files could not be inspected here: the layout follows its documented description
and the fixture written by :func:`write_released` is UNVERIFIED against the real release."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.contracts.simulator import NO_CHANGE
from harness.plugins import get
from tsagent_plugins.tasks.tracebench import released
from tsagent_plugins.tasks.tracebench.conditions import PAPER_CONDITIONS
from tsagent_plugins.tasks.tracebench._store import PoolCacheError
from tsagent_plugins.tasks.tracebench.pool import load_pool
from tsagent_plugins.tasks.tracebench.template import TracebenchParams, TracebenchTemplate

PER_CLASS = 10
HELD = 2


@pytest.fixture(scope="module")
def sim():
    return get("simulator", "balldrop")


@pytest.fixture(scope="module")
def pool(sim, tmp_path_factory):
    return load_pool(sim, pool_seed=3, per_class=PER_CLASS, cache_dir=tmp_path_factory.mktemp("pools"), workers=1)


@pytest.fixture(scope="module")
def release(pool, tmp_path_factory):
    out = tmp_path_factory.mktemp("release") / "balldrop"
    released.write_released(pool, out, rep_seeds=(0, 1), n_test=10, n_support_per_class=1, heldout_per_class=HELD)
    return out


def test_layout_files(release, pool):
    assert sorted(p.name for p in release.iterdir()) == sorted(
        [released.QUESTIONS, released.MANIFEST, released.RECORD, released.FRAMES])
    assert sorted(p.stem for p in (release / "dataframes").iterdir()) == sorted(pool.recipes.index)
    q = json.loads((release / released.QUESTIONS).read_text())
    assert set(q["questions"]) == set(PAPER_CONDITIONS)
    assert q["questions"]["gentle-cloud"] | {} == {"noise": "low", "submission": "direct", "context": True,
                                                   "examples_per_class": 1, "n_test": 10, "heldout_per_class": 0}
    held = min(HELD, PER_CLASS - 1 - math.ceil(10 / 5))
    assert q["questions"]["gentle-orbit"]["heldout_per_class"] == held == HELD
    m = json.loads((release / released.MANIFEST).read_text())
    assert [e["seed"] for e in m["gentle-pine"]] == [0, 1]
    assert len(m["frost-pine"][0]["train"]) == 0 and len(m["gentle-pine"][0]["train"]) == 5
    assert len(m["gentle-flame"][0]["heldout"]) == 5 * held
    tab = pq.read_table(release / "dataframes" / f"{pool.recipes.index[0]}.parquet")
    assert tab.column_names == ["Position", "Velocity", "Hard_Stop_f", "time"]


def test_reader_round_trips_the_pool(sim, pool, release):
    r = released.load_released(sim, release)
    cols = ["label", "parameter", "config_id", "t_int", "new_value", "old_value"] + \
        [c for c in pool.recipes.columns if c.startswith(("x0_", "theta_"))]
    a = pool.recipes[cols].sort_index()
    b = r.recipes[cols].sort_index()
    assert a.equals(b)
    for sid in pool.recipes.index:
        x, y = pool.clean(sid), r.clean(sid)
        np.testing.assert_array_equal(x.values, y.values)
        np.testing.assert_array_equal(x.time, y.time)
        np.testing.assert_array_equal(x.events, y.events)
        assert r.config(sid) == pool.config(sid) and r.intervention(sid) == pool.intervention(sid)
    # the manifest's assignment is the pool's own split, with the pool's noise seeds
    s = r.split(1, 10, 1, 0, condition="gentle-pine")
    mine = pool.split(1, 10, 1, HELD)
    assert (s.test, s.support) == (mine.test, mine.support)
    assert r.noise_seed(s.test[0], 1) == pool.noise_seed(s.test[0], 1)


def _files(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("submission,noise", [("direct", "low"), ("programmatic", "high")])
def test_an_episode_on_the_release_equals_one_on_the_pool(sim, pool, release, tmp_path, submission, noise):
    held = HELD
    base = dict(simulator="balldrop", noise=noise, submission=submission, examples_per_class=1, n_test=10,
                seed=1, pool_seed=3, heldout_per_class=held)
    ours = TracebenchTemplate(pool_loader=lambda s, seed, n, progress=None: pool)
    theirs = TracebenchTemplate()
    p_ours = TracebenchParams(**base)
    p_rel = TracebenchParams(**base, pool={"path": str(release)})
    assert p_rel.pool.noise.startswith("clean samples and assignments from the released dataset")
    assert "noise" in p_rel.model_dump(mode="json")["pool"]  # recorded in run.json's episode params
    m1 = ours.materialize(p_ours, "0", tmp_path / "w1", tmp_path / "k1")
    m2 = theirs.materialize(p_rel, "0", tmp_path / "w2", tmp_path / "k2")
    assert m1.prompt == m2.prompt
    assert _files(tmp_path / "w1") == _files(tmp_path / "w2")
    k1 = json.loads((tmp_path / "k1" / "key.json").read_text())
    k2 = json.loads((tmp_path / "k2" / "key.json").read_text())
    assert k2.pop("released_pool")["path"] == str(release)
    assert k1 == k2
    if submission == "programmatic":
        assert len(k1["heldout"]) == 5 * held
        assert _files(tmp_path / "k1" / "heldout_samples") == _files(tmp_path / "k2" / "heldout_samples")


def test_bad_release_names_file_and_field(sim, release, tmp_path):
    with pytest.raises(PoolCacheError, match="questions.json missing"):
        released.load_released(sim, tmp_path)
    bad = tmp_path / "bad"
    bad.mkdir()
    q = json.loads((release / released.QUESTIONS).read_text())
    sid = next(iter(q["ground_truth"]))
    q["ground_truth"][sid]["changed_parameter"] = "spin"
    (bad / released.QUESTIONS).write_text(json.dumps(q))
    (bad / released.MANIFEST).write_text("{}")
    with pytest.raises(PoolCacheError, match=r"questions.json: ground_truth\['.*'\]: field 'changed_parameter'"):
        released.load_released(sim, bad)
    q["ground_truth"][sid]["changed_parameter"] = None
    del q["ground_truth"][sid]["initial_parameters"]
    (bad / released.QUESTIONS).write_text(json.dumps(q))
    with pytest.raises(PoolCacheError, match="field 'initial_parameters' missing"):
        released.load_released(sim, bad)
    r = released.load_released(sim, release)
    with pytest.raises(PoolCacheError, match="sample_manifest.json: field 'no-such-slug' missing"):
        r.split(0, 10, 1, 0, condition="no-such-slug")
    with pytest.raises(PoolCacheError, match="no repetition with seed 7"):
        r.split(7, 10, 1, 0, condition="gentle-pine")
    with pytest.raises(ValueError, match="asks for n_test=4"):
        r.split(0, 4, 1, 0, condition="gentle-pine")


def test_col_layout_and_events_from_clean(sim, pool, release, tmp_path):
    """A release whose frames use col1..col4 and carry no impact times still loads; impacts are
    then read off the samples (within one sample interval of the exact times)."""
    out = tmp_path / "cols"
    (out / "dataframes").mkdir(parents=True)
    q = json.loads((release / released.QUESTIONS).read_text())
    for g in q["ground_truth"].values():
        g.pop("impact_times")
        g.pop("configuration")
    (out / released.QUESTIONS).write_text(json.dumps(q))
    (out / released.MANIFEST).write_text((release / released.MANIFEST).read_text())
    for sid in pool.recipes.index:
        tab = pq.read_table(release / "dataframes" / f"{sid}.parquet")
        pq.write_table(pa.table({f"col{i + 1}": tab.column(i) for i in range(4)}), out / "dataframes" / f"{sid}.parquet")
    r = released.load_released(sim, out)
    assert r.recipes["config_id"].nunique() == pool.recipes["config_id"].nunique()
    for sid in pool.recipes.index[:10]:
        exact, read = pool.clean(sid).events, r.clean(sid).events
        np.testing.assert_array_equal(r.clean(sid).values, pool.clean(sid).values)
        # every exact impact that leaves a sign change of velocity is found within one sample
        for t in read:
            assert np.min(np.abs(exact - t)) <= sim.dt + 1e-9
        assert len(read) >= 1
    assert (r.recipes["label"] == NO_CHANGE).sum() == PER_CLASS


def test_paired_no_intervention_trajectory(sim, pool, release):
    """Every sample's clean paired no-intervention run is available (privileged baselines)."""
    r = released.load_released(sim, release)
    for sid, row in pool.recipes.iloc[::4].iterrows():
        expect = sim.simulate(pool.config(sid), None)
        np.testing.assert_array_equal(pool.paired_clean(sid).values, expect.values)
        np.testing.assert_array_equal(r.paired_clean(sid).values, expect.values)
        if row["parameter"] is None:
            np.testing.assert_array_equal(pool.paired_clean(sid).values, pool.clean(sid).values)


def test_release_display_strings_map_to_our_labels_by_parameter(sim, pool, release, tmp_path):
    """The release names classes with its own display strings (e.g. BounceBall's "weight of the mass" for
    Appendix A's "mass"); the reader takes the class from ``changed_parameter`` and accepts the file's
    ``label_mapping`` string for it, and names the field when a label fits neither."""
    out = tmp_path / "renamed"
    out.mkdir()
    for name in (released.MANIFEST,):
        (out / name).write_text((release / name).read_text())
    (out / "dataframes").symlink_to(release / "dataframes")
    q = json.loads((release / released.QUESTIONS).read_text())
    q["label_mapping"]["mass"] = "weight of the ball"
    renamed = [sid for sid, g in q["ground_truth"].items() if g["changed_parameter"] == "mass"]
    for sid in renamed:
        q["ground_truth"][sid]["label"] = "weight of the ball"
    (out / released.QUESTIONS).write_text(json.dumps(q))
    r = released.load_released(sim, out)
    assert renamed and (r.recipes.loc[renamed, "label"] == "mass").all()
    assert set(r.recipes["label"]) == set(sim.labels)
    q["ground_truth"][renamed[0]]["label"] = "gravity acceleration"
    (out / released.QUESTIONS).write_text(json.dumps(q))
    with pytest.raises(PoolCacheError, match=r"field 'label' 'gravity acceleration' is neither 'mass'"):
        released.load_released(sim, out)


def test_one_slug_lookup_serves_the_released_split(release):
    """The released split's condition comes from the template's one slug lookup (``paper_slug``): no second
    lookup with its arguments in another order."""
    assert not hasattr(released, "condition_slug") and not hasattr(released, "CONDITIONS")
    params = TracebenchParams(simulator="balldrop", noise="low", submission="direct", examples_per_class=0,
                              n_test=10, seed=1, pool_seed=3, heldout_per_class=0, pool={"path": str(release)})
    with pytest.raises(ValueError, match="no released condition for submission=direct, noise=low, context=True, "
                                         "examples_per_class=0; name one with pool.condition"):
        TracebenchTemplate._split(None, params)


def test_an_episode_on_a_release_rebuilds_each_sample_from_its_one_frame(sim, release, tmp_path):
    """Inputs by reference (``.inputs``): a released pool's sample is referenced by its frame file and that
    file's digest, rebuilt from that frame alone, and a frame changed since fails naming the file."""
    import shutil

    from tsagent_plugins.tasks.tracebench.files import values_digest

    copy = tmp_path / "release"
    shutil.copytree(release, copy)
    template = TracebenchTemplate(pool_loader=lambda *a, **k: pytest.fail("the generated pool was loaded"))
    params = TracebenchParams(simulator="balldrop", noise="low", submission="programmatic", examples_per_class=1,
                              n_test=10, seed=1, pool_seed=3, heldout_per_class=HELD, pool={"path": str(copy)})
    root = tmp_path / "ep"
    template.materialize(params, "0", root / "workspace", root / "key")
    refs = template.input_references(params, "0", root)
    assert len(refs) == 10 + 10 + 5 + 5 * HELD  # test (workspace and key copies), support, held-out
    assert {r["released_pool"] for r in refs.values()} == {str(copy)}
    assert all(r["source"] == f"balldrop released pool {copy}" for r in refs.values())
    for rel, ref in refs.items():
        frame = copy / "dataframes" / f"{ref['sample_id']}.parquet"
        assert ref["frame_sha256"] == released_sha(frame)
        template.rebuild_input(params, "0", ref, tmp_path / "again.parquet")
        assert values_digest(tmp_path / "again.parquet") == values_digest(root / rel), rel
    rel, ref = next(iter(refs.items()))
    frame = copy / "dataframes" / f"{ref['sample_id']}.parquet"
    frame.write_bytes(frame.read_bytes() + b"\0")
    with pytest.raises(ValueError, match=str(frame)):
        template.rebuild_input(params, "0", ref, tmp_path / "again.parquet")


def released_sha(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()

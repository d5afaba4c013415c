"""Sample pool (Sections 3.4, 4.5, Appendix C.1): generation rules, cache, atomic write, splits."""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.support.toy_balldrop import FastToyBall
from harness.contracts.simulator import NO_CHANGE
from tsagent_plugins.tasks.tracebench import _generation, _store, pool as pool_mod
from tsagent_plugins.tasks.tracebench._split import choose, match_distinct_configs
from tsagent_plugins.tasks.tracebench.filtering import FilterSettings, SolvabilityFilter
from tsagent_plugins.tasks.tracebench.pool import PoolCacheError, Split, load_pool, pool_key

PER_CLASS = 12


def high_start_fails(config, intervention):
    """Forced rule: from configurations starting above 1.75 m only gravity changes may pass."""
    return config.initial_state["initial_height"] > 1.75 and intervention.parameter != "gravity"


@pytest.fixture(scope="module")
def sim():
    return FastToyBall(fail_rule=high_start_fails)


@pytest.fixture(scope="module")
def pools(sim, tmp_path_factory):
    root = tmp_path_factory.mktemp("pools")
    seen = []
    p1 = load_pool(sim, pool_seed=5, per_class=PER_CLASS, cache_dir=root / "w1", workers=1,
                   progress=lambda d, t: seen.append((d, t)))
    p2 = load_pool(sim, pool_seed=5, per_class=PER_CLASS, cache_dir=root / "w2", workers=2)
    return p1, p2, seen


def test_layout_and_class_counts(pools, sim):
    p, _, _ = pools
    assert p.path.name == "toyball-v1-seed5-n12" == pool_key(sim, 5, PER_CLASS)
    assert sorted((p.path).iterdir()) == sorted(p.path / f for f in _store.FILES)
    assert p.recipes["label"].value_counts().to_dict() == {lab: PER_CLASS for lab in sim.labels}
    assert len(p) == 5 * PER_CLASS and p.recipes.index.is_unique
    assert p.recipes.index.map(len).unique().tolist() == [16]
    ni = p.recipes[p.recipes["label"] == NO_CHANGE]
    assert ni["parameter"].isna().all() and ni["t_int"].isna().all() and (ni["draw"] == -1).all()
    iv = p.recipes[p.recipes["label"] != NO_CHANGE]
    label_of = {q.name: q.label for q in sim.parameters}
    assert (iv["parameter"].map(label_of) == iv["label"]).all()
    assert ((iv["t_int"] >= 0.2 * sim.horizon) & (iv["t_int"] <= 0.8 * sim.horizon)).all()
    assert (iv[["r_ni_128", "r_sc_128", "r_ni_1024", "r_sc_1024"]] > 2).all().all()
    assert (iv["old_value"] == [row[f"theta_{row['parameter']}"] for _, row in iv.iterrows()]).all()


def test_deterministic_regardless_of_workers(pools):
    p1, p2, _ = pools
    pd.testing.assert_frame_equal(p1.recipes, p2.recipes)
    pd.testing.assert_frame_equal(p1.configs, p2.configs)
    for sid in p1.recipes.index[::7]:
        np.testing.assert_array_equal(p1.clean(sid).values, p2.clean(sid).values)
    s1, s2 = p1.stats(), p2.stats()
    for k in ("configurations", "configurations_kept", "candidates", "accepted", "rejections"):
        assert s1[k] == s2[k]
    assert s1["workers"] == 1 and s2["workers"] == 2
    assert_byte_identical(p1.path, p2.path)


def assert_byte_identical(a: Path, b: Path) -> None:
    """Every pool file but timings.json (workers, seconds) is byte-identical."""
    names = sorted(f.name for f in a.iterdir())
    assert names == sorted(f.name for f in b.iterdir()) and "timings.json" in names
    for name in names:
        if name != "timings.json":
            assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_rejection_counts_add_up(pools):
    p, _, _ = pools
    s = p.stats()
    assert s["candidates"] == s["accepted"] + sum(s["rejections"].values())
    assert s["candidates"] == int(p.configs["n_candidates"].sum())
    assert s["configurations"] == len(p.configs) and s["configurations"] % _generation.ROUND_SIZE == 0
    assert s["configurations_kept"] == int(p.configs["kept"].sum())
    assert s["configurations_skipped"] == int((p.configs["status"] == "skipped").sum())
    assert s["accepted"] == int(p.configs["n_passed"].sum())
    assert s["rejections"]["forced"] > 0  # the forced rule fired and is counted under its name
    assert set(s["rejections"]) <= {"forced", "bounce_after_change", "no_effect_vs_NI@N=128",
                                    "static_change@N=128", "no_effect_vs_NI@N=1024", "static_change@N=1024"}
    assert {"simulate", "rules", "noise@N=128", "noise@N=1024", "sampling", "writing"} <= set(s["timings"])


def test_progress_reports_selected_samples(pools):
    _, _, seen = pools
    assert seen[0] == (0, 5 * PER_CLASS) and seen[-1] == (5 * PER_CLASS, 5 * PER_CLASS)
    assert all(a[0] <= b[0] for a, b in zip(seen, seen[1:]))


def test_two_root_causes_rule(pools, sim):
    """Only configurations where >= 2 distinct parameters pass contribute samples (incl. NI)."""
    p, _, _ = pools
    configs = p.configs.set_index("config_id")
    used = configs.loc[p.recipes["config_id"].unique()]
    assert used["kept"].all() and (used["n_passed"] >= 2).all()
    assert (p.recipes["x0_initial_height"] <= 1.75).all()  # only gravity can pass above 1.75 m
    assert set(configs["status"]) <= {"kept", "rejected", "skipped"}
    assert (configs["kept"] == (configs["status"] == "kept")).all()
    dropped = configs[configs["status"] == "rejected"]
    assert (dropped["x0_initial_height"] > 1.75).sum() > 0
    # independent re-check of dropped configurations: every parameter, every draw, no skipping
    filt = SolvabilityFilter(sim)
    names = [q.name for q in sim.parameters]
    for cid, row in dropped.head(6).iterrows():
        config = sim.sample_configurations(_generation.ROUND_SIZE,
                                           _generation.config_rng(5, cid // _generation.ROUND_SIZE))[
            cid % _generation.ROUND_SIZE]
        assert config.initial_state["initial_height"] == row["x0_initial_height"]
        passing = set()
        for i, name in enumerate(names):
            for d in range(_generation.DRAWS_PER_PARAMETER):
                iv = sim.sample_intervention(config, name, _generation.candidate_rng(5, cid, i, d))
                if filt.evaluate(config, iv).accepted:
                    passing.add(name)
                    break
        assert len(passing) < 2, (cid, passing)


def test_no_intervention_samples_only_from_kept_configs(pools, sim):
    p, _, _ = pools
    kept = set(p.configs.loc[p.configs["kept"], "config_id"])
    ni = p.recipes[p.recipes["label"] == NO_CHANGE]
    assert set(ni["config_id"]) <= kept and ni["config_id"].is_unique
    for sid in ni.index[:3]:
        assert p.intervention(sid) is None
        np.testing.assert_array_equal(p.clean(sid).values, sim.simulate(p.config(sid)).values)


def test_recipes_reproduce_the_clean_trajectories(pools, sim):
    p, _, _ = pools
    for sid in p.recipes[p.recipes["label"] != NO_CHANGE].index[:6]:
        iv = p.intervention(sid)
        assert iv.parameter == p.recipes.loc[sid, "parameter"]
        again = sim.simulate(p.config(sid), iv)
        traj = p.clean(sid)
        np.testing.assert_array_equal(traj.values, again.values)
        np.testing.assert_array_equal(traj.events, again.events)
        np.testing.assert_array_equal(traj.time, again.time)


def test_cache_second_load_reads_disk(pools, sim, monkeypatch):
    p1, _, _ = pools
    monkeypatch.setattr(_generation, "generate", lambda *a, **k: pytest.fail("regenerated a cached pool"))
    seen = []
    again = load_pool(sim, pool_seed=5, per_class=PER_CLASS, cache_dir=p1.path.parent,
                      progress=lambda d, t: seen.append((d, t)))
    assert again.stats()["from_cache"] is True and p1.stats()["from_cache"] is False
    assert seen == []  # progress is the generation's: a cached pool shows none (a run would look like a rebuild)
    pd.testing.assert_frame_equal(again.recipes, p1.recipes)
    sid = p1.recipes.index[3]
    np.testing.assert_array_equal(again.clean(sid).values, p1.clean(sid).values)
    np.testing.assert_array_equal(again.clean(sid).events, p1.clean(sid).events)
    assert again.stats()["candidates"] == p1.stats()["candidates"]


def test_default_cache_dir_from_environment(sim, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path))
    assert pool_mod.default_cache_root() == tmp_path / "pools"
    p = load_pool(sim, pool_seed=1, per_class=2, workers=1)
    assert p.path == tmp_path / "pools" / "toyball-v1-seed1-n2"
    monkeypatch.delenv("HARNESS_CACHE_DIR")
    assert pool_mod.default_cache_root() == Path.home() / ".cache" / "harness" / "pools"


def test_changed_settings_regenerate(sim, tmp_path):
    a = load_pool(sim, pool_seed=2, per_class=2, cache_dir=tmp_path, workers=1)
    b = load_pool(sim, pool_seed=2, per_class=2, cache_dir=tmp_path, workers=1,
                  settings=FilterSettings(rho=3.0))
    assert b.stats()["from_cache"] is False and a.path == b.path
    assert (b.recipes.filter(like="r_").dropna() > 3).all().all()
    assert [d.name for d in tmp_path.iterdir()] == [a.path.name]  # replaced in place, nothing left over


def test_atomic_write_leaves_no_half_pool(sim, tmp_path, monkeypatch):
    real = _store.write_dir

    def dies_midway(path, *args, **kw):
        (path / "recipes.parquet").write_bytes(b"partial")
        raise KeyboardInterrupt("killed")

    monkeypatch.setattr(_store, "write_dir", dies_midway)
    with pytest.raises(KeyboardInterrupt):
        load_pool(sim, pool_seed=3, per_class=2, cache_dir=tmp_path, workers=1)
    assert list(tmp_path.iterdir()) == []  # neither the final directory nor the temporary one
    # a run killed hard leaves a temporary sibling: never mistaken for the pool, removed once stale
    stale = tmp_path / ".toyball-v1-seed3-n2.tmp-999-x"
    stale.mkdir()
    (stale / "recipes.parquet").write_bytes(b"partial")
    old = time.time() - 2 * _store.STALE_TMP_SECONDS
    os.utime(stale, (old, old))
    monkeypatch.setattr(_store, "write_dir", real)
    p = load_pool(sim, pool_seed=3, per_class=2, cache_dir=tmp_path, workers=1)
    assert p.stats()["from_cache"] is False and not stale.exists()
    assert [d.name for d in tmp_path.iterdir()] == ["toyball-v1-seed3-n2"]


def test_corrupt_cache_names_file_and_field(sim, tmp_path):
    p = load_pool(sim, pool_seed=4, per_class=2, cache_dir=tmp_path, workers=1)
    p.recipes.drop(columns=["label"]).to_parquet(p.path / "recipes.parquet")
    with pytest.raises(PoolCacheError, match=r"recipes\.parquet: field 'label' missing"):
        load_pool(sim, pool_seed=4, per_class=2, cache_dir=tmp_path)
    (p.path / "meta.json").write_text("{not json")
    with pytest.raises(PoolCacheError, match=r"meta\.json"):
        load_pool(sim, pool_seed=4, per_class=2, cache_dir=tmp_path)


def test_bad_arguments(sim, tmp_path):
    with pytest.raises(ValueError, match="per_class"):
        load_pool(sim, per_class=0, cache_dir=tmp_path)
    with pytest.raises(ValueError, match="workers"):
        load_pool(sim, per_class=1, cache_dir=tmp_path, workers=0)


def test_sample_ids_are_stable(pools, sim, tmp_path):
    p1, _, _ = pools
    again = load_pool(sim, pool_seed=5, per_class=PER_CLASS, cache_dir=tmp_path, workers=1)
    assert list(again.recipes.index) == list(p1.recipes.index)
    other = load_pool(sim, pool_seed=6, per_class=2, cache_dir=tmp_path, workers=1)
    assert not set(other.recipes.index) & set(p1.recipes.index)


# -- splits ----------------------------------------------------------------------------

def check_split(recipes: pd.DataFrame, labels, s: Split, n_test, n_sup, n_held):
    lab = recipes["label"]
    cfg = recipes["config_id"]
    assert len(s.test) == n_test and len(s.support) == n_sup * len(labels) and len(s.heldout) == n_held * len(labels)
    assert not (set(s.test) & set(s.support)) and not (set(s.heldout) & (set(s.test) | set(s.support)))
    assert len(set(s.test) | set(s.support) | set(s.heldout)) == n_test + (n_sup + n_held) * len(labels)
    episode = s.test + s.support
    assert cfg.loc[episode].is_unique  # no two samples of an episode share a configuration
    counts = lab.loc[s.test].value_counts().reindex(labels, fill_value=0)
    assert counts.max() - counts.min() <= 1
    assert (lab.loc[s.support].value_counts().reindex(labels, fill_value=0) == n_sup).all()
    assert (lab.loc[s.heldout].value_counts().reindex(labels, fill_value=0) == n_held).all()


def test_split_on_generated_pool(pools, sim):
    p, _, _ = pools
    s3 = p.split(rep_seed=0, n_test=7, n_support_per_class=1, n_heldout_per_class=4)
    check_split(p.recipes, sim.labels, s3, 7, 1, 4)
    s0 = p.split(rep_seed=0, n_test=7, n_support_per_class=0, n_heldout_per_class=4)
    assert s0.test == s3.test and s0.heldout == s3.heldout and s0.support == []
    assert p.split(0, 7, 1, 4) == s3  # deterministic
    assert p.split(1, 7, 1, 4).test != s3.test
    with pytest.raises(ValueError, match="too few for the held-out set"):
        p.split(0, 7, 1, n_heldout_per_class=PER_CLASS)


def synthetic(n_configs=60, labels=("a", "b", "c", "d", NO_CHANGE), drop=0.3, seed=0):
    rng = np.random.default_rng(seed)
    rows = []
    for cfg in range(n_configs):
        present = [lab for lab in labels if lab == NO_CHANGE or rng.random() > drop]
        rows += [{"sample_id": f"s{cfg:03d}{lab[:2]}", "config_id": cfg, "label": lab} for lab in present]
    return pd.DataFrame(rows).set_index("sample_id")


@pytest.mark.parametrize("n_test", [10, 12, 3])
def test_split_properties_many_seeds(n_test):
    labels = ["a", "b", "c", "d", NO_CHANGE]
    rec = synthetic()
    for seed in range(25):
        s3 = choose(rec, labels, seed, n_test, 3, 30)
        check_split(rec, labels, s3, n_test, 3, 30)
        s0 = choose(rec, labels, seed, n_test, 0, 30)
        assert s0.test == s3.test and s0.heldout == s3.heldout
        assert choose(rec.sample(frac=1, random_state=seed), labels, seed, n_test, 3, 30) == s3  # row order


def test_split_class_balance_uses_random_extra_classes():
    labels = ["a", "b", "c", "d", NO_CHANGE]
    rec = synthetic(drop=0.0)
    extras = set()
    for seed in range(20):
        counts = rec.loc[choose(rec, labels, seed, 12, 0, 0).test, "label"].value_counts()
        assert sorted(counts) == [2, 2, 2, 3, 3]
        extras |= set(counts[counts == 3].index)
    assert extras == set(labels)


def test_matching_finds_selection_greedy_would_miss():
    # config 1 holds both classes, config 2 only "a": "a" must go to config 2
    cands = {"a": [("a1", 1), ("a2", 2)], "b": [("b1", 1)]}
    for seed in range(20):
        pick = match_distinct_configs(["a", "b"], cands, set(), np.random.default_rng(seed))
        assert pick == ["a2", "b1"]
    assert match_distinct_configs(["a", "b"], cands, {2}, np.random.default_rng(0)) is None


def test_split_too_small_pool():
    labels = ["a", NO_CHANGE]
    rec = pd.DataFrame({"config_id": [0, 0, 1], "label": ["a", NO_CHANGE, NO_CHANGE]},
                       index=pd.Index(["x", "y", "z"], name="sample_id"))
    with pytest.raises(ValueError, match="class 'a' has 1 samples, too few for the test batch"):
        choose(rec, labels, 0, 4, 0, 0)
    rec = pd.DataFrame({"config_id": [0, 0, 1, 2], "label": ["a", NO_CHANGE, "a", NO_CHANGE]},
                       index=pd.Index(["x", "y", "z", "w"], name="sample_id"))
    for seed in range(5):  # enough samples, but every choice of test batch blocks the support batch
        with pytest.raises(ValueError, match="distinct from each other and from the test batch"):
            choose(rec, labels, seed, 2, 1, 0)
    with pytest.raises(ValueError, match="n_test"):
        choose(rec, labels, 0, -1, 0, 0)


# -- work skipping inside one configuration ------------------------------------------------

LIVELY = dict(initial_state={"initial_height": 0.5, "initial_velocity": 0.0},
              parameters={"restitution": 0.9, "mass": 1.0, "drag_coeff": 0.1, "gravity": 9.81})


def run_config(fail, needed):
    from harness.contracts.simulator import Configuration

    sim = FastToyBall(fail_rule=lambda c, iv: iv.parameter in fail)
    out = _generation.process_config(sim, SolvabilityFilter(sim), 0, 7, Configuration(**LIVELY),
                                     frozenset(needed), draws=1)
    return out, [c.parameter for c in out.candidates]


ALL = {"restitution", "mass", "drag_coeff", "gravity", NO_CHANGE}


def test_process_config_all_pass_stops_after_needed():
    out, tried = run_config(set(), ALL)
    assert out.status == "kept" and tried == ["restitution", "mass", "drag_coeff", "gravity"]
    out, tried = run_config(set(), {"gravity", NO_CHANGE})  # needed first, then one more for the 2-rule
    assert out.status == "kept" and tried == ["gravity", "restitution"]


def test_process_config_stops_when_two_passes_are_out_of_reach():
    out, tried = run_config({"restitution", "mass", "drag_coeff"}, ALL)
    assert out.status == "rejected" and tried == ["restitution", "mass", "drag_coeff"]
    assert [c.stage for c in out.candidates] == ["forced"] * 3


def test_process_config_skips_when_nothing_needed_can_come_from_it():
    out, tried = run_config({"drag_coeff"}, {"drag_coeff"})  # NI full, the needed class failed
    assert out.status == "skipped" and not out.kept and tried == ["drag_coeff"]
    out, tried = run_config({"drag_coeff"}, {"drag_coeff", NO_CHANGE})  # an NI sample is still wanted
    assert out.status == "kept" and tried == ["drag_coeff", "restitution", "mass"]
    out, tried = run_config(set(), {"drag_coeff"})
    assert out.status == "kept" and tried == ["drag_coeff", "restitution"]


# -- the real simulator ---------------------------------------------------------------------

def _balldrop():
    try:
        from harness.plugins import get

        return get("simulator", "balldrop")
    except Exception:  # noqa: BLE001 - absent until the plugin lands
        return None


@pytest.mark.skipif(_balldrop() is None, reason="balldrop simulator not registered")
def test_balldrop_pool(tmp_path):
    sim = _balldrop()
    p1 = load_pool(sim, pool_seed=0, per_class=4, cache_dir=tmp_path / "a", workers=1)
    p2 = load_pool(sim, pool_seed=0, per_class=4, cache_dir=tmp_path / "b", workers=2)
    pd.testing.assert_frame_equal(p1.recipes, p2.recipes)
    assert_byte_identical(p1.path, p2.path)
    assert p1.recipes["label"].value_counts().to_dict() == {lab: 4 for lab in sim.labels}
    assert p1.clean(p1.recipes.index[0]).values.shape == (3999, 3)
    filt = SolvabilityFilter(sim)
    for sid in p1.recipes.index:
        iv, config = p1.intervention(sid), p1.config(sid)
        if iv is None:
            np.testing.assert_array_equal(p1.clean(sid).values, sim.simulate(config).values)
            continue
        v = filt.evaluate(config, iv)  # an independent re-run accepts it with the recorded ratios
        assert v.accepted and all(o.passed for o in v.rules)
        assert v.ratios == pytest.approx(p1.recipes.loc[sid, list(v.ratios)].to_dict(), rel=1e-12)
        np.testing.assert_array_equal(p1.clean(sid).values, v.target.values)
    s = p1.stats()
    assert s["candidates"] == s["accepted"] + sum(s["rejections"].values())


@pytest.mark.slow
def test_forkserver_workers_give_the_same_pool(tmp_path):
    """Used when other threads run (forking is unsafe then): same selection as in-process."""
    sim = FastToyBall()
    a = _generation.generate(sim, 9, 3, workers=1)
    b = _generation.generate(sim, 9, 3, workers=2, start_method="forkserver")
    def chosen(sel):
        return {lab: [(o.index, name) for o, name in v] for lab, v in sel.per_class.items()}

    assert chosen(a) == chosen(b) and a.stats["candidates"] == b.stats["candidates"]
    for (oa, _), (ob, _) in zip(a.per_class[NO_CHANGE], b.per_class[NO_CHANGE], strict=True):
        np.testing.assert_array_equal(oa.ni.values, ob.ni.values)


def test_workers_spawn_where_the_forkserver_socket_path_would_be_too_long(monkeypatch):
    """With other threads running, a $TMPDIR too long for the forkserver's AF_UNIX socket (a test's under
    pytest-xdist) starts the workers with spawn; a short one keeps the forkserver."""
    import tempfile
    import threading

    monkeypatch.setattr(threading, "active_count", lambda: 2)
    monkeypatch.setattr(tempfile, "tempdir", "/tmp")
    assert _generation._start_method() == "forkserver"
    monkeypatch.setattr(tempfile, "tempdir", "/tmp/" + "x" * 80)
    assert _generation._start_method() == "spawn"


def test_concurrent_publication_keeps_the_first_complete_pool(sim, tmp_path, monkeypatch):
    """Two processes generating the same pool: the later one keeps the published copy."""
    first = load_pool(sim, pool_seed=8, per_class=2, cache_dir=tmp_path, workers=1)
    inode = (first.path / "recipes.parquet").stat().st_ino
    real, calls = pool_mod._is_current, []

    def first_check_misses(path, meta):  # as if the other process published after our cache check
        calls.append(path)
        return len(calls) > 1 and real(path, meta)

    monkeypatch.setattr(pool_mod, "_is_current", first_check_misses)
    second = load_pool(sim, pool_seed=8, per_class=2, cache_dir=tmp_path, workers=1)  # misses the cache once
    assert second.stats()["from_cache"] is False
    assert (first.path / "recipes.parquet").stat().st_ino == inode  # not replaced
    assert [d.name for d in tmp_path.iterdir()] == [first.path.name]
    pd.testing.assert_frame_equal(second.recipes, first.recipes)


WRITER = """
import sys, time
from pathlib import Path
from tsagent_plugins.tasks.tracebench import _store

def fill(tmp):
    (tmp / "recipes.parquet").write_bytes(b"partial")
    print("filling", flush=True)
    time.sleep(120)

_store.publish(Path(sys.argv[1]), "toyball-v1-seed9-n2", fill)
"""


def test_a_killed_writers_temporary_directory_goes_at_the_next_generation(sim, tmp_path):
    """A generation killed while writing (SIGKILL, OOM) leaves its ``.tmp-*`` folder; the next publication
    removes it at once (its writer no longer runs), of any key, and keeps a live writer's folder."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "filling"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (left,) = tmp_path.glob(".toyball-v1-seed9-n2.tmp-*")
    assert left.name.startswith(f".toyball-v1-seed9-n2.tmp-{_store.writer_tag().split('-')[0]}-{proc.pid}-")
    live = tmp_path / f".toyball-v1-seed9-n2.tmp-{_store.writer_tag()}-abc"  # this process: still running
    live.mkdir()
    reused = tmp_path / f".toyball-v1-seed9-n2.tmp-{_store._host()}-{os.getpid()}-1-abc"  # our pid, other start
    reused.mkdir()
    remote = tmp_path / f".toyball-v1-seed9-n2.tmp-{'0' * 8}-{proc.pid}-1-abc"  # another host: cannot tell
    remote.mkdir()
    legacy = tmp_path / f".toyball-v1-seed9-n2.tmp-{proc.pid}-abc"  # older versions' name, pid only
    legacy.mkdir()
    p = load_pool(sim, pool_seed=3, per_class=2, cache_dir=tmp_path, workers=1)  # another key
    assert not left.exists() and not reused.exists() and not legacy.exists()
    assert sorted(d.name for d in tmp_path.iterdir()) == sorted([p.path.name, live.name, remote.name])
    old = time.time() - 2 * _store.STALE_TMP_SECONDS
    os.utime(remote, (old, old))
    assert _store.clean_stale(tmp_path) == [remote]  # a day old: removed whatever its writer
    assert live.exists()

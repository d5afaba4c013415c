"""TraceBench inputs kept by reference (plugins/tasks/tracebench/inputs.py) on real BallDrop episodes: a finished
episode keeps no sample bytes; every sample file (test, support, held-out, clean pairs) rebuilds, one at a time and
without the pool, to the values it had; with every cache deleted the viewer draws the same charts and
``harness rescore`` of a programmatic episode gives the same score; a rebuilt sample that differs fails naming
the run and the pool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness import inputs
from tests.support.paths import REPO

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-low-direct.yaml").read_text())
SMALL = {"pool_per_class": 25, "heldout_per_class": 6}  # as tests/e2e/test_tracebench.py


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three runs sharing one pool cache: ``direct`` (euclidean-1nn), ``kept`` (the privileged baseline with
    ``--keep-inputs``: every file stays) and ``programmatic`` (euclidean-1nn's rule.py)."""
    base = tmp_path_factory.mktemp("tb-inputs")
    cache = base / "cache"
    out = {}
    for name, params, extra in (("direct", {}, ()), ("kept", {}, ("--agent", "euclidean-1nn-privileged",
                                                                   "--keep-inputs")),
                                ("programmatic", {"submission": "programmatic"}, ())):
        spec = base / f"{name}.yaml"
        spec.write_text(yaml.safe_dump({**BASE, "params": {**BASE["params"], **SMALL, **params}}))
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec), "--out",
                               str(base / name), *extra], capture_output=True, text=True, timeout=900, cwd=base,
                              env={**os.environ, "HARNESS_CACHE_DIR": str(cache)})
        assert proc.returncode == 0, proc.stderr[-3000:]
        out[name] = base / name
    return out


def episode(run: Path) -> Path:
    (folder,) = (run / "episodes").iterdir()
    return folder


@pytest.fixture
def no_cache(tmp_path, monkeypatch):
    """Every cache deleted (a fresh HARNESS_CACHE_DIR) and any pool load an error."""
    from tsagent_plugins.tasks.tracebench import pool, template

    def refuse(*args, **kwargs):
        raise AssertionError("the pool was loaded")

    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setattr(pool, "load_pool", refuse)
    monkeypatch.setattr(template, "_pool_cache", {})
    return tmp_path / "empty-cache"


def tracebench(pool_loader=None):
    from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate

    return TracebenchTemplate(pool_loader=pool_loader)


@pytest.mark.slow
def test_a_direct_episode_keeps_no_sample_and_no_key_copies(runs):
    root = episode(runs["direct"])
    assert not (root / "key" / "test_samples").exists()  # never written: direct answers are scored from key.json
    assert not list(root.rglob("*.parquet")) and not (root / "workspace" / "test_samples").exists()
    record = inputs.read(root)
    assert len(record["files"]) == 10 + 15 and {e["state"] for e in record["files"].values()} == {"by_reference"}
    assert record["files"][next(iter(record["files"]))]["reference"]["source"] == "balldrop pool seed 0 (simulator v2)"
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    assert size < 100_000, size


@pytest.mark.slow
def test_every_kind_of_sample_file_rebuilds_to_its_values_without_the_pool(runs, no_cache, tmp_path, monkeypatch):
    root = episode(runs["kept"])  # --keep-inputs: the files are there to compare with
    assert (root / "workspace" / "clean_pairs" / "test_samples").is_dir()
    record = inputs.read(root)
    assert {e["state"] for e in record["files"].values()} == {"present"}
    kinds = {rel.rsplit("/", 1)[0] for rel in record["files"]}
    assert kinds == {"workspace/test_samples", "workspace/train_samples", "workspace/clean_pairs/test_samples",
                     "workspace/clean_pairs/train_samples"}
    params = json.loads((runs["kept"] / "run.json").read_text())["episodes"][0]["params"]
    from tsagent_plugins.tasks.tracebench.template import TracebenchParams

    from tsagent_plugins.tasks.tracebench import _generation

    template = tracebench(pool_loader=lambda *a: pytest.fail("the pool loader was called"))
    # test and support samples carry their drawn values (recipes.json written with whole floats): nothing is
    # drawn again; without them (an older key's rounded recipes) the same values are drawn again
    drawn = _generation.sample_recipe
    monkeypatch.setattr(_generation, "sample_recipe", lambda *a: pytest.fail("drawn again"))
    for values_kept in (True, False):
        if not values_kept:
            monkeypatch.setattr(_generation, "sample_recipe", drawn)
        for rel, entry in record["files"].items():
            reference = dict(entry["reference"])
            assert "config" in reference
            if not values_kept:
                reference.pop("config"), reference.pop("intervention", None)
            dest = tmp_path / f"one{Path(rel).suffix}"
            template.rebuild_input(TracebenchParams.model_validate(params), "0", reference, dest)
            assert template.input_values_digest(dest) == entry["values"] == template.input_values_digest(root / rel), rel
    assert not no_cache.exists()  # nothing, not even a pool, was written to the cache


@pytest.mark.slow
def test_with_every_cache_deleted_the_viewer_draws_the_same_charts(runs, no_cache, tmp_path):
    from harness.view.data import load_runs, slug
    from harness.view.site import Site

    def page(run: Path) -> str:
        row = json.loads((episode(run) / "row.json").read_text())
        html = Site(load_runs([run]), reveal=True).render(f"runs/{run.name}/{slug(row['episode'])}/index.html")[0]
        return html.decode()

    kept = tmp_path / "kept"
    shutil.copytree(runs["kept"], kept)
    before = page(kept)
    assert before.count('<div class="sample') >= 10 and "Labelled examples" in before
    counts = inputs.release(episode(kept))  # what the run would have done without --keep-inputs
    assert counts == {"by_reference": 50} and not list(episode(kept).rglob("*.parquet"))
    assert page(kept) == before
    assert sorted(p.parent.name for p in no_cache.rglob("*.parquet")) == ["inputs"] * 15  # 10 tests, 5 examples (one per class)


@pytest.mark.slow
def test_rescore_of_a_programmatic_episode_with_every_cache_deleted_gives_the_same_score(runs, tmp_path):
    run = tmp_path / "programmatic"
    shutil.copytree(runs["programmatic"], run)
    root = episode(run)
    states = {rel.rsplit("/", 1)[0]: e["state"] for rel, e in inputs.read(root)["files"].items()}
    assert states == {"workspace/test_samples": "by_reference", "workspace/train_samples": "by_reference",
                      "key/test_samples": "by_reference", "key/heldout_samples": "by_reference"}
    before = json.loads((root / "score.json").read_text())
    row = json.loads((root / "row.json").read_text())
    (root / "score.json").write_text(json.dumps({"metrics": {}, "details": [], "warnings": []}))
    proc = subprocess.run([sys.executable, "-m", "harness", "rescore", str(run)], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "empty-cache")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    after = json.loads((root / "score.json").read_text())
    assert after["metrics"] == before["metrics"] and after["details"] == before["details"]
    assert after["metrics"]["heldout_n"] == 30 and after["metrics"]["heldout_n_invalid"] == 0
    again = json.loads((root / "row.json").read_text())
    assert again["heldout_accuracy"] == row["heldout_accuracy"] and again["rescored_at"]
    assert not list(root.rglob("*.parquet")) and not (root / "key" / "heldout_samples").exists()
    assert not (tmp_path / "empty-cache" / "pools").exists()


@pytest.mark.slow
def test_a_sample_that_no_longer_rebuilds_names_the_run_and_the_pool(runs, no_cache, monkeypatch):
    from harness import get_plugin

    root = episode(runs["direct"])
    rel = sorted(inputs.read(root)["files"])[0]
    sim = get_plugin("simulator", "balldrop")
    observe = type(sim).observe
    monkeypatch.setattr(type(sim), "observe", lambda self, clean, kappa, seed: observe(self, clean, kappa, seed) * 1.001)
    with pytest.raises(inputs.InputMismatch) as err:
        inputs.resolve(root, rel)
    text = str(err.value)
    assert str(runs["direct"]) in text and root.name in text and rel in text
    assert "balldrop pool seed 0 (simulator v2)" in text

"""End to end: the privileged baselines get the clean paired no-intervention trajectories in
their workspace, no other agent does, and programmatic tasks are refused before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from tests.support.paths import REPO

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-high-direct.yaml").read_text())
PARAMS = {"pool_per_class": 25, "heldout_per_class": 6}


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("harness-cache")


def run_cli(tmp_path, cache_dir, agent: str, params: dict | None = None,
            *options: str) -> tuple[Path, subprocess.CompletedProcess]:
    spec = {**BASE, "params": {**BASE["params"], **PARAMS, **(params or {})}}
    spec_file = tmp_path / f"{agent}.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    out = tmp_path / agent
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec_file), "--out", str(out),
                           "--agent", agent, *options], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    return out, proc


def episode(out: Path) -> Path:
    (ep,) = list((out / "episodes").iterdir())
    return ep


@pytest.mark.slow
def test_clean_pairs_only_for_the_privileged_agent(tmp_path, cache_dir):
    from harness.plugins import get
    from tsagent_plugins.tasks.tracebench.pool import load_pool

    # the inputs kept in the folder (not by reference, harness.inputs) to read the files the agent saw
    out, proc = run_cli(tmp_path, cache_dir, "euclidean-1nn-privileged", None, "--keep-inputs")
    assert proc.returncode == 0, proc.stderr[-3000:]
    ep = episode(out)
    ws, key = ep / "workspace", json.loads((ep / "key" / "key.json").read_text())
    sim = get("simulator", "balldrop")
    pool = load_pool(sim, pool_seed=0, per_class=25, cache_dir=cache_dir / "pools")
    truth, support = {}, {}
    for group, folder in (("test", "test_samples"), ("support", "train_samples")):
        pairs = sorted(p.name for p in (ws / "clean_pairs" / folder).iterdir())
        assert pairs == sorted(p.name for p in (ws / folder).iterdir()) == sorted(key[group])
        for name, item in key[group].items():
            sid = item["sample_id"]
            expected = pool.clean(sid) if pool.intervention(sid) is None else sim.simulate(pool.config(sid), None)
            got = pd.read_parquet(ws / "clean_pairs" / folder / name).to_numpy()
            np.testing.assert_allclose(got[:, :-1], expected.values)
            np.testing.assert_allclose(got[:, -1], expected.time)
            (truth if group == "test" else support)[name] = item["label"]

    # Appendix E's privileged 1-NN written out plainly on the same files
    order = key["labels"]

    def feats(folder, name):
        x = pd.read_parquet(ws / folder / name).to_numpy()[:, :-1] - \
            pd.read_parquet(ws / "clean_pairs" / folder / name).to_numpy()[:, :-1]
        peak = np.abs(x[:, 2]).max()
        if peak > 0:
            x[:, 2] /= peak
        return x

    train = [(feats("train_samples", n), order.index(lab), Path(n).stem, lab) for n, lab in sorted(support.items())]
    correct = 0
    for name, label in truth.items():
        x = feats("test_samples", name)
        correct += min(train, key=lambda s: (np.sqrt(np.mean((x - s[0]) ** 2)), s[1], s[2]))[3] == label
    row = pd.read_parquet(out / "results.parquet").iloc[0]
    assert row["status"] == "ok" and row["accuracy"] == pytest.approx(correct / len(truth))

    plain_out, proc = run_cli(tmp_path, cache_dir, "euclidean-1nn", None, "--keep-inputs")
    assert proc.returncode == 0, proc.stderr[-3000:]
    plain = episode(plain_out) / "workspace"
    assert not (plain / "clean_pairs").exists()
    assert sorted(p.name for p in plain.iterdir()) == ["results.json", "test_samples", "train_labels.json",
                                                       "train_samples"]


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["euclidean-1nn-privileged", "dtw-1nn"])
def test_programmatic_task_refused_before_the_run(tmp_path, cache_dir, agent):
    out, proc = run_cli(tmp_path, cache_dir, agent, {"submission": "programmatic"})
    assert proc.returncode != 0 and "refuses this task" in proc.stderr and "Traceback" not in proc.stderr
    assert not (out / "episodes").exists()


@pytest.mark.slow
def test_aeon_episodes_pay_no_jit_with_the_cache_built_by_the_harness(tmp_path, cache_dir):
    """numba's cache, built once by the harness (here into a fresh cache folder), covers every function a
    MiniRocket and a DTW episode call: the solvers' ``timings`` report 0 s of compilation."""
    pytest.importorskip("aeon")
    for agent in ("minirocket-ridge", "dtw-1nn"):
        out, proc = run_cli(tmp_path, cache_dir, agent)
        assert proc.returncode == 0, proc.stderr[-3000:]
        row = pd.read_parquet(out / "results.parquet").iloc[0]
        assert row["status"] == "ok", row["error"]
        lines = [x for x in (episode(out) / "agent.stderr").read_text().splitlines() if x.startswith("timings ")]
        timings = json.loads(lines[0][len("timings "):])
        assert timings["jit"] == 0.0, f"{agent} compiled for {timings['jit']} s: the numba cache missed"
        assert timings["fit"] + timings["predict"] > 0
    assert len(list((cache_dir / "numba").glob("*/build.json"))) == 1  # built once, shared by both agents

"""End to end: `harness run` on a BallDrop episode solved by euclidean-1nn inside a local sandbox.

The accuracy in results.parquet must equal a 1-NN computed here, in-process and
independently of the agent's code, on the same workspace files and answer key.
"""

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
from tests.support import docs
from tests.support.paths import REPO

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-low-direct.yaml").read_text())


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("harness-cache")


def run_cli(tmp_path, cache_dir, params: dict, *extra: str) -> tuple[Path, subprocess.CompletedProcess]:
    spec = {**BASE, "params": {**BASE["params"], "pool_per_class": 25, "heldout_per_class": 6, **params}}
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    out = tmp_path / "run"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec_file), "--out", str(out), *extra],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


def one_nn_accuracy(files: list[Path], truth: dict[str, str], support_dir: Path, support_labels: dict[str, str],
                    impulse_col: int) -> float:
    """Appendix E 1-NN written out plainly: RMS distance, impulse scaled by its max |.|, ties by (d, class, id)."""
    order = ["coefficient of restitution", "mass", "drag coefficient", "gravity acceleration", "no parameter change"]

    def feats(path: Path) -> np.ndarray:
        x = pd.read_parquet(path).iloc[:, :-1].to_numpy(dtype=float).copy()
        peak = np.abs(x[:, impulse_col]).max()
        if peak > 0:
            x[:, impulse_col] /= peak
        return x.ravel()

    support = [(feats(support_dir / name), order.index(label), Path(name).stem, label)
               for name, label in sorted(support_labels.items())]
    correct = 0
    for path in files:
        x = feats(path)
        best = min(support, key=lambda s: (np.sqrt(np.mean((x - s[0]) ** 2)), s[1], s[2]))
        correct += best[3] == truth[path.name]
    return correct / len(files)


def rebuilt(ep: Path, folder: str, cache_dir: Path) -> list[Path]:
    """The files of ``folder`` of episode folder ``ep`` as named there, rebuilt (harness.inputs, with
    ``HARNESS_CACHE_DIR`` set by the caller) into one temporary folder beside the cache."""
    from harness import inputs

    out = cache_dir / "rebuilt" / ep.name / folder
    out.mkdir(parents=True, exist_ok=True)
    for name in inputs.listing(ep, folder):
        (out / name).write_bytes(inputs.resolve(ep, f"{folder}/{name}").read_bytes())
    return sorted(out.glob("*.parquet"))


def episode_dir(out: Path) -> Path:
    (ep,) = list((out / "episodes").iterdir())
    return ep


@pytest.mark.slow
def test_direct_episode_accuracy_matches_in_process_1nn(tmp_path, cache_dir, monkeypatch):
    out, proc = run_cli(tmp_path, cache_dir, {})
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(cache_dir))
    assert "sandbox bubblewrap" in proc.stderr or "sandbox unshare" in proc.stderr
    frame = pd.read_parquet(out / "results.parquet")
    assert len(frame) == 1
    row = frame.iloc[0]
    assert row["status"] == "ok" and row["n_test"] == 10 and row["agent"] == "euclidean-1nn"
    assert "accuracy" in proc.stdout and "results.parquet" in proc.stdout
    # stderr is a pipe, not a terminal: no live bar, so each finished episode gets a line of its own
    assert f"[1/1] {row['episode']} (euclidean-1nn) ok · done 1 · running 0 · failed 0" in proc.stderr
    ep = episode_dir(out)
    key = json.loads((ep / "key" / "key.json").read_text())
    truth = {name: item["label"] for name, item in key["test"].items()}
    support = json.loads((ep / "workspace" / "train_labels.json").read_text())
    assert len(support) == 15 and len(truth) == 10
    # the samples left the folder with the episode (kept by reference) and are rebuilt from their recipes
    assert not list(ep.rglob("*.parquet")) and not (ep / "key" / "test_samples").exists()
    files = rebuilt(ep, "workspace/test_samples", cache_dir)
    support_dir = Path(rebuilt(ep, "workspace/train_samples", cache_dir)[0]).parent
    expected = one_nn_accuracy(files, truth, support_dir, support, impulse_col=2)
    assert row["accuracy"] == pytest.approx(expected)
    run = json.loads((out / "run.json").read_text())
    assert run["profiles"]["euclidean-1nn"]["agent"] == "euclidean-1nn" and run["sandbox"] == row["sandbox"]
    assert run["identity"] == {"task": "balldrop-low-direct", "profile": "euclidean-1nn"}
    assert row["episode"] == f"balldrop-low-direct-seed0-{row['episode_id']}" and len(row["episode_id"]) == 12


@pytest.mark.slow
def test_programmatic_episode_in_unshare_sandbox_scores_test_and_heldout(tmp_path, cache_dir):
    out, proc = run_cli(tmp_path, cache_dir, {"submission": "programmatic"}, "--sandbox", "unshare", "--keep-inputs")
    row = pd.read_parquet(out / "results.parquet").iloc[0]
    assert row["sandbox"] == "unshare" and row["status"] == "ok"
    ep = episode_dir(out)
    assert (ep / "workspace" / "rule.py").exists() and not (ep / "workspace" / "results.json").exists()
    key = json.loads((ep / "key" / "key.json").read_text())
    support = json.loads((ep / "workspace" / "train_labels.json").read_text())
    for split, folder, column in (("test", "test_samples", "accuracy"), ("heldout", "heldout_samples", "heldout_accuracy")):
        truth = {name: item["label"] for name, item in key[split].items()}
        files = sorted((ep / "key" / folder).glob("*.parquet"))
        assert len(files) == len(truth) > 0
        assert all(f.stat().st_nlink == 1 for f in files)  # private copies, no link into a shared store
        expected = one_nn_accuracy(files, truth, ep / "workspace" / "train_samples", support, impulse_col=2)
        assert row[column] == pytest.approx(expected), split
    assert row["heldout_n"] == 30 and row["heldout_n_invalid"] == 0


@pytest.mark.slow
def test_resume_skips_finished_episodes(tmp_path, cache_dir):
    out, _ = run_cli(tmp_path, cache_dir, {})
    first = (episode_dir(out) / "row.json").read_text()
    out2, proc = run_cli(tmp_path, cache_dir, {})
    assert out2 == out and (episode_dir(out) / "row.json").read_text() == first


@pytest.mark.slow
def test_interrupted_episode_is_started_afresh_on_resume(tmp_path, cache_dir):
    out, _ = run_cli(tmp_path, cache_dir, {})
    ep = episode_dir(out)
    (ep / "row.json").unlink()  # as if the harness was killed after the agent ran
    (ep / "workspace" / "stray.txt").write_text("left by the killed attempt")
    out2, proc = run_cli(tmp_path, cache_dir, {})
    assert "resuming" in proc.stderr and (ep / "row.json").exists()
    assert not (ep / "workspace" / "stray.txt").exists()
    assert len(pd.read_parquet(out2 / "results.parquet")) == 1


@pytest.mark.slow
def test_resume_refuses_a_run_of_another_task(tmp_path, cache_dir):
    out, _ = run_cli(tmp_path, cache_dir, {})
    spec = {**BASE, "name": "other", "params": {**BASE["params"], "pool_per_class": 25, "heldout_per_class": 6,
                                                 "noise": "high"}}
    (tmp_path / "other.yaml").write_text(yaml.safe_dump(spec))
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache_dir)}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(tmp_path / "other.yaml"),
                           "--out", str(out)], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2
    assert "holds a run of another task or agent profile" in proc.stderr and "Traceback" not in proc.stderr


README = docs.text()  # the README and the documentation pages


@pytest.mark.slow
def test_readme_set_example_on_a_shipped_spec_runs_the_overridden_condition(tmp_path, cache_dir):
    """The docs, Running: ``--set noise=high --set n_test=20`` on a shipped spec (they used to state a
    slug that the override contradicted); the row and the folder name say what ran."""
    assert "--set noise=high --set n_test=20" in README
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", "tasks/tracebench/balldrop-low-direct.yaml",
                           "--set", "noise=high", "--set", "n_test=20", "--out", str(out)],
                          capture_output=True, text=True, env={**os.environ, "HARNESS_CACHE_DIR": str(cache_dir)},
                          timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = pd.read_parquet(out / "results.parquet").iloc[0]
    assert (row["task"], row["noise"], row["slug"], row["n_test"], row["status"]) == (
        "balldrop-low-direct", "high", "gentle-pine", 20, "ok")
    assert row["episode"] == f"balldrop-high-direct-n20-seed0-{row['episode_id']}"
    key = json.loads((episode_dir(out) / "key" / "key.json").read_text())
    assert key["noise"] == "high" and len(key["test"]) == 20


def test_readme_grid_experiment_plans_every_condition(tmp_path):
    """The docs, Experiments: the ``my-grid`` experiment (a noise axis over shipped specs) plans 3 specs
    x 2 noise levels x 2 seeds, each with the slug of the settings it runs, and no repeated settings."""
    import re

    from click.testing import CliRunner

    from harness.cli import cli
    from harness.config import load_experiment
    from harness.experiment import plan_experiment
    from harness.profiles import resolve_profile
    from harness.run import load_task

    block = re.search(r"```yaml\n(name: my-grid\n.*?)```", README, re.S)
    assert block is not None
    (tmp_path / "experiments").mkdir()
    (tmp_path / "tracebench").symlink_to(REPO / "tasks" / "tracebench")
    file = tmp_path / "experiments" / "my-grid.yaml"
    file.write_text(block.group(1))
    result = CliRunner().invoke(cli, ["plan", "--experiment", str(file), "--out", str(tmp_path / "run"),
                                      "--episodes"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "total: 12 episode(s), 0 done, 12 to run" in result.output and "warning" not in result.output
    (stage,) = plan_experiment(load_experiment(file), file, tmp_path / "run", resolve_profile, load_task)
    units = {(u.task.spec.name, u.task.params.noise, u.seed): u.task.params for u in stage.units}
    assert len(units) == 12 and {p.n_test for p in units.values()} == {20}
    assert {name for name, _, _ in units} == {"balldrop-low-direct", "massslide-low-direct",
                                              "massslide-low-programmatic"}
    assert units[("balldrop-low-direct", "high", 1)].slug == "gentle-pine"
    assert units[("massslide-low-direct", "low", 0)].slug == "gentle-cloud"
    assert units[("massslide-low-programmatic", "high", 0)].slug == "gentle-orbit"
    assert "balldrop-high-direct-n20-seed1-" in result.output and "balldrop-low-direct-n20-seed1-" in result.output

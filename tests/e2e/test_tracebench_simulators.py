"""End to end: `harness run` on a BounceBall and a MassSlide episode (euclidean-1nn, local sandbox)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
import yaml
from tests.support.paths import REPO



@pytest.mark.slow
@pytest.mark.parametrize("sim", ["bounceball", "massslide"])
def test_episode_runs_and_is_scored(sim, tmp_path):
    base = yaml.safe_load((REPO / f"tasks/tracebench/{sim}-low-direct.yaml").read_text())
    spec = {**base, "params": {**base["params"], "pool_per_class": 25, "heldout_per_class": 0}}
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec))
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec_file), "--out",
                           str(tmp_path / "run"), "--agent", "euclidean-1nn"],
                          capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = pd.read_parquet(tmp_path / "run" / "results.parquet").iloc[0]
    assert (row["simulator"], row["slug"], row["status"]) == (sim, "gentle-cloud", "ok")
    key = json.loads(next((tmp_path / "run").rglob("key.json")).read_text())
    truth = [v["label"] for v in key["test"].values()]
    assert len(truth) == 10 and set(truth) <= set(key["labels"])
    assert 0.0 <= row["accuracy"] <= 1.0 and row["accuracy"] * 10 == pytest.approx(round(row["accuracy"] * 10))

"""A scripted CLI agent episode on BounceBall (Codex) and on MassSlide (Claude Code), end to end.

Each runs the documented command line, ``harness run --task tasks/tracebench/<sim>-low-direct.yaml
--agent <profile> --model-backend scripted --script examples/scripts/<cli>-<sim>.yaml --sandbox docker``,
with a small pool, then checks the episode as the BallDrop terminal tests do
(``tests.support.terminal_e2e.check_success``): status ok, no script assertion failure, the shell
command really ran, a scored row and a valid ATIF trajectory.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from tests.support.terminal_e2e import REPO, SCRIPTS, Episode, check_success, e2e_marks

from harness.store import RunStore
from harness.trajectory import load_trajectory, to_dict
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO

pytestmark = e2e_marks

SMALL = ["pool_per_class=25", "heldout_per_class=2", "n_test=4"]


@pytest.mark.parametrize("sim,profile,script", [
    ("bounceball", "gpt-5.5", "codex-bounceball.yaml"),
    ("massslide", "claude-opus-4.6", "claude-massslide.yaml"),
])
def test_scripted_cli_episode(tmp_path, sim, profile, script):
    out = tmp_path / "run"
    sets = [arg for item in SMALL for arg in ("--set", item)]
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "run", "--task", str(REPO / f"tasks/tracebench/{sim}-low-direct.yaml"),
         "--agent", profile, "--model-backend", "scripted", "--script", str(SCRIPTS / script),
         "--sandbox", "docker", "--out", str(out), *sets],
        capture_output=True, text=True, env=env, timeout=900, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pd.read_parquet(out / "results.parquet").to_dict("records")
    assert len(rows) == 1
    row = rows[0]
    assert (row["simulator"], row["slug"], row["n_test"]) == (sim, "gentle-cloud", 4)
    root = RunStore(out).episode(row["episode"]).root
    trajectory = to_dict(load_trajectory(root / "trajectory.json"))
    episode = Episode(root, row, trajectory, load_script(SCRIPTS / script))
    check_success(episode, profile, "direct")
    # the labels scored are the simulator's own (Appendix A release strings)
    key = episode.key()
    assert {v["label"] for v in key["test"].values()} <= set(key["labels"])
    predictions = json.loads((episode.workspace / "results.json").read_text())
    assert {p[0] for p in predictions.values()} <= set(key["labels"])

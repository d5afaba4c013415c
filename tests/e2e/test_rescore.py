"""End to end: a real BallDrop run (euclidean-1nn in a local sandbox) records where its values came from, and
`harness rescore` recomputes them with today's code: an unchanged scorer gives the same row (the new
versions and time aside), a changed TraceBench scorer changes the numbers and the recorded version, and a
programmatic answer's rule.py is run again in its sandbox (edited after the run, its new predictions are
scored; a copy of the stored values cannot pass)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pandas as pd
import pytest
import yaml

from harness import plugins as registry
from harness.provenance import spec_sha256
from harness.rescore import rescore
from harness.run import load_task
from tests.support.paths import REPO

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-low-direct.yaml").read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(direct run, programmatic run, the direct run's spec file), each run once for the module."""
    root = tmp_path_factory.mktemp("rescore")
    env = {**os.environ, "HARNESS_CACHE_DIR": str(root / "cache")}
    out = []
    for submission in ("direct", "programmatic"):
        spec = {**BASE, "params": {**BASE["params"], "pool_per_class": 25, "heldout_per_class": 6,
                                   "submission": submission}}
        spec_file = root / f"{submission}.yaml"
        spec_file.write_text(yaml.safe_dump(spec))
        proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task", str(spec_file), "--out",
                               str(root / submission)], capture_output=True, text=True, env=env, timeout=600,
                              cwd=root)
        assert proc.returncode == 0, proc.stderr[-3000:]
        out.append(root / submission)
    return out[0], out[1], root / "direct.yaml"


def copy(run: Path, tmp_path: Path) -> Path:
    target = tmp_path / run.name
    shutil.copytree(run, target, symlinks=True)
    return target


def episode(run: Path) -> Path:
    (folder,) = (run / "episodes").iterdir()
    return folder


def row(run: Path) -> dict:
    return json.loads((episode(run) / "row.json").read_text())


@pytest.mark.slow
def test_a_real_runs_rows_name_their_code_and_inputs(runs):
    direct, _, spec_file = runs
    frame = pd.read_parquet(direct / "results.parquet")
    (found,) = frame.to_dict("records")
    template = registry.get("task_template", "tracebench")
    extractors = {name: reg.obj.version for name, reg in registry.plugins().registry("metric_extractor").items()}
    assert found["scorer_version"] == template.scorer_version
    assert json.loads(found["extractor_versions"]) == extractors
    task = load_task(spec_file)
    assert found["spec_sha256"] == spec_sha256(task.spec)
    assert found["inputs_digest"] == template.inputs_digest(task.params, "0", episode(direct) / "key")
    assert len(found["inputs_digest"]) == 16
    assert found["harness_version"] == metadata.version("tsagent-harness")
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO)
    assert found["harness_commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    assert pd.isna(found["rescored_at"]) and row(direct)["rescored_at"] is None
    run = json.loads((direct / "run.json").read_text())
    assert run["provenance"] == {"harness_version": found["harness_version"], "harness_commit": found["harness_commit"],
                                 "specs": {str(spec_file): found["spec_sha256"]},
                                 "scorers": {"tracebench": template.scorer_version}, "extractors": extractors}


@pytest.mark.slow
def test_rescore_with_todays_code_keeps_what_did_not_change(runs, tmp_path):
    run = copy(runs[0], tmp_path)
    before = row(run)
    outcome = rescore(run)
    after = row(run)
    assert outcome.rescored == [episode(run).name] and outcome.changed == {} and outcome.skipped == []
    assert after["rescored_at"] and {k: v for k, v in after.items() if k != "rescored_at"} == \
        {k: v for k, v in before.items() if k != "rescored_at"}


@pytest.mark.slow
def test_a_changed_scorer_changes_the_numbers_and_records_its_version(runs, tmp_path, monkeypatch):
    import tsagent_plugins.tasks.tracebench.template as module
    from harness import EpisodeScore

    run = copy(runs[0], tmp_path)
    before = row(run)
    real = module.score_episode

    def shortlist_only(workspace, key_dir, key, runner):  # "today's" scorer: top-1 counts any listed label
        score = real(workspace, key_dir, key, runner)
        hits = [d["true_label"] in (d["predicted"] if isinstance(d["predicted"], list) else []) for d in score.details]
        return EpisodeScore({**score.metrics, "accuracy": 0.5 + sum(hits) / len(hits) / 2}, score.details)

    monkeypatch.setattr(module, "score_episode", shortlist_only)
    monkeypatch.setattr(module.TracebenchTemplate, "scorer_version", "test-2")
    rescore(run)
    after = row(run)
    details = json.loads((episode(run) / "score.json").read_text())["details"]
    expected = 0.5 + sum(isinstance(d["predicted"], list) and d["true_label"] in d["predicted"]
                         for d in details) / len(details) / 2
    assert after["accuracy"] == pytest.approx(expected) and after["accuracy"] != before["accuracy"]
    assert after["scorer_version"] == "test-2" and before["scorer_version"] == "1"
    assert pd.read_parquet(run / "results.parquet").iloc[0]["accuracy"] == pytest.approx(expected)
    assert json.loads((run / "run.json").read_text())["rescores"][-1]["scorers"] == {"tracebench": "test-2"}


@pytest.mark.slow
def test_rescore_runs_an_edited_rule_again_in_its_sandbox(runs, tmp_path):
    run = copy(runs[1], tmp_path)
    folder = episode(run)
    key = json.loads((folder / "key" / "key.json").read_text())
    label = key["labels"][1]
    (folder / "workspace" / "rule.py").write_text(f"def predict(path):\n    return [{label!r}]\n")
    rescore(run)
    after = row(run)
    for split, column in (("test", "accuracy"), ("heldout", "heldout_accuracy")):
        truths = [t["label"] for t in key[split].values()]
        assert after[column] == pytest.approx(sum(t == label for t in truths) / len(truths)), split
    assert after["heldout_n"] == len(key["heldout"]) == 30 and after["n_invalid"] == 0

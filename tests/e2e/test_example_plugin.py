"""The shipped example plugins (``tests/example_plugin/`` and every folder of ``examples/plugins/``), as a third
party uses them: copied to a folder of any name, their tests pass with ``pytest``; the simulator's entry point
registers it; the agent, installed from its ``pyproject.toml``, runs a TraceBench episode by its name with the
profile it ships; the plugin pages of the documentation show the shipped files themselves (snippets)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from tests.support.paths import REPO

EXAMPLE = REPO / "tests" / "example_plugin"
EXAMPLES = [EXAMPLE, *sorted(p for p in (REPO / "examples" / "plugins").iterdir() if p.is_dir())]
AGENT_EXAMPLE = REPO / "examples" / "plugins" / "nearest-centroid-agent"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_a_copy_in_a_hyphenated_folder_passes_its_tests(example, tmp_path):
    copy = tmp_path / "my-plugin"
    shutil.copytree(example, copy, ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=copy,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    summary = proc.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary


def test_its_entry_point_registers_the_simulator(make_distribution, fresh_plugins):
    make_distribution("harness-conveyor", {"conveyor": "conveyor"},
                      {"conveyor": (EXAMPLE / "conveyor.py").read_text()})
    registered = fresh_plugins().registries["simulator"]["conveyor"]
    assert registered.obj.name == "conveyor" and registered.obj.channels[0].name == "Reading"


@pytest.mark.slow
def test_the_installed_agent_runs_a_tracebench_episode_by_its_name(tmp_path):
    """``pip install`` of the agent example (its pyproject: entry point, the profile as package data), then
    ``harness run --agent nearest-centroid`` from a folder without ``agent_profiles/``: the profile the package
    ships is found, the program it binds runs in a local sandbox and the row is scored."""
    source, site = tmp_path / "nearest-centroid-agent", tmp_path / "site"
    shutil.copytree(AGENT_EXAMPLE, source, ignore=shutil.ignore_patterns("__pycache__"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                              "--no-build-isolation", "--target", str(site), str(source)],
                             capture_output=True, text=True, timeout=300)
    assert install.returncode == 0, install.stderr[-3000:]
    assert (site / "nearest_centroid" / "nearest-centroid.yaml").is_file()
    env = {**os.environ, "PYTHONPATH": str(site), "HARNESS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HARNESS_PROFILES", None)
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "--task",
                           str(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"), "--agent", "nearest-centroid",
                           "--set", "pool_per_class=25", "--set", "heldout_per_class=6", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row = pd.read_parquet(out / "results.parquet").iloc[0]
    assert (row["status"], row["agent"], row["profile"], row["n_test"]) == ("ok", "nearest-centroid",
                                                                            "nearest-centroid", 10)
    assert row["sandbox"] in ("bubblewrap", "unshare")  # isolated: the program came in through ro_binds
    assert isinstance(row["accuracy"], float) and 0.0 <= row["accuracy"] <= 1.0
    [episode] = (out / "episodes").iterdir()
    answers = json.loads((episode / "workspace" / "results.json").read_text())
    labels = json.loads((episode / "key" / "key.json").read_text())["labels"]
    assert len(answers) == 10 and all(len(a) == 1 and a[0] in labels for a in answers.values())


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_docs_show_every_shipped_file(example):
    """Each example's files are included verbatim into a plugin page (``--8<--`` snippets, resolved by the
    strict site build), so a listing in the docs cannot drift from the code that is tested."""
    pages = "\n".join(p.read_text() for p in (REPO / "docs" / "plugins").glob("*.md"))
    included = set(re.findall(r'--8<-- "([^":]+)', pages))
    for path in sorted(example.iterdir()):
        if path.suffix in (".py", ".toml") and path.name != "__init__.py" and path.name != "conftest.py":
            assert str(path.relative_to(REPO)) in included, path

"""The shipped example plugins (``tests/example_plugin/`` and every folder of ``examples/plugins/``), as a third
party uses them: copied to a folder of any name, their tests pass with ``pytest``; the simulator's entry point
registers it; the plugin pages of the documentation show the shipped files themselves (snippets)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from tests.support.paths import REPO

EXAMPLE = REPO / "tests" / "example_plugin"
EXAMPLES = [EXAMPLE, *sorted(p for p in (REPO / "examples" / "plugins").iterdir() if p.is_dir())]


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


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_the_docs_show_every_shipped_file(example):
    """Each example's files are included verbatim into a plugin page (``--8<--`` snippets, resolved by the
    strict site build), so a listing in the docs cannot drift from the code that is tested."""
    pages = "\n".join(p.read_text() for p in (REPO / "docs" / "plugins").glob("*.md"))
    included = set(re.findall(r'--8<-- "([^":]+)', pages))
    for path in sorted(example.iterdir()):
        if path.suffix in (".py", ".toml") and path.name != "__init__.py" and path.name != "conftest.py":
            assert str(path.relative_to(REPO)) in included, path

"""The shipped example plugin (``tests/example_plugin/``), as a third party uses it: copied to a folder of
any name, its tests pass with ``pytest``, its entry point registers the simulator, and the README's
listings are the shipped files."""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.support.paths import REPO

EXAMPLE = REPO / "tests" / "example_plugin"


def _code(text: str) -> list[str]:
    """The lines of a listing that are code: no docstring, comment-only or blank lines."""
    if text.startswith('"""'):
        text = text.split('"""', 2)[2]
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _readme_block(lang: str, header: str) -> str:
    [block] = [b for b in (REPO / "README.md").read_text().split(f"```{lang}\n")[1:] if b.startswith(header)]
    return block.split("```")[0]


def test_a_copy_in_a_hyphenated_folder_passes_its_tests(tmp_path):
    copy = tmp_path / "my-plugin"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
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


def test_the_readme_shows_the_shipped_test_file_and_pyproject():
    assert _code(_readme_block("python", "# test_conveyor.py")) == _code((EXAMPLE / "test_conveyor.py").read_text())
    assert _code(_readme_block("toml", "# pyproject.toml")) == _code((EXAMPLE / "pyproject.toml").read_text())

"""Shared fixtures: throwaway plugin distributions and an isolated plugin set.

Layout of the tests (checked by ``tests/architecture/test_tests_layout.py``): the tests of a module
are found by its path.  ``harness/<package>/<module>.py`` is tested in
``tests/harness/<package>/test_<module>.py`` and ``plugins/<package>/<module>.py`` in
``tests/plugins/<package>/test_<module>.py``; a module with several test files adds an aspect
(``test_<module>_<aspect>.py``), and a test of a whole package sits beside it, named after it
(``tests/plugins/agents/test_terminal.py``).  Tests of the whole pipeline (real runs end to end,
experiments, scale runs) are in ``tests/e2e/``, rules about the code base as a whole (layers, core
names, start-up, this layout) in ``tests/architecture/``.  Shared helpers are the package
``tests.support`` (``from tests.support.paths import REPO, TESTS``); data stays in ``tests/fixtures/``
and ``tests/golden/``.  Every test folder but ``tests/example_plugin/`` is a package, so same-named modules do not
collide; the example plugin is shaped like a third party's plugin folder (flat modules), so that a copy
works under any folder name.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from harness import plugins as registry


@pytest.fixture(autouse=True)
def _no_inherited_columns(monkeypatch):
    """The CLI's console width never comes from the runner's ``$COLUMNS`` (pytest-xdist sets 80 in its
    workers); a test that wants one sets it."""
    monkeypatch.delenv("COLUMNS", raising=False)


@pytest.fixture
def make_distribution(tmp_path, monkeypatch):
    """Create an installed-looking distribution with ``harness`` entry points.

    ``make_distribution("dist-name", {"ep-name": "module_name"}, {"module_name": "source"})``, with
    ``commands={"cmd-name": "module_name:command"}`` for entry points of the group ``harness.commands``.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))

    def make(dist: str, entry_points: dict[str, str], modules: dict[str, str], version: str = "1.0",
             commands: dict[str, str] | None = None):
        info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        lines = "\n".join(f"{k} = {v}" for k, v in entry_points.items())
        groups = f"[harness]\n{lines}\n"
        if commands:  # ``harness.commands`` entry points: name -> "module:command"
            groups += "[harness.commands]\n" + "".join(f"{k} = {v}\n" for k, v in commands.items())
        (info / "entry_points.txt").write_text(groups)
        for name, source in modules.items():
            (site / f"{name}.py").write_text(textwrap.dedent(source))
            sys.modules.pop(name, None)
        return site

    yield make


@pytest.fixture
def fresh_plugins():
    """Load a fresh plugin set (after throwaway distributions are made) and restore afterwards."""
    saved = registry.reset(None)

    def load():
        new = registry.Plugins()
        registry.reset(new)
        return new

    yield load
    registry.reset(saved)


@pytest.fixture
def profiles(tmp_path, monkeypatch):
    """A profile folder searched first (``$HARNESS_PROFILES``), from a clean working directory."""
    folder = tmp_path / "profiles"
    folder.mkdir()
    monkeypatch.setenv("HARNESS_PROFILES", str(folder))
    monkeypatch.chdir(tmp_path)
    return folder

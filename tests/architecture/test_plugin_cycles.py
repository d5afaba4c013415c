"""No import cycles inside a task plugin: pyproject.toml's ``acyclic_siblings`` contract over
``tsagent_plugins.tasks`` finds a circle between the modules or folders of any package under it, even one
held open by an import inside a function (the way ``dr_report <-> dr_figures <-> strata``, ``flat <-> loader``
and ``tracebench.released <-> template`` once were, issue #35).

The contract is checked on a copy of ``plugins/tasks/`` (as the package ``copied``, the plugins' own imports
renamed), once as it is and once with a function-level circular import added to a drcik module."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest
from importlinter import configuration
from importlinter.application.use_cases import lint_imports

from tests.support.paths import REPO

CONTRACTS = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
#: the contract under test, exactly as pyproject.toml writes it
ACYCLIC = next(c for c in CONTRACTS if c["type"] == "acyclic_siblings" and c["ancestors"] == ["tsagent_plugins.tasks"])


def _toml(value) -> str:
    return "[" + ", ".join(f'"{v}"' for v in value) + "]" if isinstance(value, list) else f'"{value}"'


def copy_tasks(root: Path) -> Path:
    """``plugins/tasks/`` copied to ``root/copied/tasks/`` (Python files only), its imports of
    ``tsagent_plugins`` renamed to ``copied``; the contract written to ``root/pyproject.toml`` for ``copied``."""
    package = root / "copied"
    for source in (REPO / "plugins" / "tasks").rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        target = package / "tasks" / source.relative_to(REPO / "plugins" / "tasks")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(source.read_text(encoding="utf-8").replace("tsagent_plugins.", "copied."), encoding="utf-8")
    (package / "__init__.py").write_text("")
    contract = {**ACYCLIC, "ancestors": ["copied.tasks"]}
    (root / "pyproject.toml").write_text('[tool.importlinter]\nroot_packages = ["copied"]\n\n'
                                         "[[tool.importlinter.contracts]]\n"
                                         + "".join(f"{k} = {_toml(v)}\n" for k, v in contract.items()))
    return package


def lint(root: Path, monkeypatch, capsys) -> tuple[bool, str]:
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    configuration.configure()
    kept = lint_imports(config_filename=str(root / "pyproject.toml"), cache_dir=None, no_logo=True)
    return kept, capsys.readouterr().out


def test_the_task_plugins_as_they_are_keep_the_contract(tmp_path, monkeypatch, capsys):
    copy_tasks(tmp_path)
    kept, report = lint(tmp_path, monkeypatch, capsys)
    assert kept and "KEPT" in report, report


@pytest.mark.parametrize("module, imported, package", [
    # the Figure 16 helpers' old circle: figures reading research_tables inside a function
    ("drcik/report/figures.py", "copied.tasks.drcik.report.research_tables", "copied.tasks.drcik.report"),
    # the flat layout parsing with the loader's parse_task again
    ("drcik/dataset/flat.py", "copied.tasks.drcik.dataset.loader", "copied.tasks.drcik.dataset"),
    # a stage folder reaching back into the plugin's face (the face imports every stage)
    ("drcik/research/submissions.py", "copied.tasks.drcik.spec", "copied.tasks.drcik"),
])
def test_a_function_level_circular_import_breaks_the_contract(tmp_path, monkeypatch, capsys, module, imported,
                                                              package):
    path = copy_tasks(tmp_path) / "tasks" / module
    path.write_text(path.read_text(encoding="utf-8")
                    + f"\n\ndef _circle():\n    import {imported}\n\n    return {imported}\n", encoding="utf-8")
    kept, report = lint(tmp_path, monkeypatch, capsys)
    assert not kept, report
    assert f"No cycles are allowed in {package}." in report, report

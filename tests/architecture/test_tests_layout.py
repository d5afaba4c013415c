"""The tests mirror the source layout (the rule is in tests/conftest.py): a module's tests are found by its path."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import REPO, TESTS

#: tests/<mirror> -> the source folder it mirrors
MIRRORS = {"harness": REPO / "harness", "plugins": REPO / "plugins"}
#: what tests/ itself may hold besides the mirrors
TOP = {"__init__.py", "conftest.py", "architecture", "e2e", "support", "fixtures", "golden", "example_plugin",
       "artifacts", "__pycache__"}
#: folders of data, not of test modules
DATA = {"fixtures", "golden", "artifacts", "__pycache__"}
#: a third party's plugin folder, shaped like one: flat modules and no package, so that a copy works under
#: any folder name (``from conveyor import Conveyor``); its modules' names are its own
STANDALONE = {"example_plugin"}


def _names(folder: Path) -> set[str]:
    """Module and package names in the source folder ``folder``."""
    return {p.stem for p in folder.glob("*.py")} | {p.name for p in folder.iterdir()
                                                    if p.is_dir() and (p / "__init__.py").exists()}


def misplaced(tests: Path = TESTS, mirrors: dict[str, Path] = MIRRORS) -> list[str]:
    """One line per test file that is not where the rule puts it, naming the file and where it belongs."""
    problems = []
    for mirror, source in mirrors.items():
        for test in sorted((tests / mirror).rglob("test_*.py")):
            folder = test.parent.relative_to(tests / mirror)
            where = f"{source.name}/{folder.as_posix()}/".replace("/./", "/")
            shown = test.relative_to(tests.parent).as_posix()
            if not (source / folder / "__init__.py").exists():
                problems.append(f"{shown}: {where} is not a package of the source; "
                                f"put the file in the tests folder that mirrors its module's package")
                continue
            stem, names = test.stem[len("test_"):], _names(source / folder)
            if not any(stem == n or stem.startswith(n + "_") for n in names):
                problems.append(f"{shown}: no module {where}{stem}.py or package {where}{stem}/ "
                                f"(name it test_<module>.py or test_<module>_<aspect>.py after a module in {where})")
    for item in sorted(tests.iterdir()):
        if item.name not in TOP and item.name not in mirrors:
            problems.append(f"{item.relative_to(tests.parent).as_posix()}: tests/ holds only the mirrors "
                            f"{sorted(mirrors)}, e2e/, architecture/ and support/; move it into one of them")
    for folder in sorted(p for p in tests.rglob("*") if p.is_dir()):
        parts = set(folder.relative_to(tests).parts)
        if not parts & (DATA | STANDALONE) and any(folder.glob("*.py")) and not (folder / "__init__.py").exists():
            problems.append(f"{folder.relative_to(tests.parent).as_posix()}/__init__.py is missing "
                            f"(same-named test modules in different folders would collide)")
    return problems


def test_every_test_file_is_where_its_module_is():
    assert misplaced() == []


def test_a_misplaced_test_is_named_with_its_expected_place(tmp_path):
    tests, source = tmp_path / "tests", tmp_path / "harness"
    (source / "proxy").mkdir(parents=True)
    for f in (source / "__init__.py", source / "proxy" / "__init__.py", source / "proxy" / "sse.py",
              source / "config.py"):
        f.write_text("")
    (tests / "harness" / "proxy").mkdir(parents=True)
    (tests / "harness" / "report").mkdir()
    for f in ("__init__.py", "harness/__init__.py", "harness/proxy/__init__.py", "harness/test_config.py",
              "harness/test_proxy_budget.py", "harness/proxy/test_sse.py", "harness/proxy/test_sse_chunks.py",
              "harness/proxy/test_server.py", "harness/report/test_tables.py", "test_flat.py"):
        (tests / f).write_text("")
    (tests / "example_plugin").mkdir()  # stand-alone: no __init__.py, and that is no problem
    for f in ("conveyor.py", "test_conveyor.py"):
        (tests / "example_plugin" / f).write_text("")
    assert misplaced(tests, {"harness": source}) == [
        "tests/harness/proxy/test_server.py: no module harness/proxy/server.py or package harness/proxy/server/ "
        "(name it test_<module>.py or test_<module>_<aspect>.py after a module in harness/proxy/)",
        "tests/harness/report/test_tables.py: harness/report/ is not a package of the source; "
        "put the file in the tests folder that mirrors its module's package",
        "tests/test_flat.py: tests/ holds only the mirrors ['harness'], e2e/, architecture/ and support/; "
        "move it into one of them",
        "tests/harness/report/__init__.py is missing (same-named test modules in different folders would collide)",
    ]

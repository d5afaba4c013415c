"""harness.lazy_module: a module imported on first attribute read, once, from any thread."""

from __future__ import annotations

import sys
import threading

import pytest

from harness import lazy_module


@pytest.fixture
def slow_module(tmp_path, monkeypatch):
    """A module ``slowmod`` on sys.path whose import takes 0.2 s and counts how often it ran."""
    (tmp_path / "slowmod.py").write_text(
        "import time\n"
        "import builtins\n"
        "builtins.slowmod_imports = getattr(builtins, 'slowmod_imports', 0) + 1\n"
        "time.sleep(0.2)\n"
        "ANSWER = 42\n"
        "def double(x):\n"
        "    return 2 * x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import builtins

    monkeypatch.setattr(builtins, "slowmod_imports", 0, raising=False)
    yield "slowmod"
    sys.modules.pop("slowmod", None)


def test_nothing_is_imported_before_the_first_attribute_read(slow_module):
    import builtins

    lazy = lazy_module(slow_module)
    assert slow_module not in sys.modules
    assert builtins.slowmod_imports == 0
    assert "not yet imported" in repr(lazy)
    assert lazy.ANSWER == 42
    assert lazy.double(4) == 8
    assert builtins.slowmod_imports == 1
    assert sys.modules[slow_module].ANSWER == 42
    assert "'slowmod' (imported)" in repr(lazy)


def test_after_the_first_read_names_are_plain_attributes(slow_module):
    lazy = lazy_module(slow_module)
    lazy.ANSWER  # noqa: B018 - the first read imports
    assert lazy.__dict__["double"] is sys.modules[slow_module].double  # no __getattr__ round trip any more


def test_an_imported_module_is_returned_as_it_is():
    import json

    assert lazy_module("json") is json


def test_threads_racing_on_the_first_read_import_once_and_all_see_the_module(slow_module):
    import builtins

    lazy = lazy_module(slow_module)
    start, seen, errors = threading.Barrier(8), [], []

    def read() -> None:
        start.wait()
        try:
            seen.append(lazy.double(lazy.ANSWER))
        except Exception as exc:  # noqa: BLE001 - the test reports any
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert seen == [84] * 8
    assert builtins.slowmod_imports == 1


def test_a_missing_module_fails_at_the_first_read_naming_it():
    lazy = lazy_module("no_such_module_for_harness_tests")
    with pytest.raises(ModuleNotFoundError, match="no_such_module_for_harness_tests"):
        lazy.anything  # noqa: B018

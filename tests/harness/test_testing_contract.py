"""The conformance kit's own contract: every public kit class's docstring lists the fixtures its tests use
(name, required/optional/provided, scope), and the kit raises no pytest deprecation warning."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap

import pytest

pytest_plugins = ["pytester"]

MODULES = ("agent", "forecaster", "judge", "metrics", "model", "sandbox", "simulator", "task")
#: ``- ``name`` (required|optional|provided, <scope> scope)`` in a class docstring
ENTRY = re.compile(r"^\s*- ``(\w+)`` \((required|optional|provided), (function|class|module|session) scope\)",
                   re.MULTILINE)


def kit_classes() -> dict[str, type]:
    """Every public ``*Tests`` class defined in a ``harness.testing`` module: name -> class."""
    found = {}
    for name in MODULES:
        module = importlib.import_module(f"harness.testing.{name}")
        for attr, obj in vars(module).items():
            if inspect.isclass(obj) and attr.endswith("Tests") and not attr.startswith("_") \
                    and obj.__module__ == module.__name__:
                found[attr] = obj
    return found


def is_placeholder(func) -> bool:
    """Whether a kit fixture's body is only ``pytest.fail(...)`` (the author must override it)."""
    func = getattr(func, "__func__", func)
    tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    body = [node for node in tree.body[0].body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Call) \
        and ast.unparse(body[0].value.func) == "pytest.fail"


@pytest.fixture
def collected(pytester) -> dict[str, dict[str, object]]:
    """Kit class name -> {fixture name: its FixtureDef} over the closure of its tests (collected, not run),
    pytest's own fixtures (``request``, ``tmp_path``, ``monkeypatch``) left out."""
    classes = kit_classes()
    source = "\n".join(f"from {cls.__module__} import {name}\nclass Test_{name}({name}):\n    pass\n"
                       for name, cls in classes.items())
    pytester.makepyfile(test_kit=source)
    items, _ = pytester.inline_genitems("-p", "no:cacheprovider")
    found: dict[str, dict[str, object]] = {name: {} for name in classes}
    for item in items:
        name = item.cls.__name__.removeprefix("Test_")
        for fixture in item.fixturenames:
            defs = item._fixtureinfo.name2fixturedefs.get(fixture)
            if fixture == "request" or (defs and defs[-1].func.__module__.startswith("_pytest")):
                continue
            found[name][fixture] = defs[-1] if defs else None
    assert {"ForecasterTests", "SimulatorTests", "SandboxEgressTests"} <= set(found)  # the search works
    assert all(found.values()), [name for name, fixtures in found.items() if not fixtures]
    return found


def test_every_kit_class_docstring_states_its_fixture_contract(collected):
    problems = []
    for name, cls in kit_classes().items():
        doc = inspect.getdoc(cls) or ""
        stated = {m[0]: (m[1], m[2]) for m in ENTRY.findall(doc)}
        used = collected[name]
        for fixture, fixturedef in sorted(used.items()):
            if fixture not in stated:
                problems.append(f"{name}: fixture {fixture!r} is not in its docstring")
                continue
            kind, scope = stated[fixture]
            required = fixturedef is None or is_placeholder(fixturedef.func)
            if (kind == "required") != required:
                problems.append(f"{name}: {fixture!r} is stated {kind}, but the kit "
                                f"{'gives no value' if required else 'gives a value'}")
            if fixturedef is not None and fixturedef.scope != scope:
                problems.append(f"{name}: {fixture!r} is stated {scope} scope, but is {fixturedef.scope} scope")
        for fixture in sorted(set(stated) - set(used)):
            problems.append(f"{name}: its docstring lists {fixture!r}, which its tests do not use")
    assert problems == []


def test_the_contract_check_sees_required_and_scoped_fixtures(collected):
    """Positive control: the introspection finds the forecaster's class-scoped placeholder."""
    forecaster = collected["ForecasterTests"]["forecaster"]
    assert forecaster.scope == "class" and is_placeholder(forecaster.func)
    assert not is_placeholder(collected["ForecasterTests"]["forecast_request"].func)
    assert set(collected["TaskTemplateScoringTests"]) == {"template", "params", "prepared", "agent_outputs"}


def test_no_kit_fixture_wider_than_a_function_is_an_instance_method(collected):
    """pytest >= 9.1 warns (PytestRemovedIn10Warning) when a class-scoped fixture is an instance method:
    the kit's are class methods, whatever pytest is installed."""
    wide = {(fixture, d.func.__module__) for fixtures in collected.values() for fixture, d in fixtures.items()
            if d is not None and d.scope != "function"}
    assert {f for f, _ in wide} == {"forecaster", "forecast_request", "base_forecast"}
    for fixtures in collected.values():
        for fixture, d in fixtures.items():
            if d is not None and d.scope != "function":
                assert isinstance(getattr(d.func, "__self__", None), type), \
                    f"{fixture} ({d.func.__module__}) is a {d.scope}-scoped instance-method fixture"


COUNTING = """
import numpy as np
import pytest
from harness.contracts import Forecast, Forecaster
from harness.testing.forecaster import ForecasterTests


class Counting(Forecaster):
    name = "counting"

    def forecast(self, request):
        rng = np.random.default_rng(request.seed)
        return Forecast(rng.normal(size=(request.n_samples, len(request.future_index))))


class TestCounting(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return Counting()
"""


def test_the_kit_emits_no_pytest_deprecation_warning(pytester):
    """The README's forecaster recipe runs the whole kit with pytest's deprecation warnings as errors."""
    pytester.makepyfile(test_counting=COUNTING)
    # PytestRemovedIn<N>Warning (e.g. 10, for class-scoped instance-method fixtures) subclass this one
    result = pytester.runpytest("-p", "no:cacheprovider", "-W", "error::pytest.PytestDeprecationWarning")
    result.assert_outcomes(passed=10)
    assert "Warning" not in result.stdout.str()


def test_the_docs_kit_table_matches_the_kit_docstrings():
    """docs/plugins/index.md "Conformance kits": kind -> class -> required and optional fixtures -> scope, as each aggregate
    class's docstring states them."""
    import harness.testing
    from tests.support import docs

    section = docs.section("plugins/index.md", "## Conformance kits")
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[1].startswith("`") and cells[1].endswith("Tests`"):
            rows[cells[1].strip("`")] = (set(re.findall(r"`(\w+)`", cells[2])), set(re.findall(r"`(\w+)`", cells[3])),
                                         cells[4])
    assert set(rows) == set(harness.testing.__all__)
    for name, (required, optional, scope) in rows.items():
        stated = ENTRY.findall(inspect.getdoc(getattr(harness.testing, name)))
        assert required == {f for f, kind, _ in stated if kind == "required"}, name
        assert optional == {f for f, kind, _ in stated if kind == "optional"}, name
        assert {scope} == {s for f, _, s in stated}, name

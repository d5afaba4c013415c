"""Plugin loading: entry points, validation, duplicates, isolation of broken plugins."""

import json

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.plugins import PluginWarning

GOOD = """
from harness import Forecast, Forecaster, hookimpl
import numpy as np

class Flat(Forecaster):
    name = "flat-test"
    def forecast(self, request):
        return Forecast(np.zeros((request.n_samples, len(request.future_index))))

@hookimpl
def register_forecasters(register):
    register(Flat())
"""


def test_builtins_load_through_entry_points(fresh_plugins):
    loaded = fresh_plugins()
    assert loaded.registry("agent")["euclidean-1nn"].distribution == "tsagent-harness"
    assert "euclidean-1nn" in loaded.registry("agent")


def test_third_party_plugin_registers(make_distribution, fresh_plugins):
    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD}, version="2.3")
    loaded = fresh_plugins()
    reg = loaded.registry("forecaster")["flat-test"]
    assert (reg.distribution, reg.version, reg.plugin) == ("acme-forecasts", "2.3", "acme")


def test_import_error_is_reported_and_rest_keep_working(make_distribution, fresh_plugins):
    make_distribution("broken-dist", {"broken": "broken_plugin"}, {"broken_plugin": "raise RuntimeError('boom')"})
    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD})
    with pytest.warns(PluginWarning, match="broken-dist"):
        loaded = fresh_plugins()
    problem = next(p for p in loaded.problems if p.plugin == "broken")
    assert problem.distribution == "broken-dist"
    assert "RuntimeError: boom" in problem.reason
    assert "flat-test" in loaded.registry("forecaster")
    assert "euclidean-1nn" in loaded.registry("agent")


def test_duplicate_name_names_both_distributions(make_distribution, fresh_plugins):
    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD})
    make_distribution("copycat", {"copy": "copy_plugin"}, {"copy_plugin": GOOD})
    loaded = fresh_plugins()
    with pytest.warns(PluginWarning):
        registry = loaded.registry("forecaster")
    assert "flat-test" in registry
    dup = [p for p in loaded.problems if "duplicate" in p.reason]
    assert len(dup) == 1
    text = str(dup[0])
    assert "flat-test" in text and "register_forecasters" in text
    assert {"acme-forecasts", "copycat"} <= {w for w in text.replace("'", " ").split()}


@pytest.mark.parametrize("body, expected", [
    ("register(Flat)", "registered the class Flat; register an instance"),
    ("register(object())", "object is not a harness.contracts.forecaster.Forecaster"),
    ("f = Flat(); f.name = ''; register(f)", "name must be a non-empty string"),
    ("raise ValueError('bad hook')", "raised ValueError: bad hook"),
])
def test_invalid_registrations_are_rejected_with_the_rule(make_distribution, fresh_plugins, body, expected):
    source = GOOD.replace("register(Flat())", body)
    make_distribution("shaky", {"shaky": "shaky_plugin"}, {"shaky_plugin": source})
    loaded = fresh_plugins()
    with pytest.warns(PluginWarning):
        assert "flat-test" not in loaded.registry("forecaster")
    problem = next(p for p in loaded.problems if p.plugin == "shaky")
    assert problem.hook == "register_forecasters" and problem.distribution == "shaky"
    assert expected in problem.reason


def test_plugins_list_json_and_table(make_distribution, fresh_plugins):
    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD}, version="2.3")
    make_distribution("broken-dist", {"broken": "broken_plugin"}, {"broken_plugin": "import nope_nope"})
    with pytest.warns(PluginWarning):
        fresh_plugins()
    result = CliRunner().invoke(cli, ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {(r["kind"], r["name"]): r for r in data["plugins"]}
    assert rows[("forecaster", "flat-test")]["distribution"] == "acme-forecasts"
    assert rows[("forecaster", "flat-test")]["version"] == "2.3"
    assert rows[("agent", "euclidean-1nn")]["distribution"] == "tsagent-harness"
    assert any(p["distribution"] == "broken-dist" and "nope_nope" in p["reason"] for p in data["problems"])
    table = CliRunner().invoke(cli, ["plugins", "list"])
    assert table.exit_code == 0 and "flat-test" in table.output and "broken-dist" in table.output


def test_plugins_list_prints_a_plugins_error_text_literally(make_distribution, fresh_plugins):
    make_distribution("markup-dist", {"markup": "markup_plugin"},
                      {"markup_plugin": "raise ImportError('needs [bold]pip install x[dask][/bold] and [/]')"})
    with pytest.warns(PluginWarning):
        fresh_plugins()
    result = CliRunner().invoke(cli, ["plugins", "list"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert "needs [bold]pip install x[dask][/bold] and [/]" in result.output


MISSPELLED = GOOD + """
@hookimpl
def register_forcasters(register):
    register(Flat())
"""

EXTRAS = """
import click
from harness import hookimpl
from harness.reporting import Section

@click.command("acme-hello")
def hello():
    click.echo("hello")

@hookimpl
def register_report_sections(register):
    register("acme-template", lambda rows: Section(messages=[f"{len(rows)} acme rows"]))
"""


def test_misspelled_hook_is_an_error_naming_plugin_and_hook(make_distribution, fresh_plugins):
    make_distribution("typo-dist", {"typo": "typo_plugin"}, {"typo_plugin": MISSPELLED})
    with pytest.warns(PluginWarning, match="register_forcasters"):
        loaded = fresh_plugins()
    problem = next(p for p in loaded.problems if p.plugin == "typo")
    assert (problem.distribution, problem.hook) == ("typo-dist", "register_forcasters")
    assert "did you mean 'register_forecasters'" in problem.reason
    assert "flat-test" not in loaded.registry("forecaster")  # the plugin is left out whole
    assert "euclidean-1nn" in loaded.registry("agent")


def test_plugins_list_shows_commands_and_report_sections(make_distribution, fresh_plugins, monkeypatch):
    monkeypatch.setattr(cli, "commands", dict(cli.commands))  # the command resolved below leaves with the test
    make_distribution("acme-extras", {"acme-x": "acme_extras"}, {"acme_extras": EXTRAS}, version="0.7",
                      commands={"acme-hello": "acme_extras:hello"})
    fresh_plugins()
    result = CliRunner().invoke(cli, ["plugins", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {(r["kind"], r["name"]): r for r in json.loads(result.output)["plugins"]}
    assert rows[("command", "acme-hello")]["distribution"] == "acme-extras"
    assert rows[("command", "acme-hello")]["plugin"] == "acme_extras:hello"
    assert rows[("report_section", "acme-template")]["version"] == "0.7"
    assert rows[("command", "generate")]["distribution"] == "tsagent-harness"  # declared in metadata
    hello = CliRunner().invoke(cli, ["acme-hello"])  # an entry-point command resolves on use
    assert hello.exit_code == 0 and hello.output == "hello\n"


def test_every_hook_is_documented_and_implemented_by_a_builtin(fresh_plugins):
    """Every hook's docstring says, like pytest's, its arguments, its return value, when it is called and what
    a duplicate does; every hook has a built-in implementation (commands are no hook: they are declared once,
    as ``harness.commands`` entry points, which need no plugin loading)."""
    from harness import hookspecs
    from harness.plugins import HOOKS

    loaded = fresh_plugins()
    assert set(HOOKS) == {name for name in dir(hookspecs) if name.startswith("register_")}
    for hook in HOOKS:
        doc = getattr(hookspecs, hook).__doc__ or ""
        for part in (":param", ":returns:", "Called ", "Duplicate"):
            assert part in doc, f"hook {hook}'s docstring does not say {part!r}"
        builtins = [impl.plugin_name for impl in getattr(loaded.pm.hook, hook).get_hookimpls()
                    if loaded.origin(impl.plugin_name)[0] == "tsagent-harness"]
        assert builtins, hook
    assert "register_commands" not in HOOKS


PAGE = """
from harness import hookimpl
from harness.pages import ViewPage

@hookimpl
def register_view_pages(register):
    register(ViewPage(template="shared-template", metric="score"))
"""


def test_two_plugins_registering_one_view_page_name_behave_like_one_agent_name(make_distribution, fresh_plugins):
    """The duplicate rule is one for every kind: the first registration is kept, the other is a problem
    naming both plugins and distributions, for a view page as for a forecaster."""
    from harness.view.pages import registered_pages

    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD + PAGE})
    make_distribution("copycat", {"copy": "copy_plugin"}, {"copy_plugin": GOOD + PAGE})
    loaded = fresh_plugins()
    with pytest.warns(PluginWarning):
        forecaster = loaded.registry("forecaster")["flat-test"]
    with pytest.warns(PluginWarning):
        page_owner = loaded.collect("register_view_pages", "view page", lambda page: (page.template, page))
    kept = {"forecaster": forecaster.plugin, "view page": page_owner["shared-template"][0]}
    assert kept["forecaster"] == kept["view page"]  # the same plugin wins both
    loser = ({"acme", "copy"} - {kept["forecaster"]}).pop()
    problems = {p.hook: p for p in loaded.problems if p.plugin == loser and "duplicate" in p.reason}
    assert problems["register_forecasters"].reason == (
        f"duplicate forecaster name 'flat-test': already registered by plugin {kept['forecaster']!r} from "
        f"distribution {loaded.origin(kept['forecaster'])[0]!r}")
    assert problems["register_view_pages"].reason == (
        f"duplicate view page name 'shared-template': already registered by plugin {kept['forecaster']!r} from "
        f"distribution {loaded.origin(kept['forecaster'])[0]!r}")
    with pytest.warns(PluginWarning, match="duplicate view page name 'shared-template'"):
        assert registered_pages()["shared-template"].metric == "score"  # the viewer's path, the same rule


def test_built_in_commands_are_registered_once(fresh_plugins):
    fresh_plugins()
    result = CliRunner().invoke(cli, ["plugins", "list", "--json"])
    names = [r["name"] for r in json.loads(result.output)["plugins"] if r["kind"] == "command"]
    assert sorted(names) == sorted(set(names)) and {"generate", "plot-sample", "dr-score"} <= set(names)


def test_the_docs_list_every_hook_once():
    """The hook list of docs/plugins/index.md "How plugins are found" (between the dashes after "register-callback hooks") is the
    hookspecs'."""
    import re

    from harness.plugins import HOOKS
    from tests.support import docs

    section = docs.section("plugins/index.md", "## How plugins are found")
    listed = re.findall(r"`(register_\w+)`", section.split("register-callback hooks", 1)[1].split(" — ")[1])
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(HOOKS)


HOOKS_AND_OTHERS = '''
from harness import hookimpl, Forecaster

LIMIT = 3
helper = len

class NotAHook(Forecaster):
    name = "x"

def register_agents(register):  # the name of a hook, not marked: no implementation
    pass

@hookimpl
def register_forecasters(register):
    pass

@hookimpl(specname="register_judges")
def judges(register):
    pass

@hookimpl
def register_forcasters(register):  # marked, misspelled: pluggy's to find (and the check to refuse)
    pass

stat = staticmethod(register_forecasters)
'''


def test_the_manager_finds_what_pluggys_own_finds_in_a_module(tmp_path):
    """A module's names are looked at in its ``__dict__`` first (not with ``getattr_static``): the hook
    implementations found are pluggy's own, marked functions only, ``specname`` and a staticmethod included."""
    import pluggy

    from harness import hookspecs
    from harness.plugins import GROUP, _Manager

    import importlib.util

    (tmp_path / "mixed_plugin.py").write_text(HOOKS_AND_OTHERS)
    spec = importlib.util.spec_from_file_location("mixed_plugin", tmp_path / "mixed_plugin.py")
    mixed_plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mixed_plugin)

    found = {}
    for manager in (pluggy.PluginManager(GROUP), _Manager(GROUP)):
        manager.add_hookspecs(hookspecs)
        manager.register(mixed_plugin, name="mixed")
        found[type(manager).__name__] = sorted((caller.name, impl.function.__name__)
                                               for caller in manager.get_hookcallers(mixed_plugin)
                                               for impl in caller.get_hookimpls())
    assert found["_Manager"] == found["PluginManager"] == [
        ("register_forcasters", "register_forcasters"), ("register_forecasters", "register_forecasters"),
        ("register_judges", "judges"), ("stat", "register_forecasters")]


def test_loading_the_plugins_pauses_the_collector_and_freezes_what_they_loaded():
    """The process-wide set loads with the cyclic collector paused and leaves its objects frozen
    (``gc.freeze``); the collector is on again afterwards, and stays off for a caller that had turned it off."""
    import gc

    from harness import plugins as registry

    saved = registry.reset(None)
    try:
        before = gc.get_freeze_count()
        loaded = registry.plugins()
        assert gc.isenabled() and gc.get_freeze_count() > before
        assert "euclidean-1nn" in loaded.registry("agent")
        gc.disable()
        registry.reset(None)
        registry.plugins()
        assert not gc.isenabled()
    finally:
        gc.enable()
        registry.reset(saved)

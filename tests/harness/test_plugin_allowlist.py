"""``HARNESS_LOAD_PLUGINS``: an allow-list of plugin distributions, so a broken third-party plugin is switched
off without uninstalling it; the harness's own plugins always load."""

from __future__ import annotations

import json
import warnings

from click.testing import CliRunner

from harness.cli import cli
from harness.plugin_allowlist import loads, normalise
from harness.plugins import PluginWarning

GOOD = """
from harness import Forecast, Forecaster, hookimpl

class Flat(Forecaster):
    name = "flat-test"
    def forecast(self, request):
        raise NotImplementedError

@hookimpl
def register_forecasters(register):
    register(Flat())
"""

BROKEN = "raise RuntimeError('boom at import')\n"
BROKEN_COMMAND = "raise RuntimeError('boom at import')\nimport click\nhello = click.Command('broken-hello')\n"


def third_parties(make_distribution):
    make_distribution("Broken_Dist", {"broken": "broken_plugin"}, {"broken_plugin": BROKEN,
                                                                   "broken_cmd": BROKEN_COMMAND},
                      commands={"broken-hello": "broken_cmd:hello"})
    make_distribution("acme-forecasts", {"acme": "acme_plugin"}, {"acme_plugin": GOOD}, version="2.3")


def test_names_compare_as_pep_503_normalises_them(monkeypatch):
    assert normalise("Acme_Forecasts.x") == "acme-forecasts-x"
    monkeypatch.delenv("HARNESS_LOAD_PLUGINS", raising=False)
    assert loads("anything") and loads(None)
    monkeypatch.setenv("HARNESS_LOAD_PLUGINS", " ACME_forecasts , other ")
    assert loads("acme-forecasts") and loads("tsagent-harness") and loads("tsagent_harness")
    assert not loads("broken-dist") and not loads(None)


def test_without_the_variable_the_broken_plugin_is_loaded_and_reported(make_distribution, fresh_plugins,
                                                                        monkeypatch):
    monkeypatch.delenv("HARNESS_LOAD_PLUGINS", raising=False)
    third_parties(make_distribution)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        loaded = fresh_plugins()
    assert any("boom at import" in str(w.message) for w in caught)
    assert "flat-test" in loaded.registry("forecaster") and loaded.skipped == {}
    assert "broken-hello" in CliRunner().invoke(cli, ["--help"]).output


def test_the_allow_list_switches_the_broken_plugin_off(make_distribution, fresh_plugins, monkeypatch):
    monkeypatch.setenv("HARNESS_LOAD_PLUGINS", "acme-forecasts")
    third_parties(make_distribution)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PluginWarning)  # nothing to report: the broken plugin is not imported
        loaded = fresh_plugins()
    assert loaded.problems == [] and loaded.skipped == {"Broken_Dist": "1.0"}
    assert loaded.registry("forecaster")["flat-test"].distribution == "acme-forecasts"
    assert "euclidean-1nn" in loaded.registry("agent")  # the harness's own plugins always load
    listed = json.loads(CliRunner().invoke(cli, ["plugins", "list", "--json"]).output)
    assert listed["not_loaded"] == [{"distribution": "Broken_Dist", "version": "1.0"}]
    assert not [r for r in listed["plugins"] if r["distribution"] == "Broken_Dist"]
    assert "broken-hello" not in CliRunner().invoke(cli, ["--help"]).output  # nor its command
    result = CliRunner().invoke(cli, ["broken-hello"])
    assert result.exit_code != 0 and "No such command 'broken-hello'" in result.output


def test_an_empty_allow_list_keeps_only_the_harness_s_own_plugins(make_distribution, fresh_plugins, monkeypatch):
    monkeypatch.setenv("HARNESS_LOAD_PLUGINS", "")
    third_parties(make_distribution)
    loaded = fresh_plugins()
    assert "flat-test" not in loaded.registry("forecaster") and set(loaded.skipped) == {"Broken_Dist",
                                                                                      "acme-forecasts"}
    assert "naive" in loaded.registry("forecaster")
    assert "generate" in CliRunner().invoke(cli, ["--help"]).output  # built-in plugin commands stay

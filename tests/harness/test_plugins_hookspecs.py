"""Plugin-owned hooks: a plugin adds hook specs of its own (pluggy's ``add_hookspecs``) that other plugins
implement, whatever order their distributions load in, and calls them with ``harness.collect_hook``."""

from __future__ import annotations

import importlib.metadata as md

import pytest

from harness import collect_hook
from harness.plugins import PluginWarning

SPECS = """
import pluggy
from harness import hookimpl

hookspec = pluggy.HookspecMarker("harness")


class harness_hookspecs:
    @staticmethod
    @hookspec
    def {hook}(register):
        '''The plugin's own hook: ``register(name, unit)``.'''
"""

OWNER = SPECS.format(hook="register_gauges") + """

@hookimpl
def register_gauges(register):
    register("pressure", "Pa")
"""

IMPLEMENTER = """
from harness import hookimpl

@hookimpl
def register_gauges(register):
    register("depth", "m")
    register("pressure", "bar")  # a duplicate: the first registration is kept
"""

MISSPELLED = """
from harness import hookimpl

@hookimpl
def register_gauge(register):
    register("typo", "?")
"""

CLASH = SPECS.format(hook="register_agents")  # redefines a core hook


def gauges() -> dict[str, tuple[str, str]]:
    def make(name, unit):
        if not isinstance(unit, str):
            raise TypeError("unit must be a string")
        return name, unit

    return {name: (plugin, unit) for name, (plugin, unit) in collect_hook("register_gauges", "gauge", make).items()}


def test_a_plugin_s_own_hook_is_implemented_by_another_whatever_the_load_order(make_distribution, fresh_plugins):
    make_distribution("aaa-gauges-more", {"aaa-more": "gauges_more"}, {"gauges_more": IMPLEMENTER})
    make_distribution("zzz-gauges", {"zzz-gauges": "gauges_owner"}, {"gauges_owner": OWNER})
    order = [ep.name for ep in md.entry_points(group="harness")]
    assert order.index("aaa-more") < order.index("zzz-gauges")  # the implementer loads before the owner
    loaded = fresh_plugins()
    assert "register_gauges" in loaded.hook_names() and "register_agents" in loaded.hook_names()
    with pytest.warns(PluginWarning, match="duplicate gauge name 'pressure'"):
        found = gauges()
    # pluggy's call order: the plugin registered last (the owner) first, so its "pressure" is kept
    assert {name: unit for name, (_, unit) in found.items()} == {"depth": "m", "pressure": "Pa"}
    assert found["depth"][0] == "aaa-more"
    assert not [p for p in loaded.problems if "unknown hook" in p.reason]
    assert "euclidean-1nn" in loaded.registry("agent")  # the core's hooks as before


def test_a_misspelled_plugin_hook_is_named_with_the_plugin_s_own_hook(make_distribution, fresh_plugins):
    make_distribution("zzz-gauges", {"zzz-gauges": "gauges_owner"}, {"gauges_owner": OWNER})
    make_distribution("typo-gauges", {"typo": "gauges_typo"}, {"gauges_typo": MISSPELLED})
    with pytest.warns(PluginWarning, match="register_gauge"):
        loaded = fresh_plugins()
    problem = next(p for p in loaded.problems if p.plugin == "typo")
    assert problem.hook == "register_gauge" and "did you mean 'register_gauges'" in problem.reason


def test_a_plugin_cannot_redefine_a_core_hook(make_distribution, fresh_plugins):
    make_distribution("clash-dist", {"clash": "gauges_clash"}, {"gauges_clash": CLASH})
    with pytest.warns(PluginWarning, match="clash-dist"):
        loaded = fresh_plugins()
    problem = next(p for p in loaded.problems if p.plugin == "clash")
    assert problem.reason == "harness_hookspecs refused: hook 'register_agents' already exists"
    assert "euclidean-1nn" in loaded.registry("agent")

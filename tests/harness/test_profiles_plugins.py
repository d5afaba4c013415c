"""Profiles an installed plugin ships (hook ``register_agent_profiles``), and ``--agent NAME`` naming an agent
plugin that no profile has: the error names the profiles of that agent, or says how to add one."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.errors import HarnessError
from harness.plugins import PluginWarning
from harness.profiles import find_profiles, resolve_profile
from tests.support.paths import REPO

AGENT = """
from pathlib import Path

from harness import Agent, AgentInvocation, hookimpl


class Acme(Agent):
    name = "acme-agent"
    needs_model = False

    def command(self, ctx):
        return AgentInvocation(argv=["true"])


@hookimpl
def register_agents(register):
    register(Acme())
"""

SHIPS_PROFILE = """
@hookimpl
def register_agent_profiles(register):
    register(Path(__file__).parent / "acme-agent.yaml")
"""

BAD_REGISTRATIONS = """
@hookimpl
def register_agent_profiles(register):
    register(Path(__file__).parent / "acme-agent.yaml")
    register(Path(__file__).parent / "nothing.yaml")
    register(Path(__file__).parent / "notes.txt")
    register(42)
    register(str(Path(__file__).parent / "copy" / "acme-agent.yml"))
"""


def test_a_shipped_profile_is_found_and_listed_and_a_folder_file_of_its_name_overrides_it(
        profiles, make_distribution, fresh_plugins):
    site = make_distribution("acme-agents", {"acme": "acme_agent"}, {"acme_agent": AGENT + SHIPS_PROFILE})
    (site / "acme-agent.yaml").write_text("agent: acme-agent\noptions: {speed: 2}\n")
    fresh_plugins()
    profile = resolve_profile("acme-agent")
    assert (profile.name, profile.agent, profile.options) == ("acme-agent", "acme-agent", {"speed": 2})
    assert {f.name: f.path for f in find_profiles()}["acme-agent"] == site / "acme-agent.yaml"
    listed = json.loads(CliRunner().invoke(_cli(), ["plugins", "list", "--json"]).output)["plugins"]
    assert {"kind": "agent_profile", "name": "acme-agent", "plugin": "acme", "distribution": "acme-agents",
            "version": "1.0"} in listed

    (profiles / "acme-agent.yaml").write_text("agent: acme-agent\n")  # the user's own file comes first
    assert resolve_profile("acme-agent").options == {}
    assert {f.name: f.path for f in find_profiles()}["acme-agent"] == profiles / "acme-agent.yaml"


def test_a_shipped_profile_that_is_invalid_is_refused_with_its_file_and_field(
        profiles, make_distribution, fresh_plugins):
    from harness.config import ConfigError

    site = make_distribution("acme-agents", {"acme": "acme_agent"}, {"acme_agent": AGENT + SHIPS_PROFILE})
    (site / "acme-agent.yaml").write_text("agent: acme-agnet\n")
    fresh_plugins()
    with pytest.raises(ConfigError) as err:
        resolve_profile("acme-agent")
    assert str(err.value).startswith(f"{site / 'acme-agent.yaml'}: agent: no agent, forecaster or judge named 'acme-agnet'")
    [found] = [f for f in find_profiles() if f.name == "acme-agent"]
    assert found.profile is None and found.error == str(err.value)


def test_a_registration_that_is_no_profile_file_or_a_taken_name_is_a_plugin_problem(
        profiles, make_distribution, fresh_plugins):
    site = make_distribution("acme-agents", {"acme": "acme_agent"}, {"acme_agent": AGENT + BAD_REGISTRATIONS})
    (site / "acme-agent.yaml").write_text("agent: acme-agent\n")
    (site / "notes.txt").write_text("agent: acme-agent\n")
    (site / "copy").mkdir()
    (site / "copy" / "acme-agent.yml").write_text("agent: acme-agent\n")
    loaded = fresh_plugins()
    with pytest.warns(PluginWarning):
        shipped = loaded.agent_profiles()
    assert shipped["acme-agent"] == ("acme", site / "acme-agent.yaml")
    assert sorted(shipped) == ["acme-agent", "proxy-probe"]  # and the built-in plugins' own
    assert loaded.agent_profiles() is shipped  # collected once: no second round of problems
    reasons = [p.reason for p in loaded.problems if p.hook == "register_agent_profiles"]
    assert reasons == [
        f"register(path): {site / 'nothing.yaml'} is not an existing profile file (NAME.yaml or NAME.yml)",
        f"register(path): {site / 'notes.txt'} is not an existing profile file (NAME.yaml or NAME.yml)",
        "register(path) needs the path of a profile file, got 42",
        ("duplicate agent profile name 'acme-agent': already registered by plugin 'acme' from distribution "
         "'acme-agents'"),
    ]
    assert resolve_profile("acme-agent").agent == "acme-agent"  # the others cost nothing else


def test_an_agent_without_a_profile_gets_an_error_saying_how_to_add_one(profiles, make_distribution,
                                                                          fresh_plugins, capsys):
    from harness.cli import main

    make_distribution("acme-agents", {"acme": "acme_agent"}, {"acme_agent": AGENT})
    fresh_plugins()
    head = ("no agent profile named 'acme-agent': 'acme-agent' is an agent plugin (distribution 'acme-agents'), "
            "and --agent names an agent profile, which says the agent and its model and options")
    with pytest.raises(HarnessError) as err:
        resolve_profile("acme-agent")
    assert str(err.value) == (
        f"{head}; no profile names this agent. Add one: a file agent_profiles/acme-agent.yaml (in the working "
        "directory or a folder of $HARNESS_PROFILES) holding `agent: acme-agent`; a plugin ships its own "
        "profiles through the hook register_agent_profiles (docs/plugins/agent.md)")
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--task", str(REPO / "tasks/tracebench/balldrop-low-direct.yaml"), "--agent", "acme-agent", "--out", str(profiles.parent / "run")])
    assert exit_.value.code == 2 and "holding `agent: acme-agent`" in capsys.readouterr().err

    (profiles / "acme-fast.yaml").write_text("agent: acme-agent\n")
    (profiles / "acme-slow.yaml").write_text("agent: acme-agent\noptions: {speed: 1}\n")
    with pytest.raises(HarnessError) as err:
        resolve_profile("acme-agent")
    assert str(err.value) == f"{head}; the profiles of this agent: acme-fast, acme-slow"


def test_a_name_no_plugin_has_still_lists_the_known_profiles(profiles):
    with pytest.raises(HarnessError) as err:
        resolve_profile("nobody-at-all")
    assert str(err.value).startswith("no agent profile named 'nobody-at-all' (known: ")
    assert "proxy-probe" in str(err.value)  # a built-in plugin's shipped profile is known like the others


def _cli():
    from harness.cli import cli

    return cli

"""The agent conformance kit fails broken agents: one that writes nothing, one that writes only labels outside the
allowed ones, one that leaks a host API key; a working agent (euclidean-1nn) passes, and a template that cannot
tell a valid submission fails the episode test.  The kit classes run (their default episode: the first shipped
template offering one) in a pytest of their own, and the tests assert which kit test failed and why."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.plugins import get
from harness.testing.agent import _episode_of

AGENTS = '''
import json
import os
import sys

import pytest

from harness import Agent, AgentInvocation, AgentTaskTemplate
from harness.testing import AgentTests
from tsagent_plugins.agents.classical import EuclideanNN
from tsagent_plugins.tasks.tracebench.template import TracebenchTemplate


def python(code):
    return [sys.executable, "-c", code]


class Silent(Agent):
    """Exits 0 and writes nothing."""
    name, version, needs_model = "silent", "1", False

    def command(self, ctx):
        return AgentInvocation(argv=python("pass"))


class InvalidLabels(Agent):
    """Answers every test file, each with a label the task does not allow (accuracy 0, every label invalid)."""
    name, version, needs_model = "invalid-labels", "1", False

    def command(self, ctx):
        code = ("import json, os; json.dump({f: ['the butler did it'] for f in os.listdir('test_samples')}, "
                "open('results.json', 'w'))")
        return AgentInvocation(argv=python(code))


class LeaksKey(EuclideanNN):
    """Answers like euclidean-1nn, but hands the host's API key to its command."""

    def command(self, ctx):
        inv = super().command(ctx)
        inv.env["ANTHROPIC_API_KEY"] = os.environ.get("ANTHROPIC_API_KEY", "")
        return inv


class TestSilent(AgentTests):
    @pytest.fixture
    def agent(self):
        return Silent()


class TestInvalidLabels(AgentTests):
    @pytest.fixture
    def agent(self):
        return InvalidLabels()


class TestLeaksKey(AgentTests):
    @pytest.fixture
    def agent(self):
        return LeaksKey()


class TestGood(AgentTests):
    @pytest.fixture
    def agent(self):
        return EuclideanNN()


class Mute(TracebenchTemplate):
    """TraceBench without its submission check: the kit cannot tell an answer from none."""
    submission_problem = AgentTaskTemplate.submission_problem


class TestMuteTemplate(AgentTests):
    @pytest.fixture
    def agent(self):
        return EuclideanNN()

    @pytest.fixture
    def template(self):
        return Mute()

    @pytest.fixture
    def params(self, template):
        return template.conformance_params()
'''


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> dict[str, dict[str, tuple[str, str]]]:
    """Every kit class of :data:`AGENTS`, run once in a pytest of its own (a subprocess, so the kit loads plugins
    and pandas as in an author's run): class name -> {test name: (passed | failed | error | skipped, message)},
    read from the run's JUnit XML report.  The sample-pool cache is the one the project's tests share."""
    folder = tmp_path_factory.mktemp("kit")
    (folder / "test_kit_agents.py").write_text(AGENTS)
    cache = os.environ.get("HARNESS_CACHE_DIR") or str(Path.home() / ".cache" / "harness")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")} | {"HARNESS_CACHE_DIR": cache}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "--rootdir", str(folder), "--junitxml", str(folder / "report.xml"), "test_kit_agents.py"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    assert (folder / "report.xml").is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    found: dict[str, dict[str, tuple[str, str]]] = {}
    for case in ET.parse(folder / "report.xml").getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed"}.get(child.tag, child.tag)
                message = f"{child.get('message') or ''}\n{child.text or ''}"
        found.setdefault(case.get("classname").rsplit(".", 1)[-1], {})[case.get("name")] = (outcome, message)
    return found


def outcomes(results: dict[str, tuple[str, str]]) -> dict[str, str]:
    return {name: outcome for name, (outcome, _) in results.items()}


#: the kit's outcomes for a working agent: every test passes but the recorded-episode ones (no recording given)
KIT_PASSES = {"test_identity": "passed", "test_command": "passed", "test_logs_and_trajectory_on_empty_home": "passed",
              "test_recorded_trajectory_follows_atif": "skipped",
              "test_recorded_trajectory_is_the_same_from_compressed_logs": "skipped", "test_runs_a_small_episode": "passed"}


def test_an_agent_that_writes_nothing_fails_the_episode_test(kit):
    assert outcomes(kit["TestSilent"]) == KIT_PASSES | {"test_runs_a_small_episode": "failed"}
    message = kit["TestSilent"]["test_runs_a_small_episode"][1]
    assert "agent 'silent' made no valid submission on an episode of template 'tracebench'" in message
    assert "results.json not found in the workspace" in message


def test_an_agent_that_writes_only_invalid_labels_fails_the_episode_test(kit):
    assert outcomes(kit["TestInvalidLabels"]) == KIT_PASSES | {"test_runs_a_small_episode": "failed"}
    message = kit["TestInvalidLabels"]["test_runs_a_small_episode"][1]
    assert "every one of the 2 test predictions is invalid" in message and "the butler did it" in message


def test_an_agent_that_leaks_a_host_key_fails_the_command_test(kit):
    # its answers are valid: only the leak is wrong with it
    assert outcomes(kit["TestLeaksKey"]) == KIT_PASSES | {"test_command": "failed"}
    assert "a host API key leaked into the agent's command or environment" in kit["TestLeaksKey"]["test_command"][1]


def test_a_working_agent_passes_the_kit(kit):
    assert outcomes(kit["TestGood"]) == KIT_PASSES


def test_a_template_that_cannot_tell_a_submission_fails_the_episode_test(kit):
    """A template that does not implement ``submission_problem`` makes the kit fail, not pass blindly."""
    assert outcomes(kit["TestMuteTemplate"]) == KIT_PASSES | {"test_runs_a_small_episode": "failed"}
    assert "template 'tracebench' does not say what a valid submission is" in \
        kit["TestMuteTemplate"]["test_runs_a_small_episode"][1]


class _Refuses:
    name, needs_model = "picky", False

    def refusal(self, params):
        return "never"


def test_without_an_episode_the_agent_accepts_the_kit_fails_naming_the_refusals():
    with pytest.raises(pytest.fail.Exception, match=r"no shipped task template offers an episode agent 'picky' "
                                                    r"accepts \(tracebench: never\): override the `template`"):
        _episode_of(_Refuses(), None, None)


def test_a_template_without_its_params_fails():
    with pytest.raises(pytest.fail.Exception, match="`template` fixture is overridden but `params` is not"):
        _episode_of(_Refuses(), get("task_template", "tracebench"), None)

"""``harness run --task`` without ``--agent`` runs the profile the task's template names (TaskTemplate.default_agent)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import click
import pytest

from harness.cli.run import default_profile
from harness.contracts import TaskTemplate
from harness.run import load_task

REPO = Path(__file__).resolve().parent.parent


def test_the_shipped_spec_names_its_default_agent():
    task = load_task(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml", {})
    assert task.template.default_agent(task.params) == "euclidean-1nn"
    profile = default_profile(task)
    assert profile.name == "euclidean-1nn" and profile.agent == "euclidean-1nn"


def test_a_template_naming_no_default_agent_asks_for_agent():
    assert TaskTemplate.default_agent(None, None) is None  # the contract's default
    task = SimpleNamespace(template=SimpleNamespace(name="my-template", default_agent=lambda params: None), params=None)
    with pytest.raises(click.UsageError, match="task template 'my-template' names no default agent: give --agent"):
        default_profile(task)

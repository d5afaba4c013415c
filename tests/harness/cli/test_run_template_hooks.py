"""`harness run --task` takes from the task template what is benchmark-specific: the default agent, the summary columns."""

from __future__ import annotations

from types import SimpleNamespace

import click
import pytest

from harness.cli.run import default_profile
from harness.contracts import TaskTemplate
from harness.run import load_task
from tests.support.paths import REPO



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


def test_the_summary_table_shows_the_templates_columns():
    from rich.console import Console

    from harness.cli.run import summary_table

    task = load_task(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml", {})
    rows = [{"episode": "e0", "status": "ok", "accuracy": 0.0, "shortlist": 0, "context": True, "cost_usd": 0.25},
            {"episode": "e1", "status": "failed", "accuracy": None, "error_kind": "agent_timeout"}]
    table = summary_table(rows, "t", [task.template])
    assert [c.header for c in table.columns] == ["episode", "status", "acc", "cost ($)", "why"]
    assert [c.justify for c in table.columns] == ["left", "left", "right", "right", "left"]
    console = Console(width=120, record=True)
    console.print(table)
    text = console.export_text()
    assert "0.000" in text and "0.250" in text and "agent_timeout" in text
    assert table.caption == "acc = accuracy; cost ($) = cost usd (results.parquet columns)"  # abbreviations spelled out
    assert [c.header for c in summary_table(rows, "t").columns] == ["episode", "status", "cost ($)", "why"]

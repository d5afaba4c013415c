"""`harness run --task` takes from the task template what is benchmark-specific: the default agent, the summary columns."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness.cli.run import default_profile
from harness.contracts import AgentTaskTemplate, TaskTemplate
from harness.errors import HarnessError
from harness.run import load_task
from tests.support.paths import REPO



def test_the_shipped_spec_names_its_default_agent():
    task = load_task(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml", {})
    assert task.template.default_agent(task.params) == "euclidean-1nn"
    profile = default_profile(task)
    assert profile.name == "euclidean-1nn" and profile.agent == "euclidean-1nn"


def test_a_template_naming_no_default_agent_asks_for_agent():
    assert AgentTaskTemplate.default_agent(None, None) is None  # the contract's default
    task = SimpleNamespace(template=SimpleNamespace(name="my-template", default_agent=lambda params: None), params=None)
    with pytest.raises(HarnessError, match="task template 'my-template' names no default agent: give --agent"):
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
    assert str(table.caption) == ("acc = accuracy (top-1 accuracy on the episode batch); cost ($) = cost usd "
                             "(results.parquet columns)")  # abbreviations spelled out with their meaning
    assert [c.header for c in summary_table(rows, "t").columns] == ["episode", "status", "cost ($)", "why"]


def test_the_summary_caption_explains_short_and_gives_the_templates_chance_level():
    from harness.cli.run import summary_table

    task = load_task(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml", {})
    rows = [{"episode": "e0", "template": "tracebench", "status": "ok", "simulator": "balldrop", "accuracy": 0.1,
             "shortlist": 0.3},
            {"episode": "e1", "template": "tracebench", "status": "ok", "simulator": "massslide", "accuracy": 0.2,
             "shortlist": 0.2},
            {"episode": "e2", "template": "tracebench", "status": "ok", "simulator": "bounceball", "accuracy": 0.0},
            {"episode": "e3", "template": "other", "status": "ok", "simulator": "elsewhere"}]
    table = summary_table(rows, "t", [task.template])
    assert [c.header for c in table.columns] == ["episode", "status", "acc", "short"]
    abbreviations, chance = str(table.caption).split("\n")
    assert "short = shortlist (mean shortlist score on the episode batch)" in abbreviations
    # 4 or 5 parameter labels + no change; the mean is Table 1's "random-chance accuracy is 0.189"
    assert chance == ("chance accuracy (1 / classes): balldrop 0.200 (5 classes), bounceball 0.167 (6 classes), "
                      "massslide 0.200 (5 classes); mean over simulators 0.189")
    assert task.template.summary_notes(rows[:1]) == ["chance accuracy (1 / classes): balldrop 0.200 (5 classes)"]
    assert TaskTemplate.summary_notes(None, rows) == []  # the contract's default: no notes


def _printed(rows, templates, width):
    import io

    from rich.console import Console

    from harness.cli.run import print_whole, summary_table

    out = io.StringIO()
    print_whole(Console(file=out, width=width), summary_table(rows, "t", templates))
    return out.getvalue()


def test_episode_ids_and_numbers_are_never_broken_whatever_the_width():
    """A Dr-CiK summary printed to a log (160 columns) or an 80-column terminal: every id and value whole on
    one line; only the "why" column wraps."""
    task = load_task(REPO / "tasks" / "drcik" / "sample-statistical.yaml", {})
    rows = [{"episode": f"llm-dp_dr-evidence_task_{t}-s25-7644526950c3", "status": "ok", "template": "drcik",
             "forecaster": "llm-dp", "context": "dr-evidence", "scrps": 0.1234, "agent_seconds": 12.3,
             "total_tokens": 69000, "cost_usd": 0.36} for t in (42, 201)]
    rows[1].update(status="failed", error_kind="forecaster_failed", error="ValueError: " + "reason " * 12)
    for width in (160, 80):
        text = _printed(rows, [task.template], width)
        lines = text.splitlines()
        for row in rows:
            (line,) = [x for x in lines if row["episode"] in x]
            assert all(v in line for v in (row["status"], "llm-dp", "dr-evidence", "0.123", "12.300", "69000",
                                           "0.360"))
        assert "forecaster_failed:" in text and text.count("reason") == 12
    assert max(len(x) for x in _printed(rows, [task.template], 160).splitlines()) <= 160


def test_a_tracebench_summary_fits_80_columns():
    task = load_task(REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml", {})
    rows = [{"episode": f"balldrop-high-direct-n20-seed{s}-a8269774aff2", "template": "tracebench", "status": "ok",
             "accuracy": 0.2, "agent_seconds": 21.25} for s in (0, 1)]
    text = _printed(rows, [task.template], 80)
    assert max(len(x) for x in text.splitlines()) <= 80
    assert sum(f"balldrop-high-direct-n20-seed{s}-a8269774aff2" in text for s in (0, 1)) == 2

"""A run given ``--set`` overrides is named after its settings: the summary title and ``harness runs list``
show the spec name with the overrides, so a ``noise=high`` run of a low-noise spec does not pass for it."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.cli import cli
from harness.cli.run import run_stages
from harness.cli.runs import run_summary
from harness.experiment import task_title
from tests.support.paths import REPO

BALLDROP = REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"


def test_task_title_shows_the_overrides_as_given():
    assert task_title("balldrop-low-direct", {}) == "balldrop-low-direct"
    assert task_title("balldrop-low-direct", {"noise": "high", "n_test": 20}) == \
        "balldrop-low-direct [noise=high n_test=20]"
    assert task_title("s", {"forecasters": ["llm-dp"], "budget.max_cost_usd": 0.5, "keep": True}) == \
        's [forecasters=["llm-dp"] budget.max_cost_usd=0.5 keep=true]'


def test_the_summary_title_and_identity_carry_the_overrides():
    (stage,), title = run_stages(BALLDROP, None, None, (), ("noise=high", "n_test=20"), None)
    assert title == "balldrop-low-direct [noise=high n_test=20] · euclidean-1nn"
    assert stage[2] == {"task": "balldrop-low-direct", "profile": "euclidean-1nn",
                        "overrides": {"noise": "high", "n_test": 20}}
    (stage,), title = run_stages(BALLDROP, None, None, (), (), None)
    assert title == "balldrop-low-direct · euclidean-1nn"
    assert stage[2] == {"task": "balldrop-low-direct", "profile": "euclidean-1nn"}  # resumes runs made before


def test_runs_list_shows_the_overrides(tmp_path):
    (stage,), _ = run_stages(BALLDROP, None, None, (), ("noise=high", "n_test=20"), None)
    for name, identity in (("over", stage[2]), ("plain", {"task": "balldrop-low-direct", "profile": "x"})):
        (tmp_path / name).mkdir()
        (tmp_path / name / "run.json").write_text(json.dumps({"identity": identity, "episodes": []}))
    assert run_summary(tmp_path / "over")["task"] == "balldrop-low-direct [noise=high n_test=20]"
    assert run_summary(tmp_path / "plain")["task"] == "balldrop-low-direct"
    result = CliRunner().invoke(cli, ["runs", "list", str(tmp_path), "--json"])
    assert [json.loads(line)["task"] for line in result.output.splitlines()] == [
        "balldrop-low-direct [noise=high n_test=20]", "balldrop-low-direct"]


def test_the_summary_table_prints_the_overrides_literally():
    """"[noise=high n_test=20]" is text, not console markup that would vanish."""
    from rich.console import Console

    from harness.cli.run import summary_table

    console = Console(width=120, record=True)
    console.print(summary_table([{"episode": "e0", "status": "ok"}], "balldrop-low-direct [noise=high n_test=20] · x"))
    assert "balldrop-low-direct [noise=high n_test=20] · x" in " ".join(console.export_text().split())

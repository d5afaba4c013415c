"""``harness tasks list``: experiment specs are described with the task runs they expand to (the units of
``harness plan``/``harness run``; their episodes need the templates, which ``tasks list`` does not load)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.cli.tasks import RUNS_CAPTION, stage_runs
from harness.config import load_experiment
from harness.experiment import plan_experiment
from harness.profiles import resolve_profile
from harness.run import load_task
from tests.support.paths import REPO

EXPERIMENTS = sorted((REPO / "tasks" / "experiments").glob("*.yaml"))


def listed() -> dict[str, str]:
    """File -> the params cell of each row of ``harness tasks list`` over the shipped tasks/."""
    done = CliRunner().invoke(cli, ["tasks", "list", "--dir", str(REPO / "tasks")], env={"COLUMNS": "1000"})
    assert done.exit_code == 0, done.output
    assert " ".join(RUNS_CAPTION.split()) in " ".join(done.output.split())  # what the numbers count, said once
    return {line.split("│")[1].strip(): line.split("│")[4] for line in done.output.splitlines()
            if line.count("│") > 4}


def test_experiment_rows_count_spec_files_not_patterns():
    """Each experiment row counts the spec files its globs match, so its product is the run's episode count
    (the paper's main grid: 12 specs × 4 agents × 5 seeds = 240; Table 22's: 6 × 7 × 5 = 210)."""
    rows = listed()
    expected = {"experiments/baselines.yaml": (6, 7, 1, 5, 210),
                "experiments/tracebench-main.yaml": (12, 4, 1, 5, 240),
                "experiments/tracebench-ablations.yaml": (12, 2, 1, 5, 120)}
    for name, numbers in expected.items():
        found = re.search(r"main: (\d+) spec\(s\) × (\d+) agent\(s\) × (\d+) grid point\(s\) × "
                          r"(\d+) seed\(s\) = (\d+) task run\(s\)", rows[name])
        assert found and tuple(map(int, found.groups())) == numbers, rows[name]


@pytest.mark.parametrize("file", EXPERIMENTS, ids=lambda p: p.name)
def test_each_stages_task_runs_are_the_units_harness_plan_expands(file, tmp_path):
    """For every shipped experiment, each stage's count in ``tasks list`` is the number of units
    ``harness plan``/``harness run`` expand it to (evidence sources included); nothing is run."""
    spec = load_experiment(file)
    stages = {s.name: s for s in spec.stage_list()}
    planned = plan_experiment(spec, file, tmp_path / "run", resolve_profile, load_task)
    assert [p.name for p in planned] == list(stages)
    row = listed()[f"experiments/{file.name}"]
    shown = dict(re.findall(r"(\w+): [^;]*?= (\d+) task run\(s\)", row))
    for stage in planned:
        assert stage_runs(stages[stage.name], stages, file)[1] == len(stage.units) == int(shown[stage.name]), row


def test_an_evidence_stage_counts_one_run_per_agent_of_the_earlier_stage():
    file = REPO / "tasks" / "experiments" / "drcik-dr-sample.yaml"
    row = listed()["experiments/drcik-dr-sample.yaml"]
    assert "research: 1 spec(s) × 5 agent(s) × 1 grid point(s) × 1 seed(s) = 5 task run(s)" in row
    assert ("forecast: 1 spec(s) × 1 grid point(s) × 1 seed(s) × 5 evidence source(s) (from research) = 5 task "
            "run(s)") in row
    assert load_experiment(file).stages[1].evidence_from == "research"


def test_a_command_spec_is_listed_with_the_command_that_runs_it(tmp_path):
    """A spec saying ``command: NAME`` (a plugin command's own spec) is shown with how to run it, not as an
    invalid task spec."""
    (tmp_path / "gen.yaml").write_text("command: my-generate\nname: gen\ninput: data\nhops: 3\n")
    done = CliRunner().invoke(cli, ["tasks", "list", "--dir", str(tmp_path)], env={"COLUMNS": "1000"})
    assert done.exit_code == 0, done.output
    row = next(line for line in done.output.splitlines() if "gen.yaml" in line)
    assert "(command)" in row and "harness my-generate FILE" in row and "input=data hops=3" in row
    assert "invalid" not in done.output
    shipped = CliRunner().invoke(cli, ["tasks", "list", "--dir", str(REPO / "tasks")], env={"COLUMNS": "1000"})
    assert re.search(r"drcik/generate-sample\.yaml\s*│\s*\(command\)\s*│\s*harness dr-generate FILE", shipped.output)

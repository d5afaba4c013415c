"""``harness tasks list``: experiment specs are described with the episode count they expand to."""

from __future__ import annotations

import re

from click.testing import CliRunner

from harness.cli import cli
from tests.support.paths import REPO


def test_experiment_rows_count_spec_files_not_patterns():
    """Each experiment row counts the spec files its globs match, so its product is the run's episode count
    (the paper's main grid: 12 specs × 4 agents × 5 seeds = 240; Table 22's: 6 × 7 × 5 = 210)."""
    done = CliRunner().invoke(cli, ["tasks", "list", "--dir", str(REPO / "tasks")], env={"COLUMNS": "400"})
    assert done.exit_code == 0, done.output
    rows = {line.split("│")[1].strip(): line.split("│")[4] for line in done.output.splitlines() if line.count("│") > 4}
    expected = {"experiments/baselines.yaml": (6, 7, 1, 5, 210),
                "experiments/tracebench-main.yaml": (12, 4, 1, 5, 240),
                "experiments/tracebench-ablations.yaml": (12, 2, 1, 5, 120)}
    for name, numbers in expected.items():
        found = re.search(r"main: (\d+) spec\(s\) × (\d+) agent\(s\)/forecaster\(s\) × (\d+) grid point\(s\) × "
                          r"(\d+) seed\(s\) = (\d+) episode\(s\)", rows[name])
        assert found and tuple(map(int, found.groups())) == numbers, rows[name]

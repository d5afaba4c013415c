"""An experiment whose grid gives two task specs the same settings (template, params, profile, seed): the
episodes are kept under their spec-named ids, and ``harness plan``/``run`` warn once per stage, with the
count and an example."""

from __future__ import annotations

from click.testing import CliRunner

from harness.cli import cli
from harness.config import load_experiment
from harness.experiment import plan_experiment, repeated_settings
from harness.profiles import resolve_profile
from harness.run import load_task
from tests.support.paths import REPO

TRACEBENCH = REPO / "tasks" / "tracebench"


def experiment(tmp_path, tasks, grid="{noise: [low, high]}"):
    file = tmp_path / "grid.yaml"
    file.write_text(f"name: my-grid\ntasks: [{', '.join(str(TRACEBENCH / t) for t in tasks)}]\n"
                    f"agents: [euclidean-1nn]\nseeds: [0, 1]\nset: {{n_test: 20}}\ngrid: {grid}\n")
    return file


def test_two_specs_under_the_same_grid_point_are_reported_as_repeats(tmp_path):
    file = experiment(tmp_path, ["balldrop-low-direct.yaml", "balldrop-high-direct.yaml"])
    (stage,) = plan_experiment(load_experiment(file), file, tmp_path / "run", resolve_profile, load_task)
    assert len(stage.units) == 8  # 2 specs × 2 noise levels × 2 seeds
    repeats = repeated_settings(stage.units)
    # balldrop-high-direct under noise=low/high equals balldrop-low-direct under the same noise, per seed
    assert len(repeats) == 4
    assert {(r.task.spec.name, f.task.spec.name) for r, f in repeats} == {
        ("balldrop-high-direct", "balldrop-low-direct")}
    assert all(r.seed == f.seed and r.task.params.noise == f.task.params.noise for r, f in repeats)


def test_one_spec_per_simulator_has_no_repeats(tmp_path):
    """The README's my-grid example: one spec per simulator under the noise axis."""
    file = experiment(tmp_path, ["balldrop-low-direct.yaml", "massslide-low-*.yaml"])
    (stage,) = plan_experiment(load_experiment(file), file, tmp_path / "run", resolve_profile, load_task)
    assert len(stage.units) == 12 and repeated_settings(stage.units) == []  # 3 specs × 2 noise levels × 2 seeds


def test_plan_warns_once_with_the_count_and_an_example(tmp_path):
    file = experiment(tmp_path, ["balldrop-low-direct.yaml", "balldrop-high-direct.yaml"])
    result = CliRunner().invoke(cli, ["plan", "--experiment", str(file), "--out", str(tmp_path / "run"),
                                      "--no-episodes"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("warning:")]
    assert warnings == ["warning: 4 episode(s) repeat the settings (template, params, profile, seed) of episodes "
                        "of another task spec and run again under other ids, e.g. balldrop-high-direct "
                        "[n_test=20 noise=low] = balldrop-low-direct [n_test=20 noise=low]"]
    assert "total: 8 episode(s)" in result.output  # kept, not dropped

"""The axis of models under test is declared by the template (``experiment_axis``, ``evidence_param``), not by
the core's experiment format: an experiment may give the declared axis, and one its tasks' template does not
declare is refused naming the file, the field and the template."""

from __future__ import annotations

import pytest

from harness.config import ConfigError, load_experiment
from harness.experiment import plan_experiment
from harness.profiles import resolve_profile
from harness.run import load_task
from tests.support.paths import REPO

DRCIK = REPO / "tasks" / "drcik" / "sample-statistical.yaml"
TRACEBENCH = next(iter(sorted((REPO / "tasks" / "tracebench").glob("*.yaml"))))


def write(tmp_path, text):
    file = tmp_path / "exp.yaml"
    file.write_text(text)
    return file


def test_the_declared_axis_sets_its_param_one_entry_per_unit(tmp_path):
    file = write(tmp_path, f"name: x\ntasks: [{DRCIK}]\nforecasters: [naive, {{name: ses}}]\n")
    spec = load_experiment(file)
    assert spec.axis[0] == "forecasters" and [e.name for e in spec.axis[1]] == ["naive", "ses"]
    (stage,) = plan_experiment(spec, file, tmp_path / "run", resolve_profile, load_task)
    assert [[f.name for f in u.task.params.forecasters] for u in stage.units] == [["naive"], ["ses"]]


def test_an_axis_the_template_does_not_declare_is_refused(tmp_path):
    file = write(tmp_path, f"name: x\ntasks: [{TRACEBENCH}]\nforecasters: [naive]\n")
    with pytest.raises(ConfigError, match=r"exp.yaml: forecasters: template 'tracebench' of .* declares no axis of "
                                          r"models under test \(TaskTemplate.experiment_axis\)"):
        plan_experiment(load_experiment(file), file, tmp_path / "run", resolve_profile, load_task)
    file = write(tmp_path, f"name: x\ntasks: [{DRCIK}]\nmodels: [naive]\n")  # not the drcik axis's name
    with pytest.raises(ConfigError, match=r"models: template 'drcik' .* declares the axis 'forecasters'"):
        plan_experiment(load_experiment(file), file, tmp_path / "run", resolve_profile, load_task)
    with pytest.raises(ConfigError, match="at most one axis of models under test"):
        load_experiment(write(tmp_path, f"name: x\ntasks: [{DRCIK}]\nmodels: [a]\nforecasters: [b]\n"))
    with pytest.raises(ConfigError, match="give agents or forecasters, not both"):
        load_experiment(write(tmp_path, f"name: x\ntasks: [{DRCIK}]\nagents: [a]\nforecasters: [b]\n"))

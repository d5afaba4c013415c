"""tasks/drcik/sample-tsfm.yaml runs every pretrained family on the three sample tasks, each model option set
to a tiny random-init folder with --set (how a user points the spec at downloaded weights)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

pytest.importorskip("timesfm3.torch")
pytest.importorskip("tirex.models.tirex")
pytest.importorskip("uni2ts.model.moirai2")
pytest.importorskip("toto.model.toto")

from tsagent_plugins.forecasters import chronos, moirai, timesfm, tirex, toto  # noqa: E402

SPEC = Path(__file__).resolve().parents[4] / "tasks" / "drcik" / "sample-tsfm.yaml"


@pytest.mark.slow
def test_sample_tsfm_spec_runs_every_family_on_the_sample_tasks(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from harness.cli import cli

    names = yaml.safe_load(SPEC.read_text())["params"]["forecasters"]
    assert names == ["chronos", "timesfm", "tirex", "moirai", "moirai-moe", "toto", "naive"]
    folders = {"timesfm": timesfm.build_tiny_model(tmp_path / "timesfm"),
               "tirex": tirex.build_tiny_model(tmp_path / "tirex"),
               "moirai": moirai.build_tiny_model(tmp_path / "moirai"),
               "moirai-moe": moirai.build_tiny_model(tmp_path / "moe", moe=True),
               "toto": toto.build_tiny_model(tmp_path / "toto")}
    monkeypatch.setenv(chronos.MODEL_ENV, str(chronos.build_tiny_model(tmp_path / "chronos")))
    tiny_options = {"moirai": {"context_length": 256}, "moirai-moe": {"context_length": 256, "patch_size": 8}}
    entries = ["chronos", *({"name": n, "options": {"model": str(f), **tiny_options.get(n, {})}}
                            for n, f in folders.items()), "naive"]
    sets = ["--set", "forecasters=" + yaml.safe_dump(entries, default_flow_style=True).strip(), "--set", "samples=5"]
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "--task", str(SPEC), *sets, "--out", str(out)])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    assert sorted(rows["forecaster"].unique()) == sorted(names)
    assert (rows["status"] == "ok").all() and len(rows) == 3 * len(names)
    assert rows.loc[rows["forecaster"] != "naive", "flag_untrained"].all()

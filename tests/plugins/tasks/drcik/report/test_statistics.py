"""Dr-CiK dataset statistics (Tables 5, 6, 7 and Figure 3) from ``harness report`` on a release folder: the
bundled public sample, a generated set, a release whose metadata carries licences (issue 38.3)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.report import build_report
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR

SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"


def test_the_public_sample_by_hand():
    report = build_report([SAMPLE_DIR], with_figures=True)
    t5 = report.table("drcik-table5")
    # task_42 (store: 156 history, 100 horizon), task_201 (data center: 166, 90), task_163 (48, 24)
    by_domain = {d["domain"]: d for d in t5.data}
    assert sum(d["tasks"] for d in t5.data) == 3 and t5.rows[-1][:4] == ["All", "3", "123.3", "71.3"]
    assert by_domain["store"]["history_mean"] == 156 and by_domain["store"]["horizon_mean"] == 100
    assert any("showcase entity type" in n for n in t5.notes)
    t6 = report.table("drcik-table6")
    assert [d["source"] for d in t6.data] == ["synthetic"] and t6.data[0]["tasks"] == 3
    fig3 = {d["origin"]: d for d in report.table("drcik-figure3").data}
    assert fig3["All"]["evidence_mean"] == pytest.approx((5 + 3 + 5) / 3)      # gt_evidence items per task
    assert fig3["All"]["supporting_mean"] + fig3["All"]["distractors_mean"] == pytest.approx((38 + 40 + 37) / 3)
    assert fig3["All"]["hops_mean"] == 4 and fig3["All"]["prospective_share"] is None
    assert "drcik-figure3" in report.figures
    assert not any(t.key == "drcik-table7" for t in report.tables)
    assert any("Table 7 not made: the release metadata carries no licences" in m for m in report.messages)


def test_a_generated_set_with_licences_in_its_manifest(tmp_path):
    out = tmp_path / "gen"
    result = CliRunner().invoke(cli, ["dr-generate", str(SPEC), "--out", str(out), "--model-backend", "scripted"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "benchmark_manifest.json").read_text())
    manifest["sources"] = [{"name": "CiK", "license": "Apache-2.0", "redistribution": "yes",
                            "url": "https://github.com/ServiceNow/context-is-key-forecasting"}]
    (out / "benchmark_manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(cli, ["report", str(out), "--format", "json", "--out", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "r" / "report.json").read_text())
    tables = {t["key"]: t for t in document["tables"]}
    assert {"drcik-table5", "drcik-table6", "drcik-figure3", "drcik-table7"} <= set(tables)
    assert sum(d["tasks"] for d in tables["drcik-table5"]["data"]) == 4                 # the four generated tasks
    all_row = next(d for d in tables["drcik-figure3"]["data"] if d["origin"] == "All")
    assert all_row["prospective_share"] is not None and 0 <= all_row["prospective_share"] <= 1  # roles marked
    assert tables["drcik-table7"]["rows"] == [["CiK", "Apache-2.0", "yes",
                                               "https://github.com/ServiceNow/context-is-key-forecasting"]]
    assert (tmp_path / "r" / "figures" / "drcik-figure3.png").is_file()
    shutil.copy(tmp_path / "r" / "figures" / "drcik-figure3.png", tmp_path / "figure3.png")


def test_a_broken_release_is_a_message_not_a_crash(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t1.json").write_text("{not json")
    report = build_report([tmp_path], with_figures=False)
    assert any("dataset statistics not made" in m and "t1.json" in m for m in report.messages), report.messages

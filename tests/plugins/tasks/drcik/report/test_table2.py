"""Dr-CiK Table 2 in ``harness report``: hand-computed cells on a tiny synthetic results table.

Two forecasters (A reads text, B ignores it) × two conditions (no-context, background) × tasks
t1-t3, plus a task with hidden labels (h1), one with an undefined scale (u1), a failure
(A / background / t3) and a row flagged ``flag_untrained`` (forecaster C) that must be refused.

sCRPS by hand:
  A / no-context  0.2 0.4 0.6  -> 0.400 ± 0.2/√3 = 0.115
  A / background  0.1 0.3 fail -> 0.200 ± 0.1414/√2 = 0.100, Fail 1
  B / no-context  0.3 0.2 0.9  -> 0.467 ± 0.3786/√3 = 0.219
  B / background  0.5 0.1 0.2  -> 0.267 ± 0.2082/√3 = 0.120
Common subset {t1, t2}; ranks per task across the 4 cells (1 = best):
  sCRPS  t1: A/bg 1, A/nc 2, B/nc 3, B/bg 4   t2: B/bg 1, B/nc 2, A/bg 3, A/nc 4
  sRMSE  t1: A/nc 1.5, A/bg 1.5 (tie), B/nc 3, B/bg 4   t2: B/bg 1, B/nc 2, A/bg 3, A/nc 4
  -> distributional A/nc 3.00 ± 1.00, A/bg 2.00 ± 1.00, B/nc 2.50 ± 0.50, B/bg 2.50 ± 1.50
  -> point          A/nc 2.75 ± 1.25, A/bg 2.25 ± 0.75, B/nc 2.50 ± 0.50, B/bg 2.50 ± 1.50
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from tests.support.report_runs import make_main_run
from harness.cli.report import report as report_cmd
from harness.report import Section, build_report
from harness.report.sections import contribute, registered_sections
from harness.report.tables import Table
from tsagent_plugins.tasks.drcik.report.table2 import build_section

SCRPS = {("A", "no-context"): [0.2, 0.4, 0.6], ("A", "background"): [0.1, 0.3, None],
         ("B", "no-context"): [0.3, 0.2, 0.9], ("B", "background"): [0.5, 0.1, 0.2]}
SRMSE = {("A", "no-context"): [0.4, 0.8, 1.0], ("A", "background"): [0.4, 0.6, None],
         ("B", "no-context"): [0.6, 0.4, 1.1], ("B", "background"): [1.0, 0.2, 0.3]}


def synthetic_rows() -> pd.DataFrame:
    rows = []
    for (forecaster, context), values in SCRPS.items():
        base = {"run_id": "r1", "template": "drcik", "task": "synthetic", "forecaster": forecaster,
                "context": context, "reproduces_paper": context != "background",
                "context_used": forecaster == "A" and context != "no-context", "flag_untrained": False}
        for task, scrps, srmse in zip(("t1", "t2", "t3"), values, SRMSE[(forecaster, context)]):
            ok = scrps is not None
            rows.append({**base, "benchmark_id": task, "status": "ok" if ok else "failed",
                         "scrps": scrps, "srmse": srmse, "smae": scrps / 2 if ok else None,
                         "reason": None if ok else "ForecastError: 1 of 25 valid samples after 3 round(s)"})
        rows.append({**base, "benchmark_id": "h1", "status": "labels_hidden", "scrps": None, "srmse": None,
                     "smae": None, "reason": "labels hidden"})
        rows.append({**base, "benchmark_id": "u1", "status": "undefined_scale", "scrps": None, "srmse": None,
                     "smae": None, "reason": "mean |y| over the future window is 0"})
    rows.append({"run_id": "r1", "template": "drcik", "task": "synthetic", "forecaster": "C",
                 "context": "no-context", "benchmark_id": "t1", "status": "ok", "scrps": 0.01, "srmse": 0.01,
                 "smae": 0.01, "flag_untrained": True, "reproduces_paper": True, "context_used": False})
    frame = pd.DataFrame(rows)
    frame["episode"] = frame["forecaster"] + "/" + frame["context"] + "/" + frame["benchmark_id"]
    return frame


@pytest.fixture
def run_dir(tmp_path):
    folder = tmp_path / "drcik-run"
    folder.mkdir()
    synthetic_rows().to_parquet(folder / "results.parquet", index=False)
    return folder


def test_table2_cells_by_hand(run_dir):
    built = build_report([run_dir], with_figures=False, sections={"drcik": build_section})
    table = built.table("drcik-table2")
    assert table.header == ["Forecaster", "No Context", "Background†", "Fail (per context)"]
    assert table.rows == [["A", "0.400 ± 0.115", "0.200 ± 0.100", "0 | 1"],
                          ["B‡", "0.467 ± 0.219", "0.267 ± 0.120", "0 | 0"]]
    assert table.styles == {(0, 2): {"underline"}}       # A under Background: 0.200, the best cell overall
    cells = {(d["forecaster"], d["context"]): d for d in table.data}
    assert cells[("B", "no-context")]["scrps_se"] == pytest.approx(0.218581, abs=1e-6)
    assert (cells[("A", "background")]["n"], cells[("A", "background")]["fail"]) == (2, 1)
    assert all(d["hidden"] == 1 and d["undefined"] == 1 for d in table.data)
    notes = "\n".join(table.notes)
    assert "† Stand-in: the task's target description" in notes
    assert "original-context needs tasks carrying generation.original_context" in notes
    assert "rewritten-context needs tasks carrying generation.rewritten_context" in notes
    assert "‡ Ignores the text context" in notes
    assert "labels hidden (forecasts exported, not scored): h1." in notes
    assert "undefined scale (mean |y| = 0 over the forecast window, not scored): u1." in notes
    assert any("refused 1 row(s) flagged flag_untrained" in m and "C/no-context/t1" in m for m in built.messages)


def test_common_subset_and_average_ranks_by_hand(run_dir):
    built = build_report([run_dir], with_figures=False, sections={"drcik": build_section})
    table = built.table("drcik-table2-common")
    assert "the 2 task(s)" in table.title
    assert table.rows == [
        ["A", "No Context", "0.300 ± 0.100", "0.600 ± 0.200", "0.150 ± 0.050", "2.75 ± 1.25", "3.00 ± 1.00"],
        ["A", "Background†", "0.200 ± 0.100", "0.500 ± 0.100", "0.100 ± 0.050", "2.25 ± 0.75", "2.00 ± 1.00"],
        ["B", "No Context", "0.250 ± 0.050", "0.500 ± 0.100", "0.125 ± 0.025", "2.50 ± 0.50", "2.50 ± 0.50"],
        ["B", "Background†", "0.300 ± 0.200", "0.600 ± 0.400", "0.150 ± 0.100", "2.50 ± 1.50", "2.50 ± 1.50"],
    ]
    assert "Common tasks: t1, t2." in table.notes


def test_failure_reasons_counted_per_row():
    section = build_section(synthetic_rows().query("forecaster != 'C'"))
    notes = "\n".join(section.tables[0].notes)
    assert "Failure reasons: ForecastError: 1 of 25 valid samples after 3 round(s) (1x)" in notes


def test_no_common_task_and_missing_columns():
    rows = synthetic_rows().query("forecaster != 'C'").copy()
    rows.loc[(rows["forecaster"] == "B") & (rows["benchmark_id"].isin(["t1", "t2"])), "status"] = "failed"
    rows.loc[(rows["forecaster"] == "A") & (rows["benchmark_id"] == "t3"), "status"] = "failed"
    common = build_section(rows).tables[1]
    assert common.rows == [] and "No task was completed by every cell" in common.notes[0]
    with pytest.raises(Exception, match="lack column\\(s\\) scrps"):
        build_section(rows.drop(columns=["scrps"]))


def test_duplicate_cells_across_runs_keep_the_later_run():
    rows = synthetic_rows().query("forecaster != 'C'")
    later = rows.copy()
    later.loc[later["status"] == "ok", "scrps"] = 1.0
    section = build_section(pd.concat([rows, later], ignore_index=True))
    assert "the later run's row is used" in section.messages[0]
    assert section.tables[0].rows[0][1] == "1.000 ± 0.000"


def test_registered_through_the_plugin_hook_and_the_cli(run_dir, tmp_path):
    assert "drcik" in registered_sections()
    result = CliRunner().invoke(report_cmd, [str(run_dir), "--format", "json", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [t["key"] for t in document["tables"]] == ["drcik-table2", "drcik-table2-common"]
    assert document["tables"][0]["rows"][0] == ["A", "0.400 ± 0.115", "0.200 ± 0.100", "0 | 1"]
    assert "no TraceBench rows" not in " ".join(document["messages"])


def test_sections_beside_tracebench_and_unknown_templates(run_dir, tmp_path):
    tracebench = make_main_run(tmp_path / "tb", with_ablation=False)
    built = build_report([tracebench, run_dir], with_figures=False,
                         sections={**registered_sections(), "drcik": build_section})
    keys = [t.key for t in built.tables]
    assert keys[0] == "table1" and keys[-2:] == ["drcik-table2", "drcik-table2-common"]
    frame = pd.DataFrame({"template": ["other", "other"], "x": [1, 2]})
    assert contribute(frame, {}).messages == ["2 row(s) of template 'other': no report section is registered "
                                              "for it (left out)"]

    def broken(rows):
        raise RuntimeError("boom")

    out = contribute(frame, {"other": broken})
    assert out.tables == [] and out.messages == ["the report section of template 'other' failed: RuntimeError: boom"]
    ok = contribute(frame, {"other": lambda rows: Section([Table("t", "T", ["a"])], ["m"])})
    assert [t.key for t in ok.tables] == ["t"] and ok.messages == ["m"]


def test_a_failing_section_plugin_is_isolated(make_distribution, fresh_plugins):
    make_distribution("bad-sections", {"bad-sections": "bad_sections_plugin"}, {"bad_sections_plugin": """
        from harness.hookspecs import hookimpl

        @hookimpl
        def register_report_sections(register):
            raise RuntimeError("no sections today")
    """})
    plugins = fresh_plugins()
    builders = registered_sections()
    assert "drcik" in builders
    problem = next(p for p in plugins.problems if p.plugin == "bad-sections")
    assert problem.distribution == "bad-sections" and problem.hook == "register_report_sections"
    assert "raised RuntimeError: no sections today" in problem.reason

"""``harness report --paper``: the TraceBench paper's values beside every reproduced table that has them,
from paper_values.json (read from the paper's text copy by scripts/make_paper_values.py) (issue 38.5)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from harness.cli.report import report
from tests.support.report_runs import check_exports, make_main_run
from harness.report import build_report
from tsagent_plugins.tasks.tracebench.report.paper import paper_values


def test_the_data_file_cites_each_table_and_holds_the_papers_numbers():
    data = paper_values()
    tables = {t["key"]: t for t in data["tables"]}
    assert [t["table"] for t in data["tables"]] == [f"Table {n}" for n in (1, 2, 23, *range(24, 32))]
    assert "no page numbers" in data["pages"] and all(t["section"] and t["caption"] for t in data["tables"])
    accuracy = tables["table1"]["sections"][0]
    assert accuracy["title"] == "Accuracy"
    # TraceBench Table 1, gpt-5.5: 0.933 ± 0.056 (low, direct) ... 0.547 ± 0.138 (high, programmatic, held-out)
    assert accuracy["rows"][0] == ["gpt-5.5", "0.933 ± 0.056", "0.853 ± 0.143", "0.671 ± 0.096", "0.833 ± 0.194",
                                   "0.733 ± 0.227", "0.547 ± 0.138"]
    assert tables["table2-high"]["sections"][0]["rows"][2] == [
        "gpt-5.5 (No domain context)", "0.513 ± 0.202 (-32.0)", "0.453 ± 0.209 (-28.0)", "0.316 ± 0.092 (-23.2)"]
    assert [len(s["rows"]) for s in tables["table23"]["sections"]] == [9, 5, 12]
    assert tables["per-simulator-main-low-direct"]["sections"][0]["rows"][0] == [
        "gpt-5.5", "1.000 ± 0.000", "0.840 ± 0.089", "0.960 ± 0.055"]
    for t in data["tables"]:
        assert all(len(row) == len(t["header"]) for s in t["sections"] for row in s["rows"]), t["key"]


def test_report_paper_puts_each_papers_table_after_the_reproduced_one(tmp_path):
    run = make_main_run(tmp_path)
    out = tmp_path / "report"
    result = CliRunner().invoke(report, [str(run), "--paper", "--format", "json", "--out", str(out), "--no-figures"])
    assert result.exit_code == 0, result.output
    keys = [t["key"] for t in json.loads((out / "report.json").read_text())["tables"]]
    for key in ("table1", "table2-high", "table23", "per-simulator-main-low-direct",
                "per-simulator-no-context-high-direct"):
        assert keys[keys.index(key) + 1] == f"{key}-paper", key
    assert "note: --paper: the paper has no values for resources" in result.output
    built = build_report([run], with_figures=False, paper=True)
    paper = built.table("table1-paper")
    assert paper.rows[1] == ["gpt-5.5", "0.933 ± 0.056", "0.853 ± 0.143", "0.671 ± 0.096", "0.833 ± 0.194",
                             "0.733 ± 0.227", "0.547 ± 0.138"]
    assert any("TraceBench Table 1, section" in n for n in paper.notes)
    built.write(tmp_path / "all", "markdown")
    check_exports(built, tmp_path / "all")         # the paper's dashes are footnoted, exports well formed
    plain = build_report([run], with_figures=False)
    assert not any(t.key.endswith("-paper") for t in plain.tables)

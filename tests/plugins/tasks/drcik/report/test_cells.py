"""Missing values in the Dr-CiK report tables: the cell helpers (:mod:`tsagent_plugins.tasks.drcik.report.cells`), and
every table ``harness report`` makes from Dr-CiK runs and releases showing each missing value as a dash whose footnote
says why (inputs: :mod:`tests.support.drcik_report_runs`, an agent citing nothing among them)."""

from __future__ import annotations

import math

import pytest

from harness.report import build_report
from harness.report.tables import plain_mark
from harness.reporting import DASH, Table
from tests.support.drcik_report_runs import make_report_inputs
from tests.support.report_runs import check_exports, unexplained_missing
from tsagent_plugins.tasks.drcik.report import cells

#: every Dr-CiK table the inputs make (the per-judge ones for both judges), and the report it is in
EXPECTED = {
    "research": {f"{key}-{judge}" for judge in ("lexical", "other") for key in (
        "drcik-table3", "drcik-table14", "drcik-figure7", "drcik-table10", "drcik-table15", "drcik-table16",
        "drcik-figure4")} | {"drcik-table2-dr", "drcik-table13", "drcik-table15-e2e", "drcik-table17",
                             "drcik-figure16", "drcik-table11", "drcik-not-shown"},
    "forecast": {"drcik-table2", "drcik-table2-common"},
    "release": {"drcik-table5", "drcik-table6", "drcik-figure3", "drcik-table7", "drcik-table8", "drcik-table9",
                "drcik-figure11", "drcik-difficulty"},
}


def test_mean_se_leaves_out_missing_values_and_needs_two_for_the_error():
    assert cells.mean_se([0.2, None, 0.4, math.nan]) == (pytest.approx(0.3), pytest.approx(0.1))
    assert cells.mean_se([0.2, None]) == (0.2, None)
    assert cells.mean_se([None, math.nan]) == (None, None)


def test_a_missing_value_is_a_dash_with_its_reason():
    table = Table("t", "T", ["Agent", "a", "b", "c"])
    assert cells.pct(table, 0.25, "unused") == "25.0%" and table.notes == []
    assert cells.pct(table, None, cells.NO_CITATION) == "–ᵃ"
    assert cells.pct_pm(table, 0.5, None, cells.NO_EVIDENCE) == "50.0% ± –ᵇ"
    assert cells.pct_pm(table, 0.5, 0.015, cells.NO_EVIDENCE) == "50.0% ± 1.5"
    assert cells.pct_pm(table, math.nan, 0.1, cells.NO_CITATION) == "–ᵃ"
    assert cells.pm(table, 0.4, math.nan, "no scored task") == "0.400 ± –ᵇ"
    assert cells.pm(table, None, None, "no scored task") == "–ᶜ"
    assert cells.pm(table, 2.25, 0.75, "no scored task", digits=2) == "2.25 ± 0.75"
    assert table.notes == [f"{DASH}ᵃ {cells.NO_CITATION}", f"{DASH}ᵇ {cells.ONE_TASK}", f"{DASH}ᶜ no scored task"]


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    inputs = make_report_inputs(tmp_path_factory.mktemp("drcik-report"))
    return {name: build_report(dirs, with_figures=False, paper=True, ci=True) for name, dirs in inputs.items()}


@pytest.mark.parametrize("name", list(EXPECTED))
def test_every_missing_cell_of_every_drcik_table_says_why(reports, name, tmp_path):
    report = reports[name]
    keys = {t.key for t in report.tables}
    assert EXPECTED[name] <= keys, EXPECTED[name] - keys
    report.write(tmp_path, "markdown")
    check_exports(report, tmp_path)              # every dash footnoted, no missing value in disguise
    assert all(unexplained_missing(t) == [] for t in report.tables)


def cells_of(report, key: str) -> dict[str, list[str]]:
    return {row[0]: row[1:] for row in report.table(key).rows}


def notes(report, key: str) -> dict[str, str]:
    """footnote mark (as its letter) -> reason, of the table ``key``."""
    return {plain_mark(n[1]): n[3:] for n in report.table(key).notes if n.startswith(DASH)}


def test_an_agent_citing_nothing_has_no_distractor_avoidance_and_the_tables_say_so(reports):
    research = reports["research"]
    silent = cells_of(research, "drcik-table3-lexical")["silent"]
    why = notes(research, "drcik-table3-lexical")
    assert silent[:6] == ["1", "0", "0.0%", "0.0% ± –ᵇ", "0.0% ± –ᵇ", "–ᶜ"]     # one task, no citations
    assert silent[7] == "100.0% ± –ᵇ"
    assert why == {"a": cells.ALL_FAILED, "b": cells.ONE_TASK, "c": cells.NO_CITATION}
    assert cells_of(research, "drcik-table3-lexical")["crashed"][2:] == ["–ᵃ"] * 4 + ["0"] + ["–ᵃ"] * 3
    table14 = research.table("drcik-table14-lexical")
    assert [row[1:] for row in table14.rows if row[0] == "silent"] == [["synthetic", "1", "0.0%", "0.0%", "–ᵇ"]]
    assert [row[1] for row in table14.rows if row[0] == "alpha"] == ["synthetic", "–ᵃ"]   # task_201: no origin
    assert notes(research, "drcik-table14-lexical") == {"a": "the tasks give no origin", "b": cells.NO_CITATION}
    table10 = {(r[0], r[1]): r[2:] for r in research.table("drcik-table10-lexical").rows}
    assert table10[("silent", "A")][-1] == "–ᶜ" and table10[("crashed", "A")][-3:] == ["–ᵇ"] * 3
    assert notes(research, "drcik-table10-lexical")["c"] == cells.NO_CITATION


def test_each_kind_of_missing_value_has_its_own_reason(reports):
    research, release = reports["research"], reports["release"]
    assert research.table("drcik-figure7-lexical").header == ["DR agent", "4 hops", "hops not given"]
    assert cells_of(research, "drcik-figure7-lexical")["silent"] == ["0.0%", "–ᵃ"]
    assert notes(research, "drcik-figure7-lexical") == {"a": "this agent ran no task with this hop count"}
    assert cells_of(research, "drcik-figure16")["silent"][4] == "0 (–ᵃ)"        # task_42 has no profile distractor
    assert "no distractor of this subtype" in notes(research, "drcik-figure16")["a"]
    assert set(notes(research, "drcik-table15-lexical").values()) == {"this agent ran no task at this level"}
    assert set(notes(research, "drcik-table2-dr").values()) == {cells.ONE_TASK, "no scored task in this cell"}
    assert set(notes(research, "drcik-table17").values()) == {
        cells.ONE_TASK, "no scored task in this cell: every forecast failed or went unscored",
        "not run in this context condition on these tasks"}
    wilcoxon, _, naive = research.table("drcik-figure4-lexical").rows
    assert wilcoxon[3:] == ["–ᵃ", "n < 10"] and naive[3] == "–ᵇ"
    assert notes(research, "drcik-figure4-lexical")["b"] == \
        "evidence recall or sCRPS gain constant over the pairs: ρ undefined"
    assert cells_of(release, "drcik-table8")["initial"][-1] == "–ᵃ"
    assert notes(release, "drcik-table8") == {"a": "no blank scored in this round: no mean score"}
    assert cells_of(release, "drcik-figure3")["unknown"][4:] == ["–ᵃ", "166.0", "90.0", "–ᵇ"]
    assert cells_of(release, "drcik-table7")["CiK"] == ["Apache-2.0", "–ᵃ", "–ᵇ"]
    assert release.table("drcik-table7").data[0]["attribution"] is None

"""Report tables on synthetic run directories whose cells are computed by hand (see tests/support/report_runs.py)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from tests.support.report_runs import make_flagged_run, make_main_run
from harness.report import ReportError, build_report


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    return make_main_run(root), make_flagged_run(root)


@pytest.fixture(scope="module")
def report(runs):
    return build_report([runs[0]], with_figures=False)


def cell(table, label, column, section=None):
    """The cell of the row ``label`` (under ``section`` when given) in the column named ``column``."""
    col = table.header.index(column)
    current = None
    for index, row in enumerate(table.rows):
        if index in table.sections:
            current = row[0]
            continue
        if row[0] == label and (section is None or current == section):
            return row[col]
    raise KeyError((label, column, section))


def test_table1_accuracy_cells(report):
    t1 = report.table("table1")
    # alpha, low, direct: values .9 .7 | .6 .8 | 1 1 -> mean 5/6; residuals +-.1, +-.1, 0, 0 -> SD sqrt(.04/5)
    assert cell(t1, "alpha", "low noise, direct, episode", "Accuracy") == "0.833 ± 0.089"
    # beta, high, programmatic held-out: .3 .2 | .2 .3 | .5 .4 -> mean 1.9/6 = .317; residuals all +-.05 -> sqrt(.015/5)
    assert cell(t1, "beta", "high noise, programmatic, held-out", "Accuracy") == f"0.317 ± {math.sqrt(0.003):.3f}"
    assert cell(t1, "alpha", "high noise, programmatic, episode", "Accuracy") == "0.600 ± 0.063"
    assert [r[0] for i, r in enumerate(t1.rows) if i not in t1.sections][:2] == ["alpha", "beta"]  # best first
    assert "Random-chance accuracy: 0.189" in t1.notes[0]  # (1/5 + 1/6 + 1/5) / 3


def test_table1_exploration_cells(report):
    t1 = report.table("table1")
    # python_calls 10, 12, ..., 20 -> 15; statements 100
    # counts are whole numbers, the token share a percentage with one decimal
    assert cell(t1, "alpha", "low noise, direct, episode", "Python: calls | statements") == "15 | 100"
    # plots generated 0,1,0,1,0,1 -> .5; inspected 1,0,0,1,0,0 -> 1/3 (both round to 0; exact in data)
    assert cell(t1, "alpha", "low noise, direct, episode", "Plot counts: generated | inspected") == "0 | 0"
    record = next(r for r in t1.data if r["section"] == "plots" and r["agent"] == "alpha" and r["noise"] == "low"
                  and r["submission"] == "direct")
    assert record["plots_generated"] == pytest.approx(0.5) and record["plots_inspected"] == pytest.approx(1 / 3)
    # beta has no image support: the dash carries the footnote saying so
    shown = cell(t1, "beta", "high noise, direct, episode", "Plot counts: generated | inspected")
    assert shown.startswith("0 | –") and len(shown) == len("0 | –") + 1
    assert f"–{shown[-1]} plots inspected: the agent has no image support" in t1.notes
    assert t1.unexplained() == []
    # numbers 1000..6000 -> 3500; share .5 -> 50.0%
    label = "Console output: numeric values printed | token share"
    assert cell(t1, "alpha", "low noise, programmatic, episode", label) == "3500 | 50.0%"
    held_out = cell(t1, "alpha", "low noise, programmatic, held-out", label)  # not defined for held-out: said
    assert held_out[0] == "–" and any(n.startswith(held_out) and "held-out run of its rule.py" in n for n in t1.notes)
    record = next(r for r in t1.data if r["section"] == "accuracy" and r["agent"] == "alpha"
                  and r["noise"] == "low" and r["submission"] == "direct")
    assert record["mean"] == pytest.approx(5 / 6) and record["sd"] == pytest.approx(math.sqrt(0.008)) and record["n"] == 6


def test_table2_ablation_with_signed_change(report):
    t2 = report.table("table2-high")
    # no context: .5 .4 | .3 .3 | .6 (5 episodes) -> mean .42; residuals +-.05, 0, 0, 0 -> SD sqrt(.005/4)
    # matched base .8 .6 .5 .5 .9 -> paired change mean(-.3, -.2, -.2, -.2, -.3) = -24.0 pp
    assert cell(t2, "alpha (No domain context)", "direct, episode", "Accuracy") == "0.420 ± 0.035 (-24.0)"
    assert cell(t2, "alpha (No domain context)", "direct, episode", "Total tokens (M)") == "1.500 ± 0.000 (+0.500)"
    blank = cell(t2, "alpha (No domain context)", "programmatic, held-out", "Total tokens (M)")
    assert blank[0] == "–" and any(n.startswith(blank) and "only accuracy is measured" in n for n in t2.notes)
    assert "table2-low" not in {t.key for t in report.tables}  # no ablation at low noise


def test_per_simulator_tables(report):
    table = report.table("per-simulator-main-low-direct")
    assert table.header == ["Agent", "balldrop", "bounceball", "massslide"]
    assert cell(table, "alpha", "balldrop", "Episode accuracy") == "0.800 ± 0.141"  # .9, .7: SD ddof=1
    assert cell(table, "beta", "massslide", "Episode accuracy") == "0.800 ± 0.141"
    assert cell(table, "alpha", "balldrop", "Cost (USD)") == "1.250 ± 0.354"  # 1.0, 1.5
    prog = report.table("per-simulator-main-high-programmatic")
    assert cell(prog, "alpha", "bounceball", "Held-out accuracy") == "0.350 ± 0.071"  # .4, .3
    ablation = report.table("per-simulator-no-context-high-direct")
    assert cell(ablation, "alpha", "massslide", "Episode accuracy") == "0.600 ± –ᵃ"  # one seed: no SD
    assert "–ᵃ a single seed: no SD" in ablation.notes


def test_table23_contrasts(report):
    t23 = report.table("table23")
    # alpha - beta, direct: per pair mean over noise = .4 .2 .2 .2 .2 .1 -> 21.7; n = 6 -> CI [min, max]
    assert cell(t23, "alpha − beta, direct, episode", "Effect [95% CI]") == "21.7 [10.0, 40.0]"
    assert cell(t23, "alpha − beta, direct, episode", "W/T/L") == "6/0/0"
    # low - high, direct, averaged over agents: .1 .1 .1 .3 0 .3 -> 15.0, [0, 30], one tie
    row = "Agent average: low − high noise, direct, episode"
    assert cell(t23, row, "Effect [95% CI]") == "15.0 [0.0, 30.0]"
    assert cell(t23, row, "W/T/L") == "5/1/0"


def test_table23_unbounded_interval_is_stated_not_numbered(report):
    t23 = report.table("table23")
    label = "alpha: with − without text, direct, episode"
    assert cell(t23, label, "Effect [95% CI]") == "24.0 [unbounded]"  # 5 pairs: min p = 2/32 > .05
    assert cell(t23, label, "n") == "5"
    assert any("unbounded" in n and "n = 5" in n and "0.0625" in n for n in t23.notes)
    record = next(r for r in t23.data if r["contrast"] == label)
    assert record["ci_unbounded"] is True and record["ci_low_pp"] is None and record["ci_high_pp"] is None
    assert record["effect_pp"] == pytest.approx(24.0)


def test_exclude_agent_from_condition_effects(runs):
    report = build_report([runs[0]], exclude_from_conditions=["beta"], with_figures=False)
    t23 = report.table("table23")
    # alpha only, low - high direct: .1 .1 .1 .3 .1 .3 -> 16.7
    assert cell(t23, "Agent average: low − high noise, direct, episode", "Effect [95% CI]").startswith("16.7 [")
    assert any("beta excluded" in row[0] for row in t23.rows)


def test_flagged_rows_are_refused_with_a_message(runs):
    report = build_report(list(runs), with_figures=False)
    assert any("refused 2 row(s) flagged flag_untrained" in m and "gamma-ctx3-low-direct-balldrop-s0" in m
               for m in report.messages)
    assert len(report.results.refused) == 2
    shown = {row[0] for t in report.tables for row in t.rows}
    assert "gamma" not in shown and "delta" in shown  # an unflagged row of the same run stays
    assert cell(report.table("table1"), "alpha", "low noise, direct, episode") == "0.833 ± 0.089"


def test_results_read_from_row_json_when_parquet_missing(runs, tmp_path):
    import shutil
    copy = tmp_path / "partial"
    shutil.copytree(runs[0], copy)
    (copy / "results.parquet").unlink()
    report = build_report([copy], with_figures=False)
    assert cell(report.table("table1"), "alpha", "low noise, direct, episode") == "0.833 ± 0.089"


def test_bad_inputs_name_the_path(tmp_path):
    with pytest.raises(ReportError, match="not a run directory"):
        build_report([tmp_path / "missing"])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReportError, match=r"empty: no results.parquet and no episodes/\*/row.json"):
        build_report([empty])
    truncated = tmp_path / "truncated" / "episodes" / "e1"
    truncated.mkdir(parents=True)
    (truncated / "row.json").write_text('{"template": "tracebench", ')
    with pytest.raises(ReportError, match=r"truncated/episodes/e1/row.json: not a valid row"):
        build_report([tmp_path / "truncated"])
    broken = tmp_path / "broken"
    broken.mkdir()
    pd.DataFrame([{"template": "tracebench", "profile": "a", "noise": "low"}]).to_parquet(broken / "results.parquet")
    with pytest.raises(ReportError, match="broken.*lacks column\\(s\\) simulator, submission, seed, accuracy"):
        build_report([broken])


def test_json_rendering_is_valid(report):
    document = json.loads(report.render("json"))
    keys = [t["key"] for t in document["tables"]]
    assert keys[:3] == ["table1", "resources", "table2-high"] and "table23" in keys
    assert all(isinstance(t["data"], list) for t in document["tables"])


def test_a_baseline_plot_count_is_a_count_and_its_inspection_not_measured(tmp_path):
    """A classical baseline has no trajectory: its workspace's 0 plots is a count, whether it looked at plots
    is "not measured" -- as its Python calls are -- never "the agent has no image support"."""
    from harness.report import build_report
    from harness.store import RunStore
    from tests.support.report_runs import episode

    store = RunStore.create(tmp_path / "baseline")
    for seed in (0, 1):
        episode(store, agent="euclidean-1nn", sim="balldrop", seed=seed, noise="low", submission="direct",
                accuracy=0.5, extra={"plots_generated": 0})
    store.write_results()
    t1 = build_report([store.root], with_figures=False).table("table1")
    shown = cell(t1, "euclidean-1nn", "low noise, direct, episode", "Plot counts: generated | inspected")
    assert shown.startswith("0 | –")
    assert f"–{shown[-1]} not measured: no agent trajectory (e.g. a classical baseline)" in t1.notes
    assert not any("no image support" in n for n in t1.notes)

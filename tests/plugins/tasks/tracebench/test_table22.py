"""TraceBench Table 22 (Appendix E): per-simulator mean ± SD over seeds, pooled aggregate ±
within-simulator SD, analytic chance row, agents beside the baselines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from harness.report.sections import contribute
from tsagent_plugins.tasks.tracebench.table22 import CHANCE, table22

CLASSES = {"balldrop": 5, "bounceball": 6, "massslide": 5}


def rows(profile: str, agent: str, accs: dict[tuple[str, str], list[float]], **extra) -> list[dict]:
    out = []
    for (sim, noise), values in accs.items():
        for seed, acc in enumerate(values):
            out.append({"template": "tracebench", "profile": profile, "agent": agent, "simulator": sim,
                        "noise": noise, "submission": "direct", "context": True, "examples_per_class": 3,
                        "seed": seed, "accuracy": acc, "n_classes": CLASSES[sim], **extra})
    return out


def cell(table, label: str, column: str) -> str:
    row = next(r for r in table.rows if r[0] == label)
    return row[table.header.index(column)]


def test_cells_mean_sd_aggregate_and_chance():
    e = {("balldrop", "low"): [0.2, 0.4, 0.3], ("bounceball", "low"): [0.5, 0.7, 0.6],
         ("balldrop", "high"): [0.1, 0.1, 0.1], ("bounceball", "high"): [0.2, 0.2, 0.2]}
    frame = pd.DataFrame(rows("euclidean-1nn", "euclidean-1nn", e))
    table = table22(frame)
    assert table.header == ["Method", "balldrop low", "balldrop high", "bounceball low", "bounceball high",
                            "Aggregate low", "Aggregate high"]
    assert cell(table, "Euclidean 1-NN", "balldrop low") == "0.300 ± 0.100"   # ddof = 1
    assert cell(table, "Euclidean 1-NN", "bounceball high") == "0.200 ± 0.000"
    # pooled mean 0.45; residuals (-0.1, 0.1, 0, -0.1, 0.1, 0) -> SD sqrt(0.04 / 5)
    assert cell(table, "Euclidean 1-NN", "Aggregate low") == f"0.450 ± {np.sqrt(0.04 / 5):.3f}"
    assert cell(table, "Euclidean 1-NN", "Aggregate high") == "0.150 ± 0.000"
    assert cell(table, CHANCE, "balldrop low") == "0.200"
    assert cell(table, CHANCE, "bounceball high") == "0.167"
    assert cell(table, CHANCE, "Aggregate low") == f"{(0.2 + 1 / 6) / 2:.3f}"


def test_paper_chance_aggregate_over_three_simulators():
    e = {(sim, noise): [0.5, 0.5] for sim in CLASSES for noise in ("low", "high")}
    table = table22(pd.DataFrame(rows("random", "random", e)))
    assert cell(table, CHANCE, "Aggregate high") == "0.189"  # (0.2 + 0.167 + 0.2) / 3, Appendix E
    assert cell(table, "Random guessing (empirical)", "massslide low") == "0.500 ± 0.000"


def test_order_agents_beside_and_other_conditions_left_out():
    base = {("balldrop", "low"): [0.2, 0.2], ("balldrop", "high"): [0.2, 0.2]}
    data = (rows("random", "random", base) + rows("dtw-1nn", "dtw-1nn", base)
            + rows("euclidean-1nn-privileged", "euclidean-1nn-privileged", base)
            + rows("gpt-5.5", "codex", {("balldrop", "low"): [0.9, 0.7], ("balldrop", "high"): [0.5, 0.5]})
            + rows("gpt-5.5", "codex", {("balldrop", "low"): [0.0, 0.0]}, submission="programmatic")
            + rows("dtw-1nn", "dtw-1nn", {("balldrop", "low"): [1.0, 1.0]}, context=False))
    table = table22(pd.DataFrame(data))
    labels = [r[0] for r in table.rows]
    assert labels == ["Euclidean 1-NN (privileged)", "DTW 1-NN", "Random guessing (empirical)", CHANCE,
                      "Agents", "gpt-5.5"]
    assert cell(table, "gpt-5.5", "balldrop low") == f"0.800 ± {np.std([0.9, 0.7], ddof=1):.3f}"
    assert cell(table, "DTW 1-NN", "balldrop low") == "0.200 ± 0.000"  # the no-context rows are not matched


def test_no_table_without_baselines_and_section_wiring(monkeypatch):
    llm = pd.DataFrame(rows("gpt-5.5", "codex", {("balldrop", "low"): [0.5, 0.6]}))
    assert table22(llm) is None
    frame = pd.DataFrame(rows("random", "random", {("balldrop", "low"): [0.1, 0.3]}))
    import tsagent_plugins.tasks.tracebench as plugin
    import tsagent_plugins.tasks.tracebench.report as tables
    from harness.reporting import Section

    monkeypatch.setattr(tables, "build_section", lambda rows: Section())  # the other tables need real runs
    assert [t.key for t in plugin._report_section(frame).tables] == ["table22"]  # one section carries Table 22
    section = contribute(frame, {"tracebench": plugin._report_section})
    assert [t.key for t in section.tables] == ["table22"] and section.messages == []
    assert plugin._report_section(llm).tables == []


def test_registered_through_the_plugin_hook():
    from harness.report.sections import registered_sections

    assert "tracebench" in registered_sections()


@pytest.mark.parametrize("missing", ["accuracy", "seed"])
def test_rows_without_required_columns_give_no_table(missing):
    frame = pd.DataFrame(rows("random", "random", {("balldrop", "low"): [0.1, 0.3]})).drop(columns=[missing])
    assert table22(frame) is None


# -- ours against the paper's Table 22 ---------------------------------------------------------------------
from pathlib import Path  # noqa: E402

from tsagent_plugins.tasks.tracebench.table22 import MAX_OUTSIDE, compare, criteria, explain, read_paper  # noqa: E402

PAPER = Path(__file__).resolve().parents[4] / "benchmarks" / "data" / "tracebench_table22.csv"
SIMS = ("balldrop", "bounceball", "massslide")


def test_paper_file_holds_the_48_cells_and_issue_values():
    paper = read_paper(PAPER)
    assert len(paper) == 6 * 8 and set(paper["simulator"]) == set(SIMS) | {"aggregate"}
    at = paper.set_index(["agent", "simulator", "noise"])
    assert tuple(at.loc[("euclidean-1nn-privileged", "balldrop", "low")]) == (0.420, 0.148)
    assert tuple(at.loc[("minirocket-ridge-privileged", "aggregate", "high")]) == (0.560, 0.158)
    assert tuple(at.loc[("dtw-1nn", "bounceball", "high")]) == (0.260, 0.114)


def _frame_at(paper, shift: dict) -> pd.DataFrame:
    """Five seeds per paper cell whose mean is the paper's mean plus ``shift[(agent, sim, noise)]``."""
    out = []
    for r in paper[paper["simulator"] != "aggregate"].itertuples():
        m = r.mean + shift.get((r.agent, r.simulator, r.noise), 0.0)
        out += rows(r.agent, r.agent, {(r.simulator, r.noise): [m - 0.1, m, m, m, m + 0.1]})
    return pd.DataFrame(out)


def test_compare_marks_cells_outside_the_paper_sd_and_checks_criteria():
    paper = read_paper(PAPER)
    cmp = compare(_frame_at(paper, {}), paper)
    assert len(cmp) == 48 and cmp["ours"].notna().all()
    assert not cmp[cmp["simulator"] != "aggregate"]["outside"].any()
    c = criteria(cmp)
    assert c["outside"] == 0 and c["cells"] == 36 and c["met"]

    # 0.148 is the paper's SD of this cell: 0.15 above is outside, 0.14 below is not
    shifted = {("euclidean-1nn-privileged", "balldrop", "low"): 0.15, ("dtw-1nn", "balldrop", "low"): -0.14}
    cmp = compare(_frame_at(paper, shifted), paper).set_index(["agent", "simulator", "noise"])
    assert cmp.loc[("euclidean-1nn-privileged", "balldrop", "low"), "outside"]
    assert cmp.loc[("euclidean-1nn-privileged", "balldrop", "low"), "side"] == 1
    assert not cmp.loc[("dtw-1nn", "balldrop", "low"), "outside"]


def test_criteria_same_side_and_count_limits():
    paper = read_paper(PAPER)
    three_below = {("dtw-1nn", s, "low"): -0.3 for s in SIMS}
    c = criteria(compare(_frame_at(paper, three_below), paper))
    assert c["outside"] == 3 and c["same_side"]["dtw-1nn"] == 3 and not c["met"]
    # alternating sides on one method stay below the same-side limit
    mixed = {("dtw-1nn", "balldrop", "low"): -0.3, ("dtw-1nn", "bounceball", "low"): 0.4}
    assert criteria(compare(_frame_at(paper, mixed), paper))["same_side"]["dtw-1nn"] == 1
    many = {(a, s, "high"): (0.45 if i % 2 else -0.35) for i, (a, s) in enumerate(
        (a, s) for a in dict.fromkeys(paper["agent"]) for s in SIMS[:2])}
    c = criteria(compare(_frame_at(paper, many), paper))
    assert c["outside"] == 12 > MAX_OUTSIDE and not c["met"]


def test_missing_cells_are_not_counted_and_fail_the_criteria():
    paper = read_paper(PAPER)
    frame = _frame_at(paper, {})
    cmp = compare(frame[frame["simulator"] != "massslide"], paper)
    assert cmp[cmp["simulator"] == "massslide"]["ours"].isna().all()
    c = criteria(cmp)
    assert c["cells"] == 24 and not c["complete"] and not c["met"]


def test_a_miss_is_explained_only_where_the_other_reading_was_run_and_lies_inside():
    paper = read_paper(PAPER)
    misses = {("dtw-1nn", s, "low"): -0.3 for s in SIMS}
    kept = compare(_frame_at(paper, misses), paper)
    assert criteria(kept)["same_side"]["dtw-1nn"] == 3
    # the other reading ran on bounceball only: inside there, still outside on balldrop (not run for massslide)
    other = _frame_at(paper, {("dtw-1nn", "balldrop", "low"): -0.3})
    other = other[other["simulator"] != "massslide"]
    excused, explained = explain(kept, {"noise-seeds": compare(other, paper)})
    assert explained == {("dtw-1nn", "bounceball", "low"): ["noise-seeds"]}
    c = criteria(excused)
    assert c["outside"] == 2 and c["same_side"]["dtw-1nn"] == 2
    assert c["aggregate_outside"] == 1 and not c["met"]  # an aggregate is never excused: it mixes readings
    assert criteria(kept)["outside"] == 3  # the kept rows are left as they were
    assert explain(kept, {})[1] == {}


def test_read_paper_names_the_file_and_missing_column(tmp_path):
    bad = tmp_path / "t22.csv"
    bad.write_text("# note\nagent,simulator,noise,mean\nx,balldrop,low,0.1\n")
    with pytest.raises(ValueError, match=r"t22.csv: missing column\(s\) \['sd'\]"):
        read_paper(bad)

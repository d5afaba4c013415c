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
    from harness import Section

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

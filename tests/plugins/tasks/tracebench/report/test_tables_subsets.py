"""``harness report`` on every subset shape of the TraceBench experiment (issue 38): each writes the tables
its data supports, names the ones it cannot make with why, and exits 0."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from harness.cli.report import report
from harness.store import RunStore
from tests.support.report_runs import episode

SEEDS = (0, 1)


def _run(root, name, conditions, simulators=("balldrop", "bounceball"), agent="euclidean-1nn"):
    """One run: ``conditions`` are (noise, submission, context, examples) cells, every simulator and seed."""
    store = RunStore.create(root / name)
    for noise, submission, context, examples in conditions:
        for sim in simulators:
            for seed in SEEDS:
                episode(store, agent=agent, sim=sim, seed=seed, noise=noise, submission=submission,
                        accuracy=0.4 + 0.1 * seed, context=context, examples=examples,
                        heldout=0.5 if submission == "programmatic" else None,
                        extra={"agent": "classical", "model": None})
    store.write_results()
    return store.root


MAIN = [(n, s, True, 3) for n in ("low", "high") for s in ("direct", "programmatic")]
SHAPES = {
    # the case: an ablation beside direct episodes only, no held-out column anywhere
    "ablation-with-direct": ([("high", "direct", True, 3), ("high", "direct", False, 3)], ("balldrop",),
                             {"table1", "resources", "table2-high", "table23",
                              "per-simulator-main-high-direct", "per-simulator-no-context-high-direct"},
                             ["Table 1: no held-out column"]),
    "ablation-only": ([("high", "direct", False, 3), ("low", "direct", True, 0)], ("balldrop", "bounceball"),
                      {"table2-high", "table2-low", "per-simulator-no-context-high-direct",
                       "per-simulator-no-examples-low-direct"},
                      ["Table 1 not made: no main-setting episode", "Table 2: changes not computed",
                       "Table 23 not made", "Main-result figure not made"]),
    "direct-only": ([c for c in MAIN if c[1] == "direct"], ("balldrop", "bounceball"),
                    {"table1", "resources", "table23", "per-simulator-main-low-direct",
                     "per-simulator-main-high-direct"},
                    ["Table 2 not made: no ablation rows", "Table 1: no held-out column"]),
    "programmatic-only": ([c for c in MAIN if c[1] == "programmatic"], ("balldrop", "bounceball"),
                          {"table1", "resources", "table23", "per-simulator-main-low-programmatic",
                           "per-simulator-main-high-programmatic"},
                          ["Table 2 not made: no ablation rows"]),
    "one-simulator": (MAIN, ("massslide",), {"table1", "resources", "table23"} |
                      {f"per-simulator-main-{n}-{s}" for n in ("low", "high") for s in ("direct", "programmatic")},
                      ["Table 2 not made: no ablation rows"]),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_subset_shape_reports_what_it_supports_and_names_the_rest(tmp_path, shape):
    conditions, simulators, tables, named = SHAPES[shape]
    run = _run(tmp_path, shape, conditions, simulators)
    out = tmp_path / "report"
    result = CliRunner().invoke(report, [str(run), "--format", "json", "--out", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads((out / "report.json").read_text())
    assert {t["key"] for t in document["tables"]} == tables
    messages = document["messages"]
    assert not [m for m in messages if "report failed" in m], messages
    for start in named:
        assert any(m.startswith(start) for m in messages), (start, messages)
    figures = set(document["figures"])
    assert ("main-result" in figures) == ("table1" in tables)
    direct_main = any(c[1] == "direct" and c[2] and c[3] == 3 for c in conditions)
    assert bool({f for f in figures if f.startswith("confusion")}) == direct_main, figures
    assert not {f for f in figures if f.startswith("accuracy-cost")}  # classical baselines: no cost
    assert any(m.startswith("Accuracy-cost figures not made") for m in messages)
    assert any(m.startswith("Confusion matrices not made") for m in messages) != direct_main


def test_ablation_changes_are_paired_against_the_matched_main_episodes(tmp_path):
    """The issue's case computes Table 2's change: ablated minus main on the same (simulator, seed) = 0."""
    run = _run(tmp_path, "abl", SHAPES["ablation-with-direct"][0], ("balldrop",))
    out = tmp_path / "report"
    assert CliRunner().invoke(report, [str(run), "--format", "json", "--out", str(out), "--no-figures"]).exit_code == 0
    table2 = next(t for t in json.loads((out / "report.json").read_text())["tables"] if t["key"] == "table2-high")
    direct = [r for r in table2["data"] if r["section"] == "accuracy" and r["submission"] == "direct"]
    assert [(r["mean"], r["change"], r["pairs"]) for r in direct] == [(pytest.approx(0.45), 0.0, 2)]

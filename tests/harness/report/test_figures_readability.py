"""Readability of every report figure and the CSV / LaTeX tables, on a baseline-only run, an LLM run
(scripted-looking rows with tokens, cost and trajectory metrics), a mixed one and one with many agents.

The figure checks are :func:`harness.report.figures.figure_problems` on the rendered figures: title,
panel titles, axis, tick and legend texts inside the canvas; no two tick labels of an axis overlapping;
a legend entry per plotted series and no legend over a panel; a note in every empty panel.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.support.report_runs import check_exports, make_baseline_run, make_main_run
from harness.cli.report import report as report_cmd
from harness.report import build_report
from harness.report.figures import NO_DATA_GID, figure_problems, new_figure, no_data, set_title
from harness.report.render import to_csv, to_latex
from harness.report.tables import DASH, Table, fmt_count, fmt_share

MANY = tuple(f"baseline-{i:02d}" for i in range(10))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, list]:
    root = tmp_path_factory.mktemp("readable")
    llm = make_main_run(root)
    baseline = make_baseline_run(root, agents=("euclidean-1nn", "dtw-1nn"))
    many = make_baseline_run(root / "many", agents=MANY)
    return {"baseline": [baseline], "llm": [llm], "mixed": [llm, baseline], "many": [many]}


@pytest.fixture(scope="module")
def reports(runs) -> dict:
    return {name: build_report(dirs) for name, dirs in runs.items()}


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


@pytest.mark.parametrize("name", ["baseline", "llm", "mixed", "many"])
def test_every_figure_is_readable(reports, name):
    report = reports[name]
    assert report.figures
    for key, fig in report.figures.items():
        assert figure_problems(fig) == [], key


def test_figures_made_for_each_run(reports):
    assert set(reports["baseline"].figures) == {"confusion-balldrop", "confusion-bounceball", "confusion-massslide",
                                                "figure4-resources", "main-result"}  # no cost: no accuracy-cost
    assert set(reports["mixed"].figures) == set(reports["baseline"].figures) | {
        "accuracy-cost-balldrop", "accuracy-cost-bounceball", "accuracy-cost-massslide"}


def test_empty_panels_say_why(reports):
    fig = reports["baseline"].figures["figure4-resources"]
    notes = {ax.get_title(): [t.get_text() for t in ax.texts if t.get_gid() == NO_DATA_GID] for ax in fig.axes}
    assert notes["Accuracy vs total tokens"] == ["no token counts: no agent\nhere made model calls"]
    assert notes["Accuracy vs tool calls"] == ["no tool calls recorded"]
    assert notes["Accuracy vs episode time"] == []  # the baselines have episode times


def test_every_series_has_a_legend_entry_and_coinciding_points_are_spread(reports):
    fig = reports["mixed"].figures["figure4-resources"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert set(legend) == {"alpha", "beta", "euclidean-1nn", "dtw-1nn", "random chance (0.189)"}
    time = next(ax for ax in fig.axes if ax.get_title() == "Accuracy vs episode time")
    points = {c.get_label(): c.lines[0].get_data() for c in time.containers}
    # alpha and both baselines share accuracy (their values are alpha's) and mean time (100.5 s)
    xs = sorted(float(points[a][0][0]) for a in ("alpha", "euclidean-1nn", "dtw-1nn"))
    ys = {float(points[a][1][0]) for a in ("alpha", "euclidean-1nn", "dtw-1nn")}
    assert len(ys) == 1 and xs[0] == pytest.approx(100.5)
    assert xs[1] > xs[0] and xs[2] > xs[1]  # shifted apart, by a small step of the axis span
    low, high = time.get_xlim()
    assert xs[2] - xs[0] < 0.05 * (high - low)
    markers = {c.lines[0].get_marker() for c in time.containers}
    assert len(markers) == len(time.containers)  # a distinct marker per agent


def test_many_agents_get_a_taller_figure_and_one_legend_entry_each(reports):
    fig = reports["many"].figures["figure4-resources"]
    assert fig.get_figheight() >= 1.6 + 0.22 * len(MANY)
    assert {t.get_text() for t in fig.legends[0].get_texts()} >= set(MANY)


def test_the_checks_catch_unreadable_figures():
    fig = new_figure(figsize=(4, 3))
    a, b, c = fig.subplots(1, 3)
    fig.suptitle("a title much longer than the canvas is wide, which would be clipped on both of its sides")
    a.plot([0, 1], [0, 1])  # no label, no legend
    a.set_xticks([0.0, 0.001, 0.002], ["0.000000", "0.001000", "0.002000"])
    problems = figure_problems(fig)
    assert any(p.startswith("title") and "outside the canvas" in p for p in problems)
    assert any("x tick labels overlap" in p for p in problems)
    assert any("has no label" in p for p in problems)
    assert sum("empty panel without a note" in p for p in problems) == 2
    set_title(fig, fig._suptitle.get_text())
    no_data(b)
    no_data(c, "nothing recorded")
    problems = figure_problems(fig)
    assert not any("title" in p or "empty panel" in p for p in problems)


def test_the_checks_catch_a_title_in_the_legend_and_a_zoomed_axis():
    from harness.report.figures import outside_legend, pad_limits

    fig = new_figure(figsize=(5, 3))
    ax = fig.subplots()
    ax.plot([1, 1], [0.5, 0.6], label="one tool call")
    ax.set_xlim(0.99, 1.02)  # the zoom a single point used to get
    fig.suptitle("a long title " * 6)
    fig.legend(loc="outside right upper")
    problems = figure_problems(fig)
    assert any("runs into the legend" in p for p in problems)
    assert any("x axis zoomed into a near-constant range (0.99–1.02)" in p for p in problems)
    fig = new_figure(figsize=(5, 3))  # the helpers avoid both
    ax = fig.subplots()
    ax.plot([1, 1], [0.5, 0.6], label="one tool call")
    pad_limits(ax, [1.0, 1.0], "x")
    assert ax.get_xlim() == pytest.approx((0.0, 1.3))  # a constant count is shown from 0, at its size
    set_title(fig, "a long title " * 6)
    outside_legend(fig, [ax])
    assert figure_problems(fig) == []


def test_main_result_and_cost_figures_show_agents_and_baselines(reports):
    fig = reports["mixed"].figures["main-result"]
    legend = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"alpha", "beta", "euclidean-1nn", "dtw-1nn"} <= legend
    assert {"random chance (0.200)", "random chance (0.167)"} <= legend  # one line per simulator
    assert [ax.get_title() for ax in fig.axes] == ["balldrop", "bounceball", "massslide"]
    balldrop = fig.axes[0]
    beta = next(c for c in balldrop.containers if c.get_label() == "beta")
    # beta low noise direct on balldrop: seeds 0 and 1 at 0.5 and 0.5 (ACCURACY pairs) -> mean 0.5
    assert float(beta.lines[0].get_ydata()[0]) == pytest.approx(0.5)
    cost = reports["mixed"].figures["accuracy-cost-balldrop"]
    for ax in cost.axes:  # every panel has points; baselines (no cost) at 0
        labels = {c.get_label() for c in ax.containers}
        assert {"alpha", "beta", "euclidean-1nn", "dtw-1nn"} <= labels
        baseline = next(c for c in ax.containers if c.get_label() == "euclidean-1nn")
        assert float(baseline.lines[0].get_xdata()[0]) == pytest.approx(0.0, abs=0.2)


def test_number_formats():
    assert fmt_count(3499.6) == "3500" and fmt_count(None) == DASH
    assert fmt_share(0.5) == "50.0%" and fmt_share(0.12345) == "12.3%"
    table = Table("t", "T", ["a", "b"])
    assert table.explain("0.5 ± –", "one seed") == "0.5 ± –ᵃ"
    assert table.explain("–", "not run") == "–ᵇ" and table.explain("– | –", "one seed") == "–ᵃ | –ᵃ"
    assert table.notes == ["–ᵃ one seed", "–ᵇ not run"]


def test_table1_shows_only_conditions_and_sections_with_data(reports):
    baseline = reports["baseline"].table("table1")
    sections = [baseline.rows[i][0] for i in sorted(baseline.sections)]
    assert sections == ["Accuracy"]  # a classical baseline has no Python, plot or console metrics
    llm = reports["llm"].table("table1")
    assert [llm.rows[i][0] for i in sorted(llm.sections)] == [
        "Accuracy", "Python: calls | statements", "Plot counts: generated | inspected",
        "Console output: numeric values printed | token share"]
    resources = reports["baseline"].table("resources")
    assert [resources.rows[i][0] for i in sorted(resources.sections)] == ["Time (s)"]


@pytest.mark.parametrize("name", ["baseline", "llm", "mixed"])
def test_tables_every_dash_explained_and_csv_tex_exports(reports, name, tmp_path):
    report = reports[name]
    report.write(tmp_path, "markdown")
    check_exports(report, tmp_path)
    for table in report.tables:
        assert to_csv(table) == (tmp_path / "tables" / f"{table.key}.csv").read_text()
        assert to_latex(table) == (tmp_path / "tables" / f"{table.key}.tex").read_text()


def test_latex_escapes_special_characters():
    table = Table("x", "50% of a_b", ["Agent", "a & b"])
    table.add("gpt_5 #1", [table.explain("0.5 ± –", "one seed")])
    tex = to_latex(table)
    assert r"gpt\_5 \#1 & 0.5 $\pm$ --\textsuperscript{a} \\" in tex
    assert r"Agent & a \& b \\" in tex and r"\caption{50\% of a\_b}" in tex


def test_cli_writes_every_file_and_prints_the_paths(runs, tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(report_cmd, [*map(str, runs["mixed"]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    printed = result.stdout.split()
    assert str(out / "report.md") in printed and str(out / "index.html") in printed
    assert str(out / "tables" / "table1.csv") in printed and str(out / "tables" / "table1.tex") in printed
    assert str(out / "figures" / "figure4-resources.png") in printed
    assert all(__import__("pathlib").Path(p).is_file() for p in printed)
    assert "<table" not in result.stdout  # the paths, not the page

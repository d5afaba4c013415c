"""The report's matplotlib figures: structure of the Figure objects and the PNG files."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.report_runs import LABELS, make_main_run
from harness.report import build_report


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("fig")
    report = build_report([make_main_run(root)])
    out = root / "out"
    report.write(out, "markdown")
    return report, out


def _panels(fig):
    return [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]


def test_every_figure_is_written_as_png(built):
    report, out = built
    expected = {"confusion-balldrop", "confusion-bounceball", "confusion-massslide", "figure4-resources",
                "accuracy-cost-balldrop", "accuracy-cost-bounceball", "accuracy-cost-massslide", "main-result"}
    assert set(report.figures) == expected
    for key in expected:
        png = out / "figures" / f"{key}.png"
        assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![figure4-resources](figures/figure4-resources.png)" in (out / "report.md").read_text()


def test_confusion_matrix_counts_and_colours(built):
    report, _ = built
    fig = report.figures["confusion-balldrop"]
    panels = _panels(fig)
    assert [ax.get_title() for ax in panels] == ["alpha, low noise", "alpha, high noise",
                                                  "beta, low noise", "beta, high noise"]
    ax = panels[0]
    truth = [t.get_text() for t in ax.get_yticklabels()]
    predicted = [t.get_text() for t in ax.get_xticklabels()]
    assert truth == LABELS["balldrop"]  # rows: truth, in the prompt's label order
    assert predicted == LABELS["balldrop"] + ["invalid"]  # one beta episode has an invalid prediction
    # alpha low: seeds .9 and .7 -> 4,4,3,3,2 on the diagonal; misses: drag->gravity, gravity->none, none->restitution x2
    counts = np.array([int(t.get_text()) for t in ax.texts]).reshape(len(truth), len(predicted))
    expected = np.zeros((5, 6), dtype=int)
    np.fill_diagonal(expected[:, :5], [4, 4, 3, 3, 2])
    expected[2, 3] = expected[3, 4] = 1
    expected[4, 0] = 2
    assert (counts == expected).all()
    fraction = np.asarray(ax.images[0].get_array())
    assert fraction[4, 0] == pytest.approx(0.5) and fraction[4, 4] == pytest.approx(0.5)
    assert np.allclose(fraction.sum(axis=1), 1.0)  # row-normalised colour
    beta_high = _panels(fig)[3]
    beta_counts = np.array([int(t.get_text()) for t in beta_high.texts]).reshape(5, 6)
    assert beta_counts[4, 5] == 1  # the invalid prediction has its own column
    assert fig.axes[-1].get_label() == "<colorbar>"


def test_resource_figure(built):
    report, _ = built
    fig = report.figures["figure4-resources"]
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["Accuracy vs total tokens", "Accuracy vs cost",
                                               "Accuracy vs episode time", "Accuracy vs tool calls"]
    assert [ax.get_xlabel() for ax in axes] == ["Total tokens", "Cost (USD)", "Episode time (s)", "Tool calls"]
    assert [t.get_text() for t in axes[0].get_xticklabels()][-1].endswith("M")  # SI-prefixed token counts
    chance = (1 / 5 + 1 / 6 + 1 / 5) / 3  # 0.189
    for ax in axes:
        assert len(ax.containers) == 2  # one error-bar series per agent
        reference = [line for line in ax.lines if line.get_linestyle() == "--"]
        assert len(reference) == 1 and reference[0].get_ydata()[0] == pytest.approx(chance)
    # alpha: mean accuracy over its 24 main episodes, at 1.0 M tokens
    alpha = axes[0].containers[0]
    x, y = alpha.lines[0].get_data()
    assert x[0] == pytest.approx(1e6) and y[0] == pytest.approx(
        np.mean([0.9, 0.7, 0.6, 0.8, 1.0, 1.0, 0.8, 0.6, 0.5, 0.5, 0.9, 0.7, 0.8, 0.8, 0.7, 0.5, 0.9, 0.9,
                 0.6, 0.6, 0.5, 0.3, 0.8, 0.8]))


def test_cost_figures(built):
    report, _ = built
    fig = report.figures["accuracy-cost-bounceball"]
    assert [ax.get_title() for ax in fig.axes] == ["low noise, direct", "low noise, programmatic",
                                                   "high noise, direct", "high noise, programmatic"]
    assert all(len(ax.containers) == 2 for ax in fig.axes)
    line = [l for l in fig.axes[0].lines if l.get_linestyle() == "--"][0]
    assert line.get_ydata()[0] == pytest.approx(1 / 6)  # bounceball has six classes

"""The viewer's comparison index shows the paired comparison of agents with the numbers of
``harness report --compare``."""

from __future__ import annotations

from harness.report import build_report
from harness.view.data import load_runs
from harness.view.site import Site
from tests.support.report_runs import make_main_run


def test_compare_page_shows_the_report_numbers(tmp_path):
    run = make_main_run(tmp_path)
    page = Site(load_runs([run])).compare_index()
    table = build_report([run], with_figures=False, compare=[("alpha", "beta")]).table("compare")
    assert "Paired comparison of agents" in page
    for row in table.rows:  # every row of the report's comparison, cell for cell
        cells = [f"<td>{row[0]}</td>"] + [f'<td class="n">{c}</td>' for c in row[1:]]
        assert "".join(cells) in page, row
    assert "21.7 [10.0, 40.0]" in page and "6/0/0" in page

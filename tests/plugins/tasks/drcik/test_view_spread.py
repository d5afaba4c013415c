"""The static leaderboard's Dr-CiK board and ``harness report``'s Table 2 give the same ± on the same run: the
standard error of the mean over scored tasks, labelled (issue 38.5; they were SD vs SE: 0.172 vs 0.099)."""

from __future__ import annotations

import math
import re

import pandas as pd
from click.testing import CliRunner

from harness.cli import cli
from harness.report import build_report
from harness.view.data import load_runs
from harness.view.site import Site
from tests.support.paths import REPO


def test_board_and_report_agree_on_the_standard_error(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks" / "drcik" / "sample-statistical.yaml"),
                                      "--set", "forecasters=[naive]", "--set", "contexts=[no-context]",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    scores = pd.read_parquet(tmp_path / "run" / "results.parquet")["scrps"].dropna()
    assert len(scores) == 3
    se = float(scores.std(ddof=1)) / math.sqrt(3)
    expected = f"{scores.mean():.3f} ± {se:.3f}"
    table = build_report([tmp_path / "run"], with_figures=False).table("drcik-table2")
    assert table.rows[0][1] == expected
    html = Site(load_runs([tmp_path / "run"])).render("index.html")[0].decode()
    cells = re.findall(r'<td class="n metric[^"]*" data-sort="[^"]+">([^<]+)</td>', html)
    assert cells == [expected]
    assert "mean ± standard error over scored episodes" in html
    # --paper puts what the paper's text states about Table 2 beside it (the text copy has no table bodies)
    paper = build_report([tmp_path / "run"], with_figures=False, paper=True)
    assert [t.key for t in paper.tables][:3] == ["drcik-table2", "drcik-table2-paper", "drcik-table2-common"]
    assert paper.table("drcik-table2-paper").rows[1] == ["All", "Tasks", "279", "§5.2, line 79"]
    assert any(m.startswith("--paper: no values stated in the Dr-CiK paper's text for drcik-table2-common")
               for m in paper.messages)

"""``harness report`` end to end on synthetic run directories, in every format."""

from __future__ import annotations

import csv
import json

import pytest
from click.testing import CliRunner

from tests.support.report_runs import make_flagged_run, make_main_run
from harness.cli.report import report


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    return make_main_run(root), make_flagged_run(root)


@pytest.mark.parametrize("fmt,name", [("table", "report.txt"), ("markdown", "report.md"), ("html", "index.html"),
                                      ("json", "report.json")])
def test_every_format(runs, tmp_path, fmt, name):
    out = tmp_path / fmt
    result = CliRunner().invoke(report, [str(runs[0]), "--format", fmt, "--out", str(out), "--no-figures"])
    assert result.exit_code == 0, result.output
    document = (out / name).read_text()
    assert "Table 1" in document and "Table 23" in document and "0.833 ± 0.089" in document
    assert "unbounded" in document
    if fmt == "json":
        data = json.loads(document)
        assert {t["key"] for t in data["tables"]} >= {"table1", "table2-high", "table23"}
    if fmt == "html":
        assert document.startswith("<!doctype html>") and "<table id='table1'>" in document
        printed = result.stdout.splitlines()  # the written files' paths, not the page
        assert str(out / name) in printed and all(line.startswith(str(out)) for line in printed)


def test_figures_and_refusal_message(runs, tmp_path):
    out = tmp_path / "full"
    result = CliRunner().invoke(report, [*map(str, runs), "--format", "markdown", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "refused 2 row(s) flagged flag_untrained" in result.output
    # main-result, figure4-resources, 3 confusion matrices, 3 accuracy-cost
    assert len(list((out / "figures").glob("*.png"))) == 8 and (out / "figures" / "main-result.png").is_file()


def test_default_out_is_inside_the_first_run(runs):
    result = CliRunner().invoke(report, [str(runs[0]), "--no-figures", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert (runs[0] / "report" / "report.json").is_file()


def test_missing_run_dir_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(report, [str(tmp_path / "nope")])
    assert result.exit_code != 0
    assert "nope: not a run directory" in str(result.exception)


def test_repeated_episodes_and_empty_run_dirs_are_set_aside_with_a_message(tmp_path):
    """Two copies of the same run are counted once; a run folder without results is skipped, said so."""
    import shutil

    import pandas as pd

    from harness.report.load import load_results

    src = tmp_path / "a"
    (src / "episodes").mkdir(parents=True)
    pd.DataFrame([{"profile": "p", "episode": "e-seed0", "accuracy": 1.0},
                  {"profile": "p", "episode": "e-seed1", "accuracy": 0.0}]).to_parquet(src / "results.parquet")
    shutil.copytree(src, tmp_path / "b")
    (tmp_path / "empty").mkdir()
    results = load_results([src, tmp_path / "b", tmp_path / "empty"])
    assert len(results.frame) == 2 and set(results.frame["run_dir"]) == {str(src)}
    assert any("left out 2 repeated episode(s)" in m for m in results.messages)
    assert any("skipped" in m and "empty" in m for m in results.messages)


def test_compare_prints_the_paired_table_first(runs, tmp_path):
    out = tmp_path / "compare"
    result = CliRunner().invoke(report, [str(runs[0]), "--no-figures", "--out", str(out), "--compare", "alpha", "beta",
                                         "--compare", "noise=low", "noise=high"], terminal_width=250)
    assert result.exit_code == 0, result.output
    assert result.stdout.lstrip().startswith("Paired comparison")
    assert "21.7 [10.0, 40.0]" in result.stdout and "p (Holm)" in result.stdout
    rows = list(csv.reader((out / "tables" / "compare.csv").open()))
    assert rows[0] == ["section", "Contrast", "Effect [95% CI]", "W/T/L", "n", "pairs", "dropped (A/B)", "p", "p (Holm)"]
    assert ["", "alpha − beta, setting=main, submission=direct, episode", "21.7 [10.0, 40.0]", "6/0/0", "6", "12",
            "0/0", "0.0312"] == rows[1][:8]


def test_compare_with_an_unknown_side_is_one_error_line(runs, tmp_path, capsys):
    from harness.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["report", str(runs[0]), "--no-figures", "--out", str(tmp_path / "x"), "--compare", "alpha", "nobody"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "error: --compare 'nobody': no episode has it as a profile, run or condition value" in err
    assert "Traceback" not in err


def test_ci_adds_interval_columns_to_csv_and_latex(runs, tmp_path):
    out = tmp_path / "ci"
    result = CliRunner().invoke(report, [str(runs[0]), "--no-figures", "--ci", "--out", str(out)])
    assert result.exit_code == 0, result.output
    header = next(csv.reader((out / "tables" / "table1.csv").open()))
    assert header[header.index("low noise, direct, episode") + 1] == "low noise, direct, episode 95% CI"
    assert "low noise, direct, episode 95\\% CI" in (out / "tables" / "table1.tex").read_text()
    assert "balldrop 95% CI" in (out / "tables" / "per-simulator-main-low-direct.csv").read_text()

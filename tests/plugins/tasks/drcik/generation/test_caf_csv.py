"""A CAF task whose series is a CSV file beside it (docs/benchmarks/drcik-own-data.md, "From a CSV of your
series"): the shipped example reads to the expected task, equal to the same task written inline; it passes
``dr-offline-scripts`` and ``dr-generate`` and comes out anonymised; every bad CSV is one line naming the file,
the line and the column (or the task file and the field of a bad reference)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness import ConfigError
from harness.cli import cli
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation import caf

EXAMPLE = REPO / "tasks" / "drcik" / "caf-csv-example"
SPEC = REPO / "tasks" / "drcik" / "generate-csv-example.yaml"
TASK = "caf_bakery_loaves.json"
CSV = "bakery_loaves.csv"
DOC = REPO / "docs" / "benchmarks" / "drcik-own-data.md"


def copy_example(tmp_path: Path) -> Path:
    folder = tmp_path / "caf"
    shutil.copytree(EXAMPLE, folder)
    return folder


def edit_task(folder: Path, change) -> None:
    data = json.loads((folder / TASK).read_text())
    change(data)
    (folder / TASK).write_text(json.dumps(data))


def edit_csv(folder: Path, change) -> None:
    lines = (folder / CSV).read_text().splitlines()
    change(lines)
    (folder / CSV).write_text("\n".join(lines) + "\n")


def test_the_shipped_csv_task_reads_to_the_expected_series():
    task = caf.read_task(EXAMPLE / TASK)
    s = task.series
    assert (task.task_id, task.frequency, task.prediction_length) == ("caf_bakery_loaves", "1 day", 7)
    assert (len(s.history_timestamps), len(s.history_values), len(s.future_timestamps), len(s.future_values)) == \
        (28, 28, 7, 7)
    assert (s.history_timestamps[0], s.history_timestamps[-1]) == ("2024-02-26 00:00:00", "2024-03-24 00:00:00")
    assert (s.future_timestamps[0], s.future_timestamps[-1]) == ("2024-03-25 00:00:00", "2024-03-31 00:00:00")
    assert s.history_values[:7] == [118.0, 123.0, 130.0, 132.0, 167.0, 212.0, 0.0]
    assert s.future_values == [127.0, 132.0, 134.0, 141.0, 176.0, 221.0, 0.0]
    assert task.source == EXAMPLE / TASK


def test_the_csv_form_is_the_inline_form_after_reading(tmp_path):
    """One format: the task read from the CSV equals the task with the same series written inline."""
    via_csv = caf.read_task(EXAMPLE / TASK)
    raw = json.loads((EXAMPLE / TASK).read_text())
    raw["series"] = via_csv.series.model_dump()
    inline = tmp_path / TASK
    inline.write_text(json.dumps(raw))
    assert caf.read_task(inline).model_dump() == via_csv.model_dump()


def test_forecast_start_sets_the_split_and_later_rows_are_left_out(tmp_path):
    folder = copy_example(tmp_path)
    edit_task(folder, lambda d: d["series"].update(forecast_start="2024-03-18"))
    s = caf.read_task(folder / TASK).series
    assert (len(s.history_values), s.history_timestamps[-1]) == (21, "2024-03-17 00:00:00")
    assert (s.future_timestamps[0], s.future_timestamps[-1]) == ("2024-03-18 00:00:00", "2024-03-24 00:00:00")
    assert s.future_values == [126.0, 131.0, 133.0, 140.0, 170.0, 220.0, 0.0]


def test_default_columns_date_times_blank_lines_and_other_columns(tmp_path):
    """Columns ``timestamp`` and ``value`` by default; date-times in any ISO 8601 form; a blank line and a
    column the task does not use are ignored."""
    (tmp_path / "flow.csv").write_text("site,timestamp,value\nA,2024-05-01T00:00,1.5\nA,2024-05-01 01:00:00,2\n\n"
                                       "A,2024-05-01 02:00,-3e1\nA,2024-05-01T03:00:00,4\n")
    raw = json.loads((EXAMPLE / TASK).read_text())
    raw.update(frequency="1 hour", prediction_length=1, seasonal_period=24, series={"csv": "flow.csv"})
    (tmp_path / "t.json").write_text(json.dumps(raw))
    s = caf.read_task(tmp_path / "t.json").series
    assert s.history_timestamps == ["2024-05-01 00:00:00", "2024-05-01 01:00:00", "2024-05-01 02:00:00"]
    assert (s.history_values, s.future_timestamps, s.future_values) == ([1.5, 2.0, -30.0], ["2024-05-01 03:00:00"],
                                                                         [4.0])


def _row(line: int, text: str):
    """Replace the CSV's ``line`` (header = 1) by ``text``."""
    return lambda lines: lines.__setitem__(line - 1, text)


#: (what is wrong, the change, the file the error names, the error after "FILE: ")
BAD = [
    ("a value that is no number", lambda f: edit_csv(f, _row(9, "2024-03-04,n/a,210")), CSV,
     "line 9, column 'loaves': 'n/a' is not a number"),
    ("an empty value", lambda f: edit_csv(f, _row(9, "2024-03-04,,210")), CSV,
     "line 9, column 'loaves': empty; a CAF series has no missing value"),
    ("an infinite value", lambda f: edit_csv(f, _row(9, "2024-03-04,inf,210")), CSV,
     "line 9, column 'loaves': 'inf' is not a finite number"),
    ("an unparseable timestamp", lambda f: edit_csv(f, _row(9, "04/03/2024,124,210")), CSV,
     "line 9, column 'date': '04/03/2024' is not an ISO 8601 date or date-time"),
    ("a timestamp with a time zone", lambda f: edit_csv(f, _row(9, "2024-03-04T00:00:00+01:00,124,210")), CSV,
     "line 9, column 'date': '2024-03-04T00:00:00+01:00' has a time-zone offset"),
    ("a timestamp repeated", lambda f: edit_csv(f, _row(9, "2024-03-03,124,210")), CSV,
     "line 9, column 'date': '2024-03-03' is not after '2024-03-03' of line 8 (rows in time order, each "
     "timestamp once)"),
    ("rows out of order", lambda f: edit_csv(f, lambda ls: ls.insert(8, ls.pop(9))), CSV,
     "line 10, column 'date': '2024-03-04' is not after '2024-03-05' of line 9"),
    ("a missing row (a gap)", lambda f: edit_csv(f, lambda ls: ls.pop(9)), CSV,
     "line 10, column 'date': '2024-03-06' is off the '1 day' grid from 2024-02-26 00:00:00 (expected "
     "2024-03-05 00:00:00: a missing row, or another frequency)"),
    ("a bad line after a blank one (lines counted as in the file)",
     lambda f: edit_csv(f, lambda ls: (ls.insert(4, ""), ls.__setitem__(9, "2024-03-04,n/a,210"))), CSV,
     "line 10, column 'loaves': 'n/a' is not a number"),
    ("a column not in the CSV", lambda f: edit_task(f, lambda d: d["series"].update(value_column="sold")), TASK,
     "series.value_column: no column 'sold' in bakery_loaves.csv (its header: 'date', 'loaves', "
     "'oven_temperature')"),
    ("the default column names on another header", lambda f: edit_task(f, lambda d: d.__setitem__(
        "series", {"csv": CSV})), TASK, "series.timestamp_column: no column 'timestamp' in bakery_loaves.csv"),
    ("no such CSV file", lambda f: (f / CSV).unlink(), TASK, "series.csv: no such file"),
    ("a forecast start not in the CSV", lambda f: edit_task(f, lambda d: d["series"].update(
        forecast_start="2024-03-18 12:00")), TASK,
     "series.forecast_start: '2024-03-18 12:00' is no timestamp of bakery_loaves.csv (its rows run from "
     "2024-02-26 00:00:00 to 2024-03-31 00:00:00)"),
    ("a horizon longer than the CSV", lambda f: edit_task(f, lambda d: d.__setitem__("prediction_length", 40)),
     TASK, "prediction_length: 40, but bakery_loaves.csv has 35 row(s): a task needs at least 2 history rows"),
    ("a horizon past the CSV's end", lambda f: edit_task(f, lambda d: d["series"].update(
        forecast_start="2024-03-28")), TASK,
     "prediction_length: 7, but bakery_loaves.csv has 4 row(s) from the forecast start 2024-03-28 00:00:00"),
    ("a misspelt reference field", lambda f: edit_task(f, lambda d: d["series"].update(value_col="loaves")), TASK,
     "series.value_col: Extra inputs are not permitted"),
    ("an empty CSV", lambda f: (f / CSV).write_text(""), CSV, "line 1: no header row (the file is empty)"),
]


def bad_message(tmp_path: Path, change) -> tuple[Path, str]:
    """``(folder, the error)`` of the example folder with ``change`` made."""
    folder = copy_example(tmp_path)
    change(folder)
    with pytest.raises(ConfigError) as info:
        caf.read_folder(folder)
    return folder, str(info.value)


@pytest.mark.parametrize("what, change, named, error", BAD, ids=[b[0] for b in BAD])
def test_a_bad_csv_task_is_one_line_naming_the_file_and_the_line_and_column_or_field(tmp_path, what, change,
                                                                                       named, error):
    folder, message = bad_message(tmp_path, change)
    assert "\n" not in message
    assert message.startswith(f"{folder / named}: {error}"), message


def test_every_error_of_the_documented_csv_table_is_one_the_tests_produce(tmp_path):
    """The docs' table of CSV errors quotes messages of the cases above (no drift); ``...`` stands for the
    rest of a message."""
    section = DOC.read_text().split("### A bad CSV", 1)[1].split("\n#", 1)[0]
    quoted = re.findall(r"^\| [^|]+ \| `([^`]+)` \|", section, re.M)
    assert len(quoted) >= 8
    produced = []
    for k, (_, change, _, _) in enumerate(BAD):
        folder, message = bad_message(tmp_path / str(k), change)
        produced.append(message.replace(f"{folder}/", ""))
    assert [q for q in quoted if not any(_matches(q, m) for m in produced)] == []


def _matches(quoted: str, message: str) -> bool:
    """Whether ``message`` is ``quoted``, ``...`` standing for any text."""
    return re.fullmatch(".*".join(re.escape(p) for p in quoted.split("...")), message) is not None


def test_the_csv_example_passes_the_offline_chain_and_comes_out_anonymised(tmp_path):
    """dr-offline-scripts and dr-generate on the shipped example (its spec, as the docs run it): one task
    written; its real names (step 3's anonymisation) and the CSV's file and column names are nowhere in the
    export; the series is the CSV's, moved by the window shift."""
    scripts, gen = tmp_path / "scripts", tmp_path / "gen"
    made = CliRunner().invoke(cli, ["dr-offline-scripts", str(SPEC), "--out", str(scripts)])
    assert made.exit_code == 0, made.output
    run = CliRunner().invoke(cli, ["dr-generate", str(SPEC), "--out", str(gen), "--model-backend", "scripted",
                                   "--script", str(scripts / "generate.yaml")])
    assert run.exit_code == 0, run.output
    assert "wrote 1 task(s)" in run.output and "0 task(s) held back" in run.output
    exported = [gen / "benchmark_manifest.json", *(gen / "tasks").iterdir(), *(gen / "documents").iterdir()]
    text = "\n".join(p.read_text() for p in exported) + "\n".join(p.name for p in exported)
    for secret in ("Tolworth", "Penbury", "bakery_loaves.csv", "oven_temperature", "loaves,"):
        assert secret not in text, secret
    names = json.loads((gen / "generation" / "anonymisation" / "caf_bakery_loaves.json").read_text())["real_names"]
    assert {"Tolworth", "Penbury"} <= set(names)
    task = json.loads((gen / "tasks" / "caf_bakery_loaves.json").read_text())
    assert task["series"]["history_timestamps"][0] == "2026-02-23 00:00:00"   # 2024-02-26 + 104 weeks
    assert task["series"]["future_values"] == [127.0, 132.0, 134.0, 141.0, 176.0, 221.0, 0.0]

"""The CAF input format: the shipped sample reads, bad input is refused naming file and field; the window
shift moves series and context timestamps by one offset and keeps the values."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest

from harness import ConfigError
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation import caf, window

SAMPLE = REPO / "tasks" / "drcik" / "caf-sample"


def sample_raw(name="caf_pump_flow"):
    return json.loads((SAMPLE / f"{name}.json").read_text())


def test_the_sample_has_four_tasks_two_of_one_entity_type_and_dated_events():
    tasks = caf.read_folder(SAMPLE)
    assert [t.task_id for t in tasks] == ["caf_pump_flow", "caf_pump_power", "caf_solar_ghi", "caf_store_sales"]
    assert sum("pumping station" in t.context.background for t in tasks) == 2
    assert all(window.dates_in(t.context.scenario) for t in tasks)
    assert {t.origin for t in tasks} == {"real", "synthetic"}


@pytest.mark.parametrize("change, field", [
    (lambda d: d.pop("target_description"), "target_description: Field required"),
    (lambda d: d["series"]["future_values"].pop(), "series: future_values: 23 values for 24 future_timestamps"),
    (lambda d: d.__setitem__("prediction_length", 12), "prediction_length: 12, but series.future_values has 24"),
    (lambda d: d["series"]["history_values"].pop(), "history_values: 47 values for 48 history_timestamps"),
    (lambda d: d["series"]["history_timestamps"].__setitem__(3, "2023-06-12 3am"), "history_timestamps"),
    (lambda d: d["series"]["history_timestamps"].__setitem__(3, "2023-06-12 04:00:00"), "increase strictly"),
    (lambda d: d.__setitem__("frequency", "1 fortnight-ish"), "frequency"),
    (lambda d: d.__setitem__("origin", "made-up"), "origin"),
    (lambda d: d["context"].__setitem__("background", ""), "context.background"),
    (lambda d: d.__setitem__("colour", "blue"), "colour: Extra inputs are not permitted"),
])
def test_bad_input_names_the_file_and_the_field(tmp_path, change, field):
    data = sample_raw()
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ConfigError) as info:
        caf.read_task(path)
    assert str(info.value).startswith(f"{path}: ") and field in str(info.value)


def test_off_grid_timestamps_and_duplicate_ids_and_non_json_are_refused(tmp_path):
    data = sample_raw()
    data["series"]["future_timestamps"][5] = "2023-06-14 05:30:00"
    (tmp_path / "a.json").write_text(json.dumps(data))
    with pytest.raises(ConfigError, match="off the frequency '1 hour' grid"):
        caf.read_folder(tmp_path)
    (tmp_path / "a.json").write_text(json.dumps(sample_raw()))
    (tmp_path / "b.json").write_text(json.dumps(sample_raw()))
    with pytest.raises(ConfigError, match=r"b.json: task_id: 'caf_pump_flow' is also the id of a.json"):
        caf.read_folder(tmp_path)
    (tmp_path / "b.json").write_text("{oops")
    with pytest.raises(ConfigError, match="b.json: <root>: not JSON"):
        caf.read_folder(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no \\*.json CAF task"):
        caf.read_folder(tmp_path / "empty")


def test_every_bad_file_of_a_folder_is_named_each_on_its_own_line(tmp_path):
    """The module docstring's promise: not only the first bad file (issue: several bad files, one reported)."""
    bad_field = sample_raw()
    bad_field.pop("target_description")
    files = {"a.json": bad_field, "b.json": sample_raw("caf_pump_power"), "c.json": "{oops",
             "d.json": sample_raw("caf_pump_power")}
    for name, data in files.items():
        (tmp_path / name).write_text(data if isinstance(data, str) else json.dumps(data))
    with pytest.raises(caf.CafFolderError) as info:
        caf.read_folder(tmp_path)
    assert [e.file for e in info.value.errors] == [str(tmp_path / n) for n in ("a.json", "c.json", "d.json")]
    assert str(info.value).splitlines() == info.value.lines() == [
        f"{tmp_path / 'a.json'}: target_description: Field required",
        f"{tmp_path / 'c.json'}: <root>: not JSON (Expecting property name enclosed in double quotes at line 1 "
        "column 2)",
        f"{tmp_path / 'd.json'}: task_id: 'caf_pump_power' is also the id of b.json"]
    assert isinstance(info.value, ConfigError)   # callers catching a ConfigError still catch it


def test_the_window_shift_moves_every_timestamp_by_one_offset_and_keeps_the_values():
    task = caf.read_folder(SAMPLE)[0]
    moved = window.shift_task(task, 156)
    offset = timedelta(weeks=156)
    assert moved.series.history_values == task.series.history_values
    assert moved.series.future_values == task.series.future_values
    assert [b - a for a, b in zip(task.series.datetimes(), moved.series.datetimes())] == \
        [offset] * len(task.series.datetimes())
    before, after = window.dates_in(task.context.text()), window.dates_in(moved.context.text())
    assert len(before) == len(after) == 2 and [b - a for a, b in zip(before, after)] == [offset, offset]
    assert "2023-06-14" not in moved.context.text() and "2026-06-10 04:00:00" in moved.context.scenario
    assert moved.series.datetimes()[0].weekday() == task.series.datetimes()[0].weekday()


def test_shift_text_keeps_each_dates_format_and_synthetic_tasks_stay():
    text = "from 2024-03-21 to 2024-03-23T08:30 (2024-03-24 10:00:00)"
    assert window.shift_text(text, timedelta(weeks=1)) == "from 2024-03-28 to 2024-03-30T08:30 (2024-03-31 10:00:00)"
    store = [t for t in caf.read_folder(SAMPLE) if t.origin == "synthetic"][0]
    assert window.shift_task(store, 156) is store
    assert window.dates_in("on 2024-03-21") == [datetime(2024, 3, 21)]

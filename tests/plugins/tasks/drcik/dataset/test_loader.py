"""Dr-CiK task loader: the public sample, the data rules, the flat layout, and errors."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from harness.config import ConfigError
from tsagent_plugins.tasks.drcik.dataset import loader
from tsagent_plugins.tasks.drcik.dataset.frequency import FrequencyError, parse_frequency, period_for, seasonal_period
from tsagent_plugins.tasks.drcik.dataset.loader import (LABELS_HIDDEN, SAMPLE_DIR, SCALE_OK, UNDEFINED_SCALE, load_task_file,
                                        load_tasks)
from tests.support.paths import TESTS

FIX = TESTS / "fixtures" / "drcik"


@pytest.fixture(scope="module")
def sample():
    return {t.benchmark_id: t for t in load_tasks()}


# -- the real public sample ------------------------------------------------------------

@pytest.mark.parametrize("task_id, n_hist, horizon, n_supporting, m, freq", [
    ("task_42", 156, 100, 13, 7, "D"),
    ("task_201", 166, 90, 15, 288, "5min"),
    ("task_163", 48, 24, 12, 24, "h"),
])
def test_sample_shapes(sample, task_id, n_hist, horizon, n_supporting, m, freq):
    task = sample[task_id]
    assert len(task.history) == n_hist
    assert task.horizon == horizon and len(task.future) == horizon
    assert len(task.supporting_ids) == n_supporting
    assert task.seasonal_period == m
    assert task.frequency == freq
    assert isinstance(task.history.index, pd.DatetimeIndex)
    assert task.history.index[-1] < task.future_index[0]
    assert not task.history.isna().any()
    assert task.scale_status == SCALE_OK and task.labels_public


def test_sample_distractors_five_per_subtype(sample):
    for task in sample.values():
        counts = Counter(d.subtype for d in task.documents if d.role == "distractor")
        assert counts == {s: 5 for s in ("noisy", "confounder", "profile", "temporal", "timeseries")}
        assert len(task.distractor_ids) == 25
        assert {d.paper_subtype for d in task.documents if d.subtype} == {
            "irrelevant", "off-variable", "off-entity", "off-window", "counterfactual history"}


def test_sample_values_and_evidence(sample):
    t42 = sample["task_42"]
    assert t42.history.iloc[0] == pytest.approx(45.104)
    assert t42.future.iloc[:3].tolist() == pytest.approx([402.873, 436.584, 467.769])
    assert t42.history.index[0] == pd.Timestamp("2025-10-10")
    assert t42.future_index[0] == pd.Timestamp("2026-03-15")
    assert [e.id for e in t42.evidence] == ["E1", "E2", "E3", "E4", "E5"]
    assert [e.id for e in sample["task_163"].evidence] == ["E1", "E2", "E3"]
    assert t42.metadata["showcase"]["entity"]["name"] == "Nuance Cosmetic Lab"
    assert t42.metadata["origin"] == "synthetic" and t42.metadata["reasoning_hops"] == 4


def test_sample_order_and_notes(sample):
    assert list(sample) == ["task_42", "task_201", "task_163"]  # manifest order
    assert sample["task_201"].data_notes == [
        "frequency '5 minutes' read through the alias table as '5min'",
        "seasonal_period '5T' is a frequency code: m=288 (sub-daily step 5min: 288 steps per day)",
    ]
    assert sample["task_163"].data_notes == ["frequency '1 hour' read through the alias table as 'h'"]


def test_sample_ships_attribution():
    assert "CC BY 4.0" in (SAMPLE_DIR / "SOURCE.md").read_text()
    assert "Creative Commons Attribution 4.0" in (SAMPLE_DIR / "LICENSE.txt").read_text()


def test_documents_read_from_path_when_content_missing(tmp_path):
    raw = json.loads((SAMPLE_DIR / "tasks" / "task_163.json").read_text())
    for d in raw["documents"]:
        d.pop("content")
    (tmp_path / "tasks").mkdir()
    (tmp_path / "documents").mkdir()
    for d in raw["documents"]:
        (tmp_path / d["path"]).write_text((SAMPLE_DIR / d["path"]).read_text())
    (tmp_path / "tasks" / "task_163.json").write_text(json.dumps(raw))
    task = load_task_file(tmp_path / "tasks" / "task_163.json")
    assert task.documents[0].content == (SAMPLE_DIR / raw["documents"][0]["path"]).read_text()


# -- frequency alias table and seasonal periods ------------------------------------

@pytest.mark.parametrize("text, code, m", [
    ("1 day", "D", 7), ("D", "D", 7), ("5 minutes", "5min", 288), ("5T", "5min", 288),
    ("1 hour", "h", 24), ("H", "h", 24), ("1h", "h", 24), ("T", "min", 1440), ("1 minute", "min", 1440),
    ("M", "ME", 12), ("MS", "MS", 12), ("Q", "QE", 4), ("A", "YE", 1), ("Y", "YE", 1), ("W", "W", 52),
    ("7 days", "7D", 52), ("31 days", "31D", 12), ("28 days", "28D", 13), ("90 days", "90D", 4),
    ("365 days", "365D", 1), ("366 days", "366D", 1), ("6 hours", "6h", 4), ("15min", "15min", 96),
    ("B", "B", 5), ("W-SUN", "W-SUN", 52), ("2 months", "2MS", 6),
])
def test_alias_table(text, code, m):
    parsed = parse_frequency(text)
    assert parsed.code == code
    assert period_for(parsed)[0] == m
    assert pd.tseries.frequencies.to_offset(parsed.code) == parsed.offset


def test_pandas_rejects_the_legacy_codes_we_accept():
    for legacy in ("5T", "H", "T", "A"):
        with pytest.raises(ValueError):
            pd.tseries.frequencies.to_offset(legacy)
        assert parse_frequency(legacy).rewritten
    assert not parse_frequency("5min").rewritten


@pytest.mark.parametrize("bad", ["", "every so often", "0 days", "5 fortnights", None])
def test_bad_frequency(bad):
    with pytest.raises(FrequencyError):
        parse_frequency(bad)


def test_seasonal_period_rules():
    hourly = parse_frequency("1 hour")
    assert seasonal_period(12, hourly) == (12, None)          # int used as given
    assert seasonal_period(12.0, hourly) == (12, None)
    m, note = seasonal_period("D", hourly)                    # string: a frequency code
    assert m == 7 and "frequency code" in note
    m, note = seasonal_period("24", hourly)
    assert m == 24 and "digits" in note
    m, note = seasonal_period(None, hourly)                   # missing: from the task frequency
    assert m == 24 and "missing" in note
    for bad in (0, -3, True, [7]):
        with pytest.raises(FrequencyError):
            seasonal_period(bad, hourly)


# -- data rules on hand-made task files ------------------------------------------

def test_clean_file_has_no_notes():
    task = load_task_file(FIX / "clean.json")
    assert task.data_notes == ["frequency '1 hour' read through the alias table as 'h'"]
    assert task.annotations == {"difficulty": {"temporal": "low"}}   # other annotations kept
    assert task.metadata["extra_field"] == {"kept": True}
    assert task.scale_status == SCALE_OK


def test_rule_legacy_codes():
    task = load_task_file(FIX / "legacy_codes.json")
    assert task.frequency == "h" and task.seasonal_period == 288
    assert any("'H' read through the alias table" in n for n in task.data_notes)
    assert any("'5T' is a frequency code: m=288" in n for n in task.data_notes)


def test_rule_seasonal_from_daily_code():
    task = load_task_file(FIX / "seasonal_code_daily.json")
    assert task.seasonal_period == 7 and task.frequency == "D"


def test_rule_seasonal_missing():
    task = load_task_file(FIX / "seasonal_missing.json")
    assert task.seasonal_period == 24
    assert any("seasonal_period missing" in n for n in task.data_notes)


def test_rule_nan_history_interpolated():
    task = load_task_file(FIX / "nan_history.json")
    assert task.history.tolist() == pytest.approx([2.0, 2.0, 3.0, 4.0, 5.0, 5.0])
    assert "4 missing history value(s) interpolated in time (ends filled)" in task.data_notes


def test_rule_nan_interpolation_uses_time():
    raw = json.loads((FIX / "clean.json").read_text())
    raw["series"]["history_timestamps"] = ["2025-01-01 00:00", "2025-01-01 01:00", "2025-01-01 04:00"]
    raw["series"]["history_values"] = [0.0, None, 8.0]
    raw["series"]["future_timestamps"] = ["2025-01-01 05:00", "2025-01-01 06:00", "2025-01-01 07:00"]
    task = loader.parse_task(raw)
    assert task.history.iloc[1] == pytest.approx(2.0)   # 1 h of 4 h between 0 and 8


def test_rule_boundary_duplicate_dropped():
    task = load_task_file(FIX / "boundary_duplicate.json")
    assert len(task.history) == 5
    assert task.history.index[-1] == pd.Timestamp("2025-01-01 05:00")
    assert 99.0 not in task.history.tolist()
    assert any("equals the first future timestamp: history point dropped" in n for n in task.data_notes)


def test_rule_zero_future_undefined_scale():
    task = load_task_file(FIX / "zero_future.json")
    assert task.scale_status == UNDEFINED_SCALE
    assert any("undefined_scale" in n for n in task.data_notes)


def test_rule_hidden_future():
    task = load_task_file(FIX / "hidden_future.json")
    assert task.future is None and not task.labels_public
    assert task.scale_status == LABELS_HIDDEN and task.horizon == 3
    assert task.evidence == []
    assert any("labels hidden" in n for n in task.data_notes)


@pytest.mark.parametrize("name, field", [
    ("bad_role", "documents[0].role"),
    ("bad_frequency", "task_metadata.frequency"),
    ("bad_value", "series.history_values[1]"),
    ("overlap", "series.future_timestamps"),
    ("length_mismatch", "task_metadata.prediction_length"),
])
def test_bad_input_names_file_and_field(name, field):
    with pytest.raises(ConfigError) as err:
        load_task_file(FIX / f"{name}.json")
    assert f"{name}.json" in str(err.value) and field in str(err.value)


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_task_file(tmp_path / "nope.json")
    (tmp_path / "broken.json").write_text("{not json")
    with pytest.raises(ConfigError, match="invalid JSON"):
        load_task_file(tmp_path / "broken.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no task files"):
        load_tasks(tmp_path / "empty")


# -- flat Hugging Face layout (hand-made, unverified fixture) -----------------------

def _check_flat(tasks):
    by_id = {t.benchmark_id: t for t in tasks}
    t1, t2 = by_id["task_flat_1"], by_id["task_flat_2"]
    assert t1.history.tolist() == pytest.approx([10.0, 11.0, 12.0, 13.0])
    assert t1.seasonal_period == 24 and t1.future.tolist() == [14.0, 15.0]
    assert [d.document_id for d in t1.documents] == ["doc_a", "doc_b", "doc_c"]   # by rank
    assert [(d.role, d.subtype) for d in t1.documents] == [
        ("supporting", None), ("distractor", "profile"), ("distractor", "noisy")]
    assert t1.documents[0].content == "Memo: the mill adds a shift each hour."
    assert t1.evidence[0].text == "Power draw climbs one unit an hour."
    assert t1.metadata["showcase"]["profile"]["details"] == {"roof": "steel"}
    assert t2.scale_status == LABELS_HIDDEN and len(t2.history) == 2
    assert any("history point dropped" in n for n in t2.data_notes)


def test_flat_layout_jsonl():
    _check_flat(load_tasks(FIX / "flat"))


def test_flat_layout_parquet_folders(tmp_path):
    for name in ("tasks", "documents", "task_documents"):
        frame = pd.read_json(FIX / "flat" / f"{name}.jsonl", lines=True, dtype=False)
        if name == "tasks":
            frame["gt_evidence"] = frame["gt_evidence"].map(lambda v: v if isinstance(v, str) else json.dumps(v))
            frame["profile_details"] = frame["profile_details"].map(
                lambda v: v if isinstance(v, str) else json.dumps(v))
            frame["seasonal_period"] = frame["seasonal_period"].astype(str)   # mixed types stored as text
        (tmp_path / "data" / name).mkdir(parents=True)
        frame.to_parquet(tmp_path / "data" / name / "train-00000-of-00001.parquet")
    _check_flat(load_tasks(tmp_path))


def test_flat_layout_unknown_document(tmp_path):
    for name in ("tasks", "documents", "task_documents"):
        (tmp_path / f"{name}.jsonl").write_text((FIX / "flat" / f"{name}.jsonl").read_text())
    lines = (tmp_path / "documents.jsonl").read_text().splitlines()
    (tmp_path / "documents.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(ConfigError, match="unknown document 'doc_a'"):
        load_tasks(tmp_path)


def test_sample_loads_as_same_tasks_from_flat(tmp_path, sample):
    """The sample converted to flat tables loads to the same series, documents and notes."""
    rows, docs, links = [], [], []
    for path in sorted((SAMPLE_DIR / "tasks").glob("*.json")):
        raw = json.loads(path.read_text())
        meta, series = raw["task_metadata"], raw["series"]
        rows.append({"benchmark_id": raw["benchmark_id"], "labels_public": raw["labels_public"],
                     **meta, **series, "document_ids": [d["document_id"] for d in raw["documents"]],
                     "gt_evidence": raw["annotations"]["gt_evidence"]})
        for rank, d in enumerate(raw["documents"]):
            docs.append({"document_id": d["document_id"], "text": d["content"], "raw_document_path": d["path"]})
            links.append({"benchmark_id": raw["benchmark_id"], "document_id": d["document_id"], "rank": rank,
                          "role": d["role"], "subtype": d["subtype"]})
    for name, data in (("tasks", rows), ("documents", docs), ("task_documents", links)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in data))
    for task in load_tasks(tmp_path):
        ref = sample[task.benchmark_id]
        pd.testing.assert_series_equal(task.history, ref.history)
        assert task.future_index.equals(ref.future_index)
        np.testing.assert_array_equal(task.future.to_numpy(), ref.future.to_numpy())
        assert [(d.document_id, d.role, d.subtype) for d in task.documents] == [
            (d.document_id, d.role, d.subtype) for d in ref.documents]
        assert task.seasonal_period == ref.seasonal_period and task.data_notes == ref.data_notes

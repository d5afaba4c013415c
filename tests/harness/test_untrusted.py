"""Every reader of agent-controlled output turns any input into a value or a reason, never an exception.

Property tests (hypothesis) feed arbitrary bytes and arbitrary JSON structures
to each reader; the explicit cases are those random generation rarely
reaches (issue list: 100,000-deep nesting, a 1 GB file, a million keys, NaN
and Infinity, duplicate keys, a byte-order mark, lone surrogates).  The
leniency table of :mod:`harness.untrusted` has one test per row here.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import untrusted
from harness.contracts import CallResult
from harness.proxy_records import last_request_seq, load_log, read_log
from tsagent_plugins.agents.terminal.base import json_lines
from tsagent_plugins.agents.terminal.proxylog import read_calls
from tsagent_plugins.forecasters._common import check_samples
from tsagent_plugins.tasks.tracebench import scoring

LABELS = ["mass", "gravity acceleration", "no parameter change"]
FILES = ["aaaaaaaaaaaa.parquet", "bbbbbbbbbbbb.parquet"]
KEY = {"submission": "direct", "labels": LABELS, "support": {}, "heldout": {},
       "test": {f: {"sample_id": f"t{i}", "label": "mass", "class_label": "mass"} for i, f in enumerate(FILES)}}
PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=8), children, max_size=6),
    max_leaves=40,
)


def score_bytes(tmp_path: Path, data: bytes):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "results.json").write_bytes(data)
    return scoring.score_episode(ws, tmp_path, KEY, lambda *a: [])


def assert_scored(score) -> None:
    assert score.metrics["n_test"] == len(FILES)
    for d in score.details:
        assert (d["reason"] is not None) or isinstance(d["predicted"], list)
        json.dumps(d)  # every detail can be written to score.json


# -- properties: arbitrary bytes / arbitrary JSON -> a value or a reason -------------------------

@PROPS
@given(data=st.binary(max_size=2000))
def test_parse_json_never_raises_on_bytes(data):
    r = untrusted.parse_json(data)
    assert (r.reason is None) != (r.value is None) or r.value is None


@PROPS
@given(value=json_values)
def test_parse_json_never_raises_on_json_structures(value):
    r = untrusted.parse_json(json.dumps(value))
    if r.ok:
        assert untrusted.check_value(r.value) is None
    else:
        assert isinstance(r.reason, str) and r.reason


@PROPS
@given(data=st.binary(max_size=2000))
def test_results_json_reader_scores_arbitrary_bytes(tmp_path, data):
    assert_scored(score_bytes(tmp_path, data))


@PROPS
@given(value=json_values)
def test_results_json_reader_scores_arbitrary_json(tmp_path, value):
    doc = {FILES[0]: value, FILES[1]: [value]}
    assert_scored(score_bytes(tmp_path, json.dumps(doc).encode()))


@PROPS
@given(values=st.lists(json_values, min_size=2, max_size=2))
def test_rule_return_values_are_scored_whatever_they_are(values):
    results = [CallResult(value=v) for v in values]
    truths = KEY["test"]
    samples = scoring._score_calls("test", FILES, truths, results, None, LABELS)
    assert len(samples) == 2
    for s in samples:
        assert s.reason is not None or isinstance(s.predicted, list)


@PROPS
@given(data=st.binary(max_size=3000))
def test_native_log_lines_never_raise(data):
    out = json_lines(data.decode("utf-8", "replace"))
    assert all(isinstance(x, dict) for x in out)


@PROPS
@given(data=st.binary(max_size=3000))
def test_proxy_log_reader_raises_only_valueerror(tmp_path, data):
    path = tmp_path / "proxy.jsonl"
    path.write_bytes(data)
    try:
        calls = read_calls(path)
    except ValueError as exc:
        assert str(exc)
    else:
        assert isinstance(calls, list)


@PROPS
@given(records=st.lists(json_values, max_size=6))
def test_proxy_log_reader_survives_odd_records(tmp_path, records):
    path = tmp_path / "proxy.jsonl"
    lines = [json.dumps({"seq": i % 2, "type": ("request", "response")[i % 2], "ts": r, "usage": r,
                         "cost_usd": r, "body": r}) for i, r in enumerate(records)]
    path.write_text("\n".join(lines))
    try:
        calls = read_calls(path)
    except ValueError as exc:  # NaN/Infinity in a line: a reason, never anything else
        assert "not valid JSON" in str(exc)
    else:
        assert all(isinstance(c.cost_usd, float) and math.isfinite(c.cost_usd) for c in calls)


@PROPS
@given(value=json_values)
def test_forecast_sample_check_never_raises(value):
    arr, reason = check_samples(value, 3, 2)
    assert (arr is None) != (reason is None)
    if arr is not None:
        assert arr.shape[1] == 2 and np.isfinite(arr).all()


# -- explicit hostile cases ---------------------------------------------------------------------

def test_nesting_100000_deep_is_a_reason(tmp_path):
    r = untrusted.parse_json("[" * 100_000 + "]" * 100_000)
    assert r.reason is not None and "deep" in r.reason
    score = score_bytes(tmp_path, ('{"%s": ' % FILES[0] + "[" * 100_000 + "]" * 100_000 + "}").encode())
    assert_scored(score)
    assert "nested" in score.details[0]["reason"]


def test_a_1_gb_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "ws" / "results.json"
    path.parent.mkdir()
    with open(path, "wb") as fh:
        fh.truncate(1 << 30)  # sparse: costs no disk
    score = scoring.score_episode(path.parent, tmp_path, KEY, lambda *a: [])
    assert "larger than the 10485760-byte bound" in score.details[0]["reason"]
    assert untrusted.read_text(path, 1024).reason.startswith("results.json is larger than")


def test_a_million_keys_is_a_reason(tmp_path):
    distinct = "{" + ",".join(f'"{i}":1' for i in range(1_000_000)) + "}"
    r = untrusted.parse_json(distinct, untrusted.Bounds(max_bytes=20 * 2**20))
    assert r.reason == "JSON has more than 200000 JSON values"
    repeated = "{" + ",".join(['"k":1'] * 1_000_000) + "}"  # 6 MB: within results.json's size bound
    score = score_bytes(tmp_path, repeated.encode())
    assert "more than 200000 JSON values" in score.details[0]["reason"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_a_reason(tmp_path, constant):
    r = untrusted.parse_json(f'{{"a": {constant}}}')
    assert r.reason == f"JSON is not valid JSON: {constant} is not allowed in JSON"
    assert "not allowed" in score_bytes(tmp_path, f'{{"{FILES[0]}": {constant}}}'.encode()).details[0]["reason"]
    assert "NaN or Infinity" in untrusted.check_value([float(constant.lower().replace("infinity", "inf"))])


def test_duplicate_keys_are_kept_in_order_with_pairs_and_last_wins_otherwise():
    assert untrusted.parse_json('{"a": 1, "a": 2}', pairs=True).value == [("a", 1), ("a", 2)]
    assert untrusted.parse_json('{"a": 1, "a": 2}').value == {"a": 2}


def test_duplicate_results_keys_that_disagree_are_a_reason(tmp_path):
    score = score_bytes(tmp_path, f'{{"{FILES[0]}": ["mass"], "{FILES[0]}": ["gravity acceleration"]}}'.encode())
    assert "disagree" in score.details[0]["reason"]


def test_a_byte_order_mark_is_accepted(tmp_path):
    assert untrusted.parse_json(b"\xef\xbb\xbf[1]").value == [1]
    score = score_bytes(tmp_path, b"\xef\xbb\xbf" + json.dumps({f: ["mass"] for f in FILES}).encode())
    assert score.metrics["accuracy"] == 1.0


def test_lone_surrogates_are_a_reason(tmp_path):
    assert "lone surrogate" in untrusted.parse_json('["\\ud800"]').reason
    score = score_bytes(tmp_path, ('{"%s": ["\\udfff"]}' % FILES[0]).encode())
    assert "lone surrogate" in score.details[0]["reason"]
    assert "lone surrogate" in untrusted.check_value({"k": "\udc80"})


def test_invalid_utf8_in_json_is_a_reason_and_in_text_is_replaced(tmp_path):
    assert untrusted.parse_json(b'["\xff"]').reason.startswith("JSON is not UTF-8 text")
    (tmp_path / "log").write_bytes(b"step \xff one\n")
    assert untrusted.read_text(tmp_path / "log", 100).value == "step \ufffd one\n"


def test_links_fifos_and_devices_are_not_read(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    assert "not a regular file" in untrusted.read_bytes(tmp_path / "fifo", 10).reason  # and it did not block
    (tmp_path / "link").symlink_to("/etc/passwd")
    assert "symbolic link" in untrusted.read_bytes(tmp_path / "link", 10**6).reason
    assert "not found" in untrusted.read_bytes(tmp_path / "absent", 10).reason


def test_depth_and_count_bounds_are_named_in_the_reason():
    b = untrusted.Bounds(max_depth=3, max_items=5)
    assert untrusted.parse_json("[[[[1]]]]", b).reason == "JSON is nested deeper than 3 levels"
    assert untrusted.parse_json("[1,2,3,4,5,6]", b).reason == "JSON has more than 5 JSON values"
    assert untrusted.parse_json("[[1]]", b).value == [[1]]


def test_foreign_objects_are_never_touched():
    class Hostile:
        def __eq__(self, other):
            raise RuntimeError("eq")

        def __str__(self):
            raise SystemExit(1)

        __hash__ = object.__hash__

    assert untrusted.check_value([Hostile()]) == "value holds a Hostile, which is not a JSON value"
    assert untrusted.safe_str(Hostile()) == "<Hostile whose str() failed: SystemExit>"


def test_forecast_samples_from_a_generator_or_hostile_object_are_a_reason():
    assert check_samples((x for x in [[1.0]]), 1, 1)[1].startswith("samples must be an array")
    assert "not a numeric array" in check_samples([[1.0], [1.0, 2.0]], 2, 1)[1]
    assert check_samples([[float("nan")]], 1, 1)[1] == "samples contain NaN or infinite values"
    assert check_samples(np.ones((2, 3)), 2, 3)[1] is None


def test_proxy_log_with_a_non_object_line_names_the_line(tmp_path):
    (tmp_path / "p.jsonl").write_bytes(b'{"seq": 1}\n[1]\n')
    with pytest.raises(ValueError, match="line 2: not a JSON object"):
        read_log(tmp_path / "p.jsonl")


@PROPS
@given(records=st.lists(json_values, max_size=8), tail=st.binary(max_size=40))
def test_last_request_seq_agrees_with_the_full_reader(tmp_path, records, tail):
    path = tmp_path / "proxy.jsonl"
    lines = [json.dumps({"type": ("request", "response")[i % 3 == 2], "seq": i if i % 4 else r, "body": r})
             for i, r in enumerate(records)]
    path.write_bytes("\n".join(lines).encode() + b"\n" + tail)
    seqs = [r["seq"] for r in load_log(path, lenient=True).requests if type(r.get("seq")) is int]
    assert last_request_seq(path) == (seqs[-1] if seqs else None)


def test_last_request_seq_reads_a_long_log_from_its_end(tmp_path):
    path = tmp_path / "proxy.jsonl"
    big = "x\u0085y" * 1_000_000  # lines of 3 MB cross the reader's 1 MB blocks; U+0085 splits no record
    records = [{"type": "request", "seq": 1, "body": big}, {"type": "response", "seq": 1, "body": big},
               {"type": "request", "seq": 2, "body": {"text": big}}, {"type": "response", "seq": 2, "body": big}]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
                    + '{"type": "request", "seq": 3, "bo', encoding="utf-8")  # a cut last line is skipped
    assert last_request_seq(path) == 2
    log = load_log(path, lenient=True)
    assert [r["seq"] for r in log.requests] == [1, 2] and log.broken_lines == 0 and log.cut
    assert read_log(path) == log.records  # a record cut short is no error, even for a strict read
    assert log.requests[1]["body"]["text"] == big
    assert last_request_seq(tmp_path / "missing.jsonl") is None
    (tmp_path / "link.jsonl").symlink_to(path)
    assert last_request_seq(tmp_path / "link.jsonl") is None  # links are not followed, as by every bounded reader

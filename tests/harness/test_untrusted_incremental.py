"""Validation of a series of records where each repeats the previous one (a proxy log's requests): the same
reasons as a full check, with the work (values and characters walked) growing with the new bytes only."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness import untrusted
from harness.proxy_records import load_log

BOUNDS = untrusted.Bounds(max_depth=8, max_items=60, max_string=20)


def _request(n: int, extra=None) -> dict:
    messages = [{"role": "user" if i % 2 else "assistant", "content": f"m{i}"} for i in range(n)]
    if extra is not None:
        messages.append(extra)
    return {"type": "request", "seq": n, "body": {"model": "m", "messages": messages}}


@pytest.mark.parametrize("extra, reason", [
    (1e999, "holds NaN or Infinity"),
    ("\ud800", "lone surrogate"),
    ("x" * 21, "longer than 20 characters"),
    ([[[[[[["deep"]]]]]]], "nested deeper than 8 levels"),
    ({1: "x"}, "object key that is not a string"),
    ({1, 2}, "holds a set"),
])
def test_a_bad_value_in_the_new_part_gives_the_full_check_reason(extra, reason):
    checker = untrusted.IncrementalCheck(BOUNDS)
    for n in range(1, 4):
        assert checker.check(_request(n), "record") is None
    bad = _request(4, extra)
    expected = untrusted.check_value(bad, BOUNDS, "record")
    assert reason in expected
    assert checker.check(bad, "record") == expected


def test_skipped_equal_parts_still_count_toward_the_item_bound():
    """The 60-value bound is hit by the whole record, though only its new message is walked."""
    checker = untrusted.IncrementalCheck(BOUNDS)
    sizes = []
    for n in range(1, 30):
        record = _request(n)
        full = untrusted._walk(record, BOUNDS, "r")
        sizes.append(full[1])
        assert checker.check(record, "r") == full[0]
    assert min(sizes) < 60 < max(sizes)  # the bound was reached in the series
    over = next(i for i, s in enumerate(sizes) if s > 60) + 1
    assert "more than 60 JSON values" in untrusted.check_value(_request(over), BOUNDS, "r")


def test_a_record_that_failed_is_not_the_reference_for_the_next():
    checker = untrusted.IncrementalCheck(BOUNDS)
    assert checker.check(_request(2), "r") is None
    bad = _request(3, "\ud800")
    assert checker.check(bad, "r") is not None
    assert "lone surrogate" in checker.check({**bad, "seq": 4}, "r")


def test_records_are_compared_with_the_previous_one_of_their_key():
    checker = untrusted.IncrementalCheck()
    for n in range(1, 50):
        assert checker.check(_request(n), "r", key="request") is None
        assert checker.check({"type": "response", "seq": n, "usage": {"prompt_tokens": n}}, "r", key="response") is None
    walked = checker.values_checked
    checker.check(_request(50), "r", key="request")
    assert checker.values_checked - walked < 20  # the new message and the changed members, not 100 messages


@settings(max_examples=100, deadline=None)
@given(st.lists(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=25),
                             lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3),
                                                                                         inner, max_size=4),
                             max_leaves=20), min_size=1, max_size=6))
def test_same_verdict_as_a_full_check_for_any_series(values):
    """Each value of the series, appended to a growing conversation: the verdict is check_value's (the reason
    too, up to which of several problems is named first: the two walks visit values in different orders)."""
    checker = untrusted.IncrementalCheck(BOUNDS)
    messages: list = []
    for value in values:
        messages = messages + [value]
        record = {"type": "request", "body": {"messages": messages}}
        assert (checker.check(record, "r") is None) == (untrusted.check_value(record, BOUNDS, "r") is None)


def _conversation_log(path, steps: int) -> None:
    """``steps`` requests, each carrying the whole conversation so far (two messages a step), and responses."""
    messages: list = []
    with path.open("w") as fh:
        for i in range(steps):
            fh.write(json.dumps({"type": "request", "seq": i, "body": {"model": "m", "messages": messages}}) + "\n")
            fh.write(json.dumps({"type": "response", "seq": i, "usage": {"prompt_tokens": i}}) + "\n")
            messages = messages + [{"role": "assistant", "content": [{"type": "tool_use", "id": f"t{i}",
                                                                      "input": {"command": f"echo {i}"}}]},
                                   {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                                 "content": f"output {i} " * 5}]}]


def test_reading_a_proxy_log_validates_work_linear_in_its_steps(tmp_path):
    """Twice the steps (four times the bytes): at most 2.2 times the values and characters validated."""
    work = {}
    for steps in (150, 300):
        path = tmp_path / f"{steps}.jsonl"
        _conversation_log(path, steps)
        log = load_log(path)
        assert len(log.requests) == steps and log.broken_lines == 0
        work[steps] = (log.values_checked, log.chars_checked, path.stat().st_size)
    assert work[300][2] > 3.8 * work[150][2]  # the log itself grows with the square
    assert work[300][0] <= 2.2 * work[150][0]
    assert work[300][1] <= 2.2 * work[150][1]


def test_validation_work_for_2000_and_4000_steps():
    """The issue's measure: 4,000 steps cost at most 2.2 times the validation work of 2,000."""
    work = {}
    for steps in (2000, 4000):
        checker = untrusted.IncrementalCheck()
        messages: list = []
        for i in range(steps):
            assert checker.check({"type": "request", "seq": i, "body": {"messages": messages}}, "r", "request") is None
            messages = messages + [{"role": "assistant", "content": f"step {i}"},
                                   {"role": "user", "content": [{"type": "tool_result", "content": f"out {i}"}]}]
        work[steps] = (checker.values_checked, checker.chars_checked)
    assert work[4000][0] <= 2.2 * work[2000][0]
    assert work[4000][1] <= 2.2 * work[2000][1]

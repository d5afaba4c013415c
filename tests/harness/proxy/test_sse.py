"""The incremental SSE parser: split chunks, line endings, comments, multi-line data."""

import pytest

from harness.proxy import SSEEvent, SSEParser, encode_event, parse_sse

STREAM = (b"event: message_start\ndata: {\"a\": 1}\n\n"
          b": keep-alive comment\n\n"
          b"data: line one\ndata: line two\n\n"
          b"id: 7\nevent: x\ndata:no-space\n\n"
          b"data: [DONE]\n\n")
EXPECTED = [SSEEvent("message_start", '{"a": 1}'), SSEEvent(None, "line one\nline two"),
            SSEEvent("x", "no-space", "7"), SSEEvent(None, "[DONE]", "7")]  # the last event id persists


def test_whole_stream():
    assert parse_sse(STREAM) == EXPECTED


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_any_chunking_gives_the_same_events(size):
    parser = SSEParser()
    events = []
    for i in range(0, len(STREAM), size):
        events += parser.feed(STREAM[i:i + size])
    events += parser.close()
    assert events == EXPECTED


def test_crlf_split_between_chunks_is_one_line_end():
    parser = SSEParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\n\r") == []
    assert parser.feed(b"\ndata: b\r\n\r\n") == [SSEEvent(None, "a"), SSEEvent(None, "b")]


def test_bare_cr_line_endings():
    assert parse_sse(b"event: e\rdata: x\r\r") == [SSEEvent("e", "x")]


def test_utf8_sequence_split_across_chunks():
    raw = "data: température ✓\n\n".encode()
    cut = raw.index("✓".encode()) + 1  # inside the 3-byte sequence
    parser = SSEParser()
    events = parser.feed(raw[:cut]) + parser.feed(raw[cut:])
    assert events == [SSEEvent(None, "température ✓")]


def test_event_is_dispatched_only_at_blank_line_or_close():
    parser = SSEParser()
    assert parser.feed(b"data: partial") == []
    assert parser.feed(b"\n") == []
    assert parser.close() == [SSEEvent(None, "partial")]


def test_event_without_data_is_not_dispatched():
    assert parse_sse(b"event: lonely\n\ndata: x\n\n") == [SSEEvent(None, "x")]


def test_json_accessor():
    assert SSEEvent(None, '{"k": [1, 2]}').json() == {"k": [1, 2]}
    assert SSEEvent(None, "[DONE]").json() is None


def test_encode_round_trip():
    raw = encode_event({"type": "ping", "text": "a\nb"}, "ping") + encode_event("multi\nline")
    assert raw.startswith(b"event: ping\ndata: {")
    events = parse_sse(raw)
    assert events[0].event == "ping" and events[0].json() == {"type": "ping", "text": "a\nb"}
    assert events[1] == SSEEvent(None, "multi\nline")

"""The proxy log's records read from a compressed log (``proxy.jsonl.zst``) are those of the same log written
plain; a cut last record, a log past the bound and an old plain log read as the reader promises."""

from __future__ import annotations

import json

import pytest

from harness import proxy_records
from harness.logfile import LogWriter
from harness.proxy_records import first_record, last_request_seq, load_log, proxy_log, read_log
from harness.untrusted import Bounds


def records(n: int) -> list[dict]:
    """A conversation's requests (each repeating the conversation so far) and their responses."""
    out, messages = [], []
    for seq in range(n):
        messages = messages + [{"role": "user", "content": f"tool output {seq} " * 40}]
        out.append({"type": "request", "seq": seq, "ts": 100.0 + seq, "method": "POST", "path": "/v1/messages",
                    "wire": "anthropic", "body": {"model": "m", "messages": messages}, "body_encoding": "json"})
        out.append({"type": "response", "seq": seq, "ts": 100.5 + seq, "status": 200, "cost_usd": 0.01,
                    "usage": {"prompt_tokens": 100 * seq, "cached_tokens": 0, "completion_tokens": 5},
                    "body": {"content": [{"type": "text", "text": "a request for more"}]}})
    return out


def lines(recs: list[dict]) -> list[bytes]:
    return [(json.dumps(r, ensure_ascii=False) + "\n").encode() for r in recs]


def write(path, data: list[bytes], close: bool = True):
    writer = LogWriter(path)
    for line in data:
        writer.write(line)
    if close:
        writer.close()
    return path


@pytest.fixture
def both(tmp_path):
    data = lines(records(40)) + [b"{broken\n"] + lines(records(2))
    (tmp_path / "plain").mkdir()
    (tmp_path / "zst").mkdir()
    return (write(tmp_path / "plain" / "proxy.jsonl", data), write(tmp_path / "zst" / "proxy.jsonl.zst", data))


def test_a_compressed_log_reads_as_the_same_log_written_plain(both):
    plain, compressed = both
    assert proxy_log(plain.parent) == plain and proxy_log(compressed.parent) == compressed
    a, b = load_log(plain, lenient=True), load_log(compressed, lenient=True)
    assert a == b and len(a.requests) == 42 and a.broken_lines == 1 and a.unread is None and not a.cut
    assert (a.values_checked, a.chars_checked) == (b.values_checked, b.chars_checked)
    assert last_request_seq(plain) == last_request_seq(compressed) == 1
    assert first_record(plain) == first_record(compressed) == records(1)[0]
    for path in both:  # a strict read names the broken line in either form
        with pytest.raises(ValueError, match=rf"{path}: line 81 is not valid JSON"):
            read_log(path)


def test_a_log_cut_mid_record_reads_to_its_last_complete_record(tmp_path):
    data = lines(records(6))
    path = write(tmp_path / "proxy.jsonl.zst", data, close=False)
    whole = path.read_bytes()
    writer = LogWriter(tmp_path / "sizes.zst")
    sizes = []
    for line in data:
        writer.write(line)
        sizes.append((tmp_path / "sizes.zst").stat().st_size)
    for end in (sizes[9] + 1, (sizes[9] + sizes[10]) // 2, sizes[10] - 1):
        path.write_bytes(whole[:end])
        log = read_log(path)  # strict: a record cut short is no error
        assert log == records(6)[:10]
        assert load_log(path, lenient=True).cut
        assert last_request_seq(path) == 4


def test_a_log_past_the_bound_keeps_its_records_up_to_it_and_says_so(tmp_path, monkeypatch):
    data = lines(records(30))
    path = write(tmp_path / "proxy.jsonl.zst", data)
    bound = sum(len(line) for line in data[:21]) + 10
    monkeypatch.setattr(proxy_records, "LOG_BOUNDS", Bounds(max_bytes=bound, max_depth=512, max_items=10_000_000,
                                                            max_string=256 * 2**20))
    log = load_log(path, lenient=True)
    assert log.records == records(30)[:21]  # never silently empty
    assert log.unread == f"{path} is larger than the {bound}-byte bound when decompressed; the rest was not read"
    with pytest.raises(ValueError, match="byte bound when decompressed"):
        load_log(path)


def test_last_request_seq_of_a_compressed_log_looks_past_many_requests_in_its_text(tmp_path, monkeypatch):
    """Responses that spell "request" after the last request: the few lines kept are not requests, and the full
    read answers."""
    recs = records(3) + [{"type": "response", "seq": 9, "body": '"request" ' * 50} for _ in range(20)]
    path = write(tmp_path / "proxy.jsonl.zst", lines(recs))
    monkeypatch.setattr(proxy_records, "_RECENT_BYTES", 2000)
    assert last_request_seq(path) == 2
    assert last_request_seq(write(tmp_path / "none.zst", lines(recs[-5:]))) is None
    assert last_request_seq(tmp_path / "missing.zst") is None


def test_a_resumed_writer_s_second_frame_is_read_on(tmp_path):
    path = write(tmp_path / "proxy.jsonl.zst", lines(records(2)))
    write(path, lines(records(3)[4:]))
    assert read_log(path) == records(2) + records(3)[4:]
    assert last_request_seq(path) == 2

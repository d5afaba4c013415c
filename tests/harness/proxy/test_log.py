"""The proxy's log writer: compressed by its name, flushed per record, and never past the reader's bound
(a record that would pass it is stored with its body truncated, or left out)."""

from __future__ import annotations

import hashlib
import json

from harness.proxy.log import TRUNCATED_PREFIX, ProxyLogWriter
from harness.proxy_records import load_log, read_log


def test_the_log_is_compressed_by_its_name_and_each_record_reaches_the_file_at_once(tmp_path):
    writer = ProxyLogWriter(tmp_path / "ep" / "proxy.jsonl.zst")
    record = {"type": "request", "seq": 1, "body": {"messages": ["x" * 10_000]}, "body_encoding": "json"}
    writer.write(record)
    assert (tmp_path / "ep" / "proxy.jsonl.zst").read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    assert (tmp_path / "ep" / "proxy.jsonl.zst").stat().st_size < 1000
    assert read_log(tmp_path / "ep" / "proxy.jsonl.zst") == [record]  # before close: flushed
    writer.close()
    writer.close()
    writer.write({"type": "response", "seq": 1})  # after close: nothing, no error
    assert load_log(tmp_path / "ep" / "proxy.jsonl.zst").cut is False
    plain = ProxyLogWriter(tmp_path / "proxy.jsonl")
    plain.write(record)
    plain.close()
    assert json.loads((tmp_path / "proxy.jsonl").read_text()) == record


def test_a_log_stays_within_the_readers_bound(tmp_path):
    """Records past ``max_bytes`` (uncompressed) are stored with their body truncated, then left out; the log
    reads back whole and within the bound."""
    path = tmp_path / "proxy.jsonl.zst"
    writer = ProxyLogWriter(path, max_bytes=60_000)
    body = {"messages": [{"role": "user", "content": "y" * 20_000}]}
    for seq in range(40):
        writer.write({"type": "request", "seq": seq, "body": body, "body_encoding": "json"})
    writer.close()
    records = read_log(path)
    raw = json.dumps(body, ensure_ascii=False).encode()
    truncated = [r.get("truncated", False) for r in records]
    assert truncated[:3] == [False, False, True] and all(truncated[2:]) and [r["seq"] for r in records] == \
        list(range(len(records)))
    assert records[2]["size"] == len(raw) and records[2]["sha256"] == hashlib.sha256(raw).hexdigest()
    assert len(records[2]["body"]) == TRUNCATED_PREFIX
    assert writer.left_out == 40 - len(records) > 0 and sum(len(json.dumps(r, ensure_ascii=False)) + 1 for r in records) <= 60_000

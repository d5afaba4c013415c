"""The raw-call view of a proxy log: a body the proxy stored truncated is shown as truncated (size, sha256)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from harness.proxy.log import TRUNCATED_PREFIX, truncated_body
from harness.view.calls import call_detail, call_index


def test_a_truncated_body_is_shown_as_truncated_with_its_size_and_hash(tmp_path):
    raw = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * 50_000 + b'"}]}'
    request = {"type": "request", "seq": 1, "ts": 1.0, "path": "/v1/chat/completions", **truncated_body(raw)}
    response = {"type": "response", "seq": 1, "ts": 2.0, "status": 200, "body": {"choices": []},
                "usage": {"prompt_tokens": 7, "completion_tokens": 1}}
    (tmp_path / "proxy.jsonl").write_text("\n".join(json.dumps(r) for r in (request, response)) + "\n")
    [call] = call_index(tmp_path)
    detail = call_detail(call)
    first = detail["request_body"].splitlines()[0]
    assert first == (f"(truncated in the log: {len(raw):,} bytes in all, sha256 {hashlib.sha256(raw).hexdigest()}; "
                     f"the first {TRUNCATED_PREFIX:,} characters follow)")
    assert detail["request_body"].endswith("x" * 10) and len(detail["request_body"]) < len(first) + 2 + TRUNCATED_PREFIX
    assert detail["request_text"] == ""  # a prefix is never decoded as messages
    assert "truncated" not in detail["response_body"] and detail["usage"]["prompt_tokens"] == 7


def test_a_compressed_log_shows_the_same_calls_as_the_plain_one_and_is_found_first(tmp_path):
    """Offsets into the decompressed stream: the index and each call's detail are those of the plain log; an
    episode's own log and its sessions' logs are found under either name."""
    from harness.logfile import LogWriter

    records = []
    for seq in range(1, 6):
        records += [{"type": "request", "seq": seq, "ts": float(seq), "path": "/v1/messages",
                     "headers": {"user-agent": "cli", "x-api-key": "sk-secret"},
                     "body": {"model": "m", "messages": [{"role": "user", "content": f"question {seq} " * 500}]}},
                    {"type": "response", "seq": seq, "ts": seq + 0.5, "status": 200, "cost_usd": 0.5,
                     "body": {"type": "message", "role": "assistant", "content": [{"type": "text", "text": "ok"}]},
                     "usage": {"prompt_tokens": 10 * seq, "completion_tokens": 1}}]
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    plain, compressed = tmp_path / "plain", tmp_path / "compressed"
    (plain / "proxy" / "s1").mkdir(parents=True)
    (plain / "proxy.jsonl").write_bytes(data)
    (plain / "proxy" / "s1" / "proxy.jsonl").write_bytes(data)
    for log in (compressed / "proxy.jsonl.zst", compressed / "proxy" / "s1" / "proxy.jsonl.zst"):
        writer = LogWriter(log)
        writer.write(data)
        writer.close()
    (compressed / "proxy" / "s2").mkdir()  # a session folder without a log
    index = {name: call_index(folder) for name, folder in (("plain", plain), ("compressed", compressed))}
    assert [c.log.relative_to(compressed) for c in index["compressed"]] == \
        [Path(p) for p in ["proxy.jsonl.zst", "proxy/s1/proxy.jsonl.zst"] * 5]
    strip = [{**c.__dict__, "log": None} for c in index["plain"]]
    assert strip == [{**c.__dict__, "log": None} for c in index["compressed"]] and len(strip) == 10
    for a, b in zip(index["plain"], index["compressed"]):
        detail = call_detail(b)
        assert call_detail(a) == detail and detail["request_text"].startswith("user:\nquestion")
        assert "x-api-key" not in detail["request_headers"]

"""The raw-call view of a proxy log: a body the proxy stored truncated is shown as truncated (size, sha256)."""

from __future__ import annotations

import hashlib
import json

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

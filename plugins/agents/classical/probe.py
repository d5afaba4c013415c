"""In-sandbox script of the ``proxy-probe`` agent: ``python3 probe.py`` (standard library only).

A minimal LLM-agent stand-in for testing and measuring the harness itself
(parallel episodes, rate limits, resume): it sends ``--turns`` OpenAI Chat
Completions requests to the model proxy (``--base-url``), one after another,
then submits the last allowed label for every test sample (``results.json``)
or a rule that always predicts it (``rule.py``).  It never reads the model's
answers beyond checking the HTTP status: a failed request exits with code 3.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
from pathlib import Path
from urllib.parse import urlsplit

RULE = '''LABEL = {label!r}


def predict(df) -> list:
    return [LABEL]
'''


def post_json(url: str, body: bytes, timeout: float = 600) -> tuple[int, bytes]:
    """POST ``body`` (JSON) to ``url`` (``http://host:port/path``) over HTTP/1.0; returns (status, response body).
    Raises OSError when the server cannot be reached or sends no HTTP response, ValueError for another scheme."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise ValueError(f"expected an http:// URL, got {url!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    head = (f"POST {target} HTTP/1.0\r\nHost: {parts.netloc}\r\ncontent-type: application/json\r\n"
            f"authorization: Bearer sk-dummy\r\ncontent-length: {len(body)}\r\n\r\n").encode("latin-1")
    with socket.create_connection((parts.hostname, parts.port or 80), timeout=timeout) as conn:
        conn.sendall(head + body)
        chunks = []
        while chunk := conn.recv(1 << 16):  # HTTP/1.0: the server ends the response by closing
            chunks.append(chunk)
    header, sep, payload = b"".join(chunks).partition(b"\r\n\r\n")
    status = header.split(b" ", 2)[1] if header.startswith(b"HTTP/") and b" " in header else b""
    if not sep or not status.isdigit():
        raise OSError(f"no HTTP response from {url}")
    return int(status), payload


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="probe.py")
    parser.add_argument("--task-info", required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="probe")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--prompt-file", default=None)
    args = parser.parse_args(argv)
    info = json.loads(args.task_info)
    url = args.base_url.rstrip("/") + "/v1/chat/completions"
    messages = [{"role": "user", "content": Path(args.prompt_file).read_text() if args.prompt_file else "go"}]
    for turn in range(args.turns):
        body = json.dumps({"model": args.model, "messages": messages}).encode()
        try:
            status, payload = post_json(url, body)
            if status >= 400:
                raise OSError(f"HTTP Error {status}: {payload[:200].decode('utf-8', 'replace')}")
            answer = json.loads(payload)
        except (OSError, ValueError) as exc:
            print(f"probe: request {turn + 1} failed: {exc}", file=sys.stderr)
            return 3
        text = (answer.get("choices") or [{}])[0].get("message", {}).get("content") or ""
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "continue"}]
    label = info["labels"][-1]
    root = Path(".")
    if info.get("submission") == "programmatic":
        (root / "rule.py").write_text(RULE.format(label=label))
    else:
        results = {p.name: [label] for p in sorted((root / "test_samples").glob("*.parquet"))}
        (root / "results.json").write_text(json.dumps(results))
    print(f"probe: {args.turns} model request(s), submitted {label!r}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A terminal CLI's recorded episode (``tests/fixtures/native_logs/<agent>/direct``) played back without the CLI.

Run as a script by the ``*-replay`` agents of :mod:`tests.support.shell_run` (``python replay_cli.py FIXTURE``,
in the episode's workspace, ``$MODEL_BASE_URL`` the proxy): the recorded ``home/`` is copied into ``$HOME``
(the native logs the real agent's converter reads), every recorded request is sent to the proxy again with
the dummy key (a scripted model answers as it answered the CLI: ``examples/scripts/<cli>-balldrop.yaml``),
``results.json`` is written with one label per test sample of the workspace (a valid TraceBench answer), the
first test sample is overwritten with the second's bytes and the first labeled example deleted (an agent
that changes its inputs), and the recorded stdout is printed.  Standard library only: it runs as the agent does, outside the harness.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import sys
import urllib.request
from pathlib import Path


def body_bytes(record: dict) -> bytes:
    body, encoding = record.get("body"), record.get("body_encoding")
    if body is None:
        return b""
    if encoding == "base64":
        return base64.b64decode(body)
    if encoding == "text":
        return str(body).encode()
    return json.dumps(body, ensure_ascii=False).encode()


def main(fixture: Path, key: str) -> None:
    shutil.copytree(fixture / "home", os.environ["HOME"], dirs_exist_ok=True)
    base = os.environ["MODEL_BASE_URL"].rstrip("/")
    for line in (fixture / "proxy.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") != "request":
            continue
        url = base + record["path"] + (f"?{record['query']}" if record.get("query") else "")
        headers = {k: v for k, v in (record.get("headers") or {}).items() if k in ("content-type", "accept")}
        headers.update({"authorization": f"Bearer {key}", "x-api-key": key})
        request = urllib.request.Request(url, body_bytes(record) or None, headers, method=record.get("method"))
        with urllib.request.urlopen(request, timeout=120) as answer:
            answer.read()
        if not Path("results.json").exists():  # what the CLI's tool call did after the first answer
            label = json.loads(Path("train_labels.json").read_text())
            first = sorted(label.values())[0]
            tests = sorted(os.listdir("test_samples"))
            Path("results.json").write_text(json.dumps({name: [first] for name in tests}))
            print("wrote results.json with", len(tests), "predictions", file=sys.stderr)
            # an agent that changes its inputs: one test sample overwritten with another's, one example deleted
            shutil.copyfile(Path("test_samples") / tests[1], Path("test_samples") / tests[0])
            (Path("train_samples") / sorted(os.listdir("train_samples"))[0]).unlink()
    sys.stdout.write((fixture / "agent.stdout").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])

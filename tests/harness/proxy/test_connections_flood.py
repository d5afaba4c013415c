"""10,000 connections to the proxy from inside a sandbox leave the harness able to write its results, under
``ulimit -n 1024`` (soft and hard: the harness cannot raise it).

The agent (a shell agent with a model, in the local bubblewrap sandbox where it can run, and in Docker)
connects to its episode's proxy socket (in Docker, where the agent's uid may not open it, to the bridge in
front of it) 10,000 times, holding as many connections as its own open-file limit lets it, then
makes one model call through the proxy's URL (retried while it is answered 503: the proxy may not have seen
all the closed connections go yet) and answers.  The harness must serve the call, finish the
episode and write ``results.parquet``, with no "Too many open files" anywhere.
"""

from __future__ import annotations

import resource

import pyarrow.parquet as pq
import pytest
import yaml

from harness import plugins as registry
from harness.wire import proxy_log, read_log
from harness.sandbox.docker_engine import no_engine_reason
from harness.sandbox.mounts import PROXY_SOCKET_PATH
from tests.support.docker import ENGINE
from tests.support.shell_run import harness_cli, profile, shell_task

FLOOD = f"""
import json, os, socket, time, urllib.error, urllib.parse, urllib.request
url = urllib.parse.urlsplit(os.environ["MODEL_BASE_URL"])
try:  # the proxy's socket itself where the sandbox lets the agent reach it, else the bridge in front of it
    socket.socket(socket.AF_UNIX).connect({PROXY_SOCKET_PATH!r})
    family, address = socket.AF_UNIX, {PROXY_SOCKET_PATH!r}
except OSError:
    family, address = socket.AF_INET, (url.hostname, url.port)
made, held = 0, []
while made < 10000:
    try:
        sock = socket.socket(family)
        sock.connect(address)
    except OSError:  # our own open-file limit (or the bridge's): let the held ones go
        for s in held:
            s.close()
        held = []
        continue
    held.append(sock)
    made += 1
for s in held:
    s.close()
body = json.dumps({{"model": "m", "messages": [{{"role": "user", "content": "hi"}}]}}).encode()
req = urllib.request.Request(os.environ["MODEL_BASE_URL"].rstrip("/") + "/v1/chat/completions", body,
                             {{"content-type": "application/json", "authorization": "Bearer dummy"}})
for attempt in range(600):  # 503 while the proxy has not yet seen our closed connections go: retry, as CLIs do
    try:
        status = urllib.request.urlopen(req, timeout=60).status
        break
    except urllib.error.HTTPError as exc:
        status = exc.code
        if exc.code != 503:
            break
        time.sleep(0.1)
print("made", made, "status", status)
open("results.json", "w").write(json.dumps({{"answer": 42 if status == 200 else 0}}))
"""


def local_sandbox() -> str:
    for name in ("bubblewrap", "unshare"):
        if registry.get("sandbox_backend", name).available()[0]:
            return name
    return "none"


def limit_open_files() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))


def test_ten_thousand_connections_from_a_sandbox_leave_the_harness_writing_results(tmp_path):
    flood(tmp_path, local_sandbox())


@pytest.mark.docker
@pytest.mark.skipif(not ENGINE, reason=no_engine_reason())
def test_ten_thousand_connections_from_a_docker_sandbox_leave_the_harness_writing_results(tmp_path):
    flood(tmp_path, "docker")


def flood(tmp_path, sandbox: str) -> None:
    script = tmp_path / "model.yaml"
    script.write_text(yaml.safe_dump({"final": {"text": "hello"}}))
    out = tmp_path / "run"
    proc = harness_cli("run", "--task", shell_task(tmp_path, "python3 flood.py", files={"flood.py": FLOOD}), "--agent",
                       profile(tmp_path, "shell-model"), "--sandbox", sandbox, "--model-backend",
                       "scripted", "--script", script, "--timeout", "300", "--out", out, preexec_fn=limit_open_files)
    stdout, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err[-3000:]
    assert "Too many open files" not in err and "Traceback" not in err
    [row] = pq.read_table(out / "results.parquet").to_pylist()
    assert row["status"] == "ok" and row["accuracy"] == 1.0, row
    [episode] = out.glob("episodes/*")
    assert (episode / "agent.stdout").read_text().split() == ["made", "10000", "status", "200"]
    assert "Too many open files" not in (episode / "agent.stderr").read_text()
    calls = read_log(proxy_log(episode))
    assert [c["status"] for c in calls if c["type"] == "response"] == [200]

"""The proxy-probe agent's script: its arguments, its HTTP/1.0 requests and what it submits."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from tsagent_plugins.agents.classical import probe


def test_arguments_with_defaults_both_spellings_and_named_errors():
    got = probe.parse(["--task-info", "{}", "--base-url=http://h:1", "--turns", "2"])
    assert got == {"--task-info": "{}", "--base-url": "http://h:1", "--model": "probe", "--turns": "2",
                   "--prompt-file": ""}
    with pytest.raises(ValueError, match="missing --base-url"):
        probe.parse(["--task-info", "{}"])
    with pytest.raises(ValueError, match="unknown argument '--bogus'"):
        probe.parse(["--bogus", "1"])
    with pytest.raises(ValueError, match="--turns needs a value"):
        probe.parse(["--task-info", "{}", "--base-url", "http://h", "--turns"])


class _Chat(BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["content-length"]))
        _Chat.seen.append((self.path, self.headers["authorization"], json.loads(body)))
        status = 500 if _Chat.seen[-1][2]["model"] == "broken" else 200
        reply = json.dumps({"choices": [{"message": {"content": f"reply {len(_Chat.seen)}"}}]}).encode()
        self.send_response(status)
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Chat.seen = []
    httpd = HTTPServer(("127.0.0.1", 0), _Chat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def _run(tmp_path, *args):
    script = probe.__file__
    return subprocess.run([sys.executable, "-S", script, *args], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60)


def test_turns_carry_the_conversation_and_a_direct_submission_names_every_test_sample(server, tmp_path):
    (tmp_path / "test_samples").mkdir()
    for name in ("b.parquet", "a.parquet", "notes.txt"):
        (tmp_path / "test_samples" / name).write_text("x")
    info = json.dumps({"submission": "direct", "labels": ["drag", "mass"]})
    done = _run(tmp_path, "--task-info", info, "--base-url", server + "/", "--turns", "2")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "results.json").read_text()) == {"a.parquet": ["mass"], "b.parquet": ["mass"]}
    assert [path for path, _, _ in _Chat.seen] == ["/v1/chat/completions"] * 2
    assert _Chat.seen[0][1] == "Bearer sk-dummy"
    assert _Chat.seen[1][2]["messages"] == [{"role": "user", "content": "go"},
                                           {"role": "assistant", "content": "reply 1"},
                                           {"role": "user", "content": "continue"}]


def test_a_programmatic_submission_is_a_rule_and_a_failed_request_exits_3(server, tmp_path):
    info = json.dumps({"submission": "programmatic", "labels": ["drag", "mass"]})
    assert _run(tmp_path, "--task-info", info, "--base-url", server, "--turns", "1").returncode == 0
    assert "LABEL = 'mass'" in (tmp_path / "rule.py").read_text()
    failed = _run(tmp_path, "--task-info", info, "--base-url", server, "--model", "broken")
    assert failed.returncode == 3 and "HTTP Error 500" in failed.stderr
    refused = _run(tmp_path, "--task-info", info, "--base-url", "http://127.0.0.1:9")
    assert refused.returncode == 3 and "request 1 failed" in refused.stderr
    assert _run(tmp_path, "--task-info", "{", "--base-url", server).returncode == 2
    with pytest.raises(ValueError, match="http://"):
        probe.post_json("https://example.org/x", b"{}")


@pytest.mark.parametrize("value", [{"a": [1, 2.5, -3, True, False, None], "b": {"c": "d"}},
                                   ["é ü \u2603 \U0001f600", "quote \" back\\slash \n tab\t \x01"], [], {}, "", 0])
def test_json_without_the_json_module_agrees_with_it(value):
    text = probe.dumps(value)
    assert text == json.dumps(value, separators=(",", ":"))
    assert probe.loads(text) == value == probe.loads(f" \n{json.dumps(value, indent=2)}\t".encode())


def test_malformed_json_is_a_value_error_that_says_where():
    for text in ("{", '{"a": 1} x', "", "[1,]", b"\xff"):
        with pytest.raises(ValueError):
            probe.loads(text)
    with pytest.raises(ValueError, match="Expecting"):
        probe.loads('{"a" 1}')
    with pytest.raises(TypeError, match="set"):
        probe.dumps({1, 2})


def test_a_run_loads_no_json_socket_re_or_enum(server, tmp_path):
    info = json.dumps({"submission": "direct", "labels": ["drag", "mass"]})
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import probe; "
            "rc = probe.main(sys.argv[2:]); "
            "print(rc, sorted(m for m in ('json', 'socket', 're', 'enum', 'selectors') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-E", "-s", "-S", "-c", code, str(Path(probe.__file__).parent),
                           "--task-info", info, "--base-url", server, "--turns", "2"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.stdout.split(None, 1) == ["0", "[]\n"], done.stderr
    assert _Chat.seen[1][2]["messages"][1] == {"role": "assistant", "content": "reply 1"}

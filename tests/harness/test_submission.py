"""Sandboxed evaluation of a submitted rule.py (TraceBench programmatic mode) against hostile rules.

One rule, whose behaviour is chosen by the sample's ``mode`` column, covers
the hostile cases in one episode per backend: it raises, hangs, returns a
non-list or a non-JSON value, exits, segfaults, allocates past the memory cap,
opens sockets, reads the test folder, forks without bound and prints — and the
well-behaved samples around each still get their answers.
"""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import pandas as pd
import pytest
from tests.support.sandbox import get_backend

from harness.contracts.sandbox import Limits, SandboxBackend
from harness.contracts.task import CallResult
from harness.submission import SandboxedSubmissionRunner, make_runner

HOSTILE = '''
import os, socket, sys
print("printed at import")

def predict(df):
    mode = df["mode"].iloc[0]
    print("printed inside predict")
    os.write(1, b"written to fd 1")
    if mode == "ok":
        return ["mass", float(df["x"].iloc[0])]
    if mode == "raise":
        raise ValueError("bad sample")
    if mode == "hang":
        import time
        time.sleep(600)
    if mode == "nonlist":
        return "mass"
    if mode == "set":
        return {"mass"}
    if mode == "exit":
        os._exit(7)
    if mode == "segv":
        import ctypes
        ctypes.string_at(0)
    if mode == "memory":
        block = bytearray(MEMORY_MB * 2 * 1024 * 1024)
        return ["allocated", len(block)]
    if mode == "network":
        out = []
        for host, port in [("127.0.0.1", HOST_PORT), ("1.1.1.1", 53)]:
            try:
                socket.create_connection((host, port), timeout=2)
                out.append("connected")
            except OSError as e:
                out.append(type(e).__name__)
        return out
    if mode == "files":
        out = []
        for p in [TEST_DIR, TEST_DIR + "/sample_0.parquet", "test_samples", "/workspace/test_samples"]:
            try:
                out.append(sorted(os.listdir(p)) if os.path.isdir(p) else open(p, "rb").read(4).hex())
            except OSError as e:
                out.append(type(e).__name__)
        return out
    if mode == "fork":
        n = 0
        for _ in range(400):
            try:
                pid = os.fork()
            except OSError:
                break
            if pid == 0:
                import time
                time.sleep(5)
                os._exit(0)
            n += 1
        return n
    if mode == "stdin":
        return [sys.stdin.read(), os.read(0, 10).decode()]
'''

MODES = ["ok", "raise", "hang", "ok", "nonlist", "set", "exit", "ok", "segv", "memory", "ok",
         "network", "files", "fork", "stdin", "ok"]
MEMORY_MB = 1024
PIDS = 48


def _samples(folder: Path, modes: list[str]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, mode in enumerate(modes):
        p = folder / f"sample_{i}.parquet"
        pd.DataFrame({"mode": [mode] * 3, "x": [float(i)] * 3, "time": [0.0, 0.1, 0.2]}).to_parquet(p)
        paths.append(p)
    return paths


@pytest.fixture
def host_listener():
    srv = socket.create_server(("127.0.0.1", 0))
    threading.Thread(target=lambda: [srv.accept()[0].close() for _ in iter(int, 1)], daemon=True).start()
    yield srv.getsockname()[1]
    srv.close()


@pytest.mark.parametrize("name", ["bubblewrap", pytest.param("unshare", marks=pytest.mark.slow)])
def test_hostile_rule_gets_one_result_per_sample(name, tmp_path, host_listener):
    backend = get_backend(name)
    test_dir = tmp_path / "ws" / "test_samples"
    inputs = _samples(test_dir, MODES)
    rule = tmp_path / "ws" / "rule.py"
    rule.write_text(HOSTILE.replace("MEMORY_MB", str(MEMORY_MB)).replace("HOST_PORT", str(host_listener))
                    .replace("TEST_DIR", repr(str(test_dir))))
    with socket.create_connection(("127.0.0.1", host_listener), timeout=2):  # positive controls on the host
        pass
    assert sorted(os.listdir(test_dir))[:1] == ["sample_0.parquet"]

    runner = make_runner(backend, Limits(pids=PIDS), call_timeout=1.5, memory_mb=MEMORY_MB)
    started = time.monotonic()
    results = runner(rule, "predict", inputs)
    elapsed = time.monotonic() - started
    got = dict(zip([f"{i}:{m}" for i, m in enumerate(MODES)], results))
    assert len(results) == len(inputs)

    for i, mode in enumerate(MODES):
        if mode == "ok":  # every well-behaved sample is answered, before and after each failure
            assert results[i] == CallResult(value=["mass", float(i)]), (i, results[i])
    assert got["1:raise"] == CallResult(error="ValueError: bad sample")
    assert got["2:hang"] == CallResult(error="timeout after 1.5s")
    assert got["4:nonlist"] == CallResult(value="mass")  # label validation is the template's job
    assert got["5:set"].value is None and got["5:set"].error.startswith("TypeError: return value is not JSON")
    assert got["6:exit"].error.startswith("worker exited with status 7")
    assert got["8:segv"].error.startswith("worker crashed: killed by SIGSEGV")
    assert got["9:memory"] == CallResult(error="MemoryError")
    assert got["11:network"] == CallResult(value=["ConnectionRefusedError", "OSError"])
    assert got["12:files"] == CallResult(value=["FileNotFoundError"] * 4)
    if os.geteuid() == 0:  # the worker runs as an unprivileged uid with RLIMIT_NPROC = limits.pids
        assert 0 < got["13:fork"].value < PIDS
    assert got["14:stdin"] == CallResult(value=["", ""])  # the protocol stream is out of reach
    assert elapsed < 60


def test_import_error_gives_every_call_that_error(tmp_path):
    backend = get_backend("bubblewrap" if _has("bubblewrap") else "unshare")
    inputs = _samples(tmp_path / "s", ["ok", "ok", "ok"])
    runner = make_runner(backend, Limits(), call_timeout=5, memory_mb=MEMORY_MB)
    broken = tmp_path / "rule.py"
    broken.write_text("import numpy\nvalue = 1 / 0\ndef predict(df):\n    return ['x']\n")
    started = time.monotonic()
    assert runner(broken, "predict", inputs) == [CallResult(error="ZeroDivisionError: division by zero")] * 3
    assert time.monotonic() - started < 20
    missing_fn = tmp_path / "other.py"
    missing_fn.write_text("def classify(df):\n    return ['x']\n")
    assert runner(missing_fn, "predict", inputs[:1]) == [
        CallResult(error="AttributeError: other.py does not define a function predict()")]
    assert runner(tmp_path / "absent.py", "predict", inputs[:2]) == [
        CallResult(error="submission file absent.py not found")] * 2
    exits = tmp_path / "exits.py"
    exits.write_text("import os\nos._exit(0)\n")
    result = runner(exits, "predict", inputs[:2])
    assert all(r.error.startswith("import failed: worker exited with status 0") for r in result)
    assert runner(broken, "predict", []) == []


def test_submission_is_a_snapshot_and_only_file_visible(tmp_path):
    backend = get_backend("bubblewrap" if _has("bubblewrap") else "unshare")
    (tmp_path / "helper.py").write_text("X = 1\n")
    rule = tmp_path / "rule.py"
    rule.write_text(textwrap.dedent("""
        import os
        def predict(df):
            here = os.path.dirname(__file__)
            try:
                import helper
                imported = True
            except ImportError:
                imported = False
            return [sorted(os.listdir(here)), imported, os.getcwd(), sorted(os.listdir("."))]
    """))
    inputs = _samples(tmp_path / "s", ["ok"])
    out = make_runner(backend, Limits(), call_timeout=10, memory_mb=MEMORY_MB)(rule, "predict", inputs)
    assert out == [CallResult(value=[["rule.py"], False, "/workspace", []])]


def test_none_backend_runs_the_worker_on_the_host(tmp_path):
    rule = tmp_path / "rule.py"
    rule.write_text("import os\ndef predict(df):\n    return [os.path.basename(__file__), len(df)]\n")
    inputs = _samples(tmp_path / "s", ["ok"])
    out = make_runner(get_backend("none"), Limits(), call_timeout=10, memory_mb=MEMORY_MB)(rule, "predict", inputs)
    assert out == [CallResult(value=["rule.py", 3])]


def test_non_local_backend_falls_back_to_a_local_one():
    runner = make_runner(_NotLocal(), None, call_timeout=5, memory_mb=1024)
    assert runner.backend.name in ("bubblewrap", "unshare")
    assert runner.limits.pids == 128


def test_runner_arguments_are_checked():
    backend = get_backend("none")
    with pytest.raises(ValueError, match="memory_mb"):
        SandboxedSubmissionRunner(backend, Limits(), 5, 64)
    with pytest.raises(ValueError, match="positive"):
        SandboxedSubmissionRunner(backend, Limits(), 0, 1024)
    with pytest.raises(ValueError, match="local backend"):
        SandboxedSubmissionRunner(_NotLocal(), Limits(), 5, 1024)
    with pytest.raises(ValueError, match="identifier"):
        SandboxedSubmissionRunner(backend, Limits(), 5, 1024)(Path("rule.py"), "pre dict", [])


def _has(name: str) -> bool:
    from tests.support.sandbox import BACKENDS

    return BACKENDS[name].available()[0]


class _NotLocal(SandboxBackend):
    name = "remote"

    def available(self):
        return True, "ok"

    def create(self, spec):  # pragma: no cover - refused before use
        raise AssertionError

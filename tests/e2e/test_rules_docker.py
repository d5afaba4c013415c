"""rule.py evaluated in the agent image (TraceBench programmatic mode, Docker episodes) against hostile rules.

One rule, whose behaviour is chosen by the sample's ``mode`` column, reads the
test folder, opens sockets, forks without end, exhausts memory, hangs, exits,
writes files — and the well-behaved samples around each still get their
answers, computed with packages only the agent image has.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid

import pandas as pd
import pytest
from tests.support.terminal_e2e import AGENT_IMAGE, e2e_marks

from harness.contracts.sandbox import Limits
from harness.contracts.task import CallResult
from harness.sandbox.docker import LABEL_RUN, DockerBackend, connect
from harness.sandbox.docker_rules import LABEL_ROLE, DockerSubmissionRunner
from harness.submission import make_runner

pytestmark = e2e_marks

MEMORY_MB = 1024
CALL_TIMEOUT = 6.0

RULE = '''
import os, socket

def predict(df):
    mode = df["mode"].iloc[0]
    if mode == "ok":
        import ruptures, sklearn, tslearn  # in the agent image only (TraceBench Table 20)
        return ["mass", float(df["x"].iloc[0])]
    if mode == "files":
        out = []
        for p in [TEST_DIR, "/workspace/test_samples", "/home/agent", "/run/harness", "/submission"]:
            try:
                out.append(sorted(os.listdir(p)))
            except OSError as e:
                out.append(type(e).__name__)
        return out
    if mode == "network":
        out = []
        for family, address in [(socket.AF_INET, ("1.1.1.1", 53)), (socket.AF_INET, ("127.0.0.1", HOST_PORT)),
                                (socket.AF_UNIX, "/var/run/docker.sock")]:
            s = socket.socket(family, socket.SOCK_STREAM)
            s.settimeout(2)
            try:
                s.connect(address)
                out.append("connected")
            except OSError as e:
                out.append(type(e).__name__)
            finally:
                s.close()
        return out
    if mode == "fork":
        while True:
            try:
                os.fork()
            except OSError:
                pass
    if mode == "memory":
        block = bytearray(MEMORY_MB * 3 * 1024 * 1024)
        return [len(block)]
    if mode == "hang":
        import time
        time.sleep(600)
    if mode == "exit":
        os._exit(7)
    if mode == "write":
        out = []
        for p in ["/opt/venv/evil", "/submission/evil", "/etc/evil", "/tmp/scratch"]:
            try:
                open(p, "w").write("x")
                out.append("wrote")
            except OSError as e:
                out.append(type(e).__name__)
        return out
'''


@pytest.fixture
def host_server():
    """A TCP server on the host's loopback: a rule must not reach it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted = []

    def serve():
        try:
            while True:
                conn, _ = server.accept()
                accepted.append(conn)
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()


def samples(folder, modes):
    paths = []
    for i, mode in enumerate(modes):
        path = folder / f"sample_{i}.parquet"
        pd.DataFrame({"mode": [mode], "x": [float(i)]}).to_parquet(path)
        paths.append(path)
    return paths


def rule_containers(run_id: str):
    client = connect()
    try:
        return client.api.containers(all=True, filters={"label": [f"{LABEL_ROLE}=rule", f"{LABEL_RUN}={run_id}"]})
    finally:
        client.close()


@pytest.fixture
def run_id():
    return f"rules-{uuid.uuid4().hex[:10]}"


def test_make_runner_picks_the_image_runner_for_docker_episodes():
    runner = make_runner(DockerBackend(image=AGENT_IMAGE), call_timeout=5, memory_mb=512)
    assert isinstance(runner, DockerSubmissionRunner) and runner.backend.image == AGENT_IMAGE


def test_hostile_rules_get_nothing_and_harm_nothing(tmp_path, host_server, run_id):
    port, accepted = host_server
    tests = tmp_path / "test_samples"
    tests.mkdir()
    modes = ["ok", "files", "network", "write", "memory", "ok", "exit", "ok", "hang", "ok", "fork", "ok"]
    inputs = samples(tests, modes)
    rule = tmp_path / "rule.py"
    rule.write_text(f"TEST_DIR = {str(tests)!r}\nHOST_PORT = {port}\nMEMORY_MB = {MEMORY_MB}\n" + RULE)
    runner = DockerSubmissionRunner(DockerBackend(image=AGENT_IMAGE), Limits(cpus=1, pids=64), CALL_TIMEOUT, MEMORY_MB,
                                    import_timeout=60, labels={LABEL_RUN: run_id})
    results = dict(zip(range(len(modes)), runner(rule, "predict", inputs), strict=True))

    # well-behaved samples, before and after each hostile one, are answered (with image-only packages)
    for i, mode in enumerate(modes):
        if mode == "ok":
            assert results[i].value == ["mass", float(i)] and results[i].error is None
    by_mode = {m: results[i] for i, m in enumerate(modes) if m != "ok"}
    # no test folder, no workspace, no home, no proxy: only the submission itself
    assert by_mode["files"].value == ["FileNotFoundError", "FileNotFoundError", [], [], ["rule.py"]]
    # no network at all: the host's loopback server and the engine's socket are out of reach
    assert by_mode["network"].value == ["OSError", "ConnectionRefusedError", "FileNotFoundError"]
    assert accepted == []
    # read-only image and submission; only the per-container /tmp is writable
    assert by_mode["write"].value == ["OSError", "OSError", "OSError", "wrote"]
    assert by_mode["memory"].error == "MemoryError"
    assert by_mode["exit"].error == "worker exited with status 7"
    assert by_mode["hang"].error == by_mode["fork"].error == f"timeout after {CALL_TIMEOUT:g}s"
    # nothing is left running: every container (the fork bomb's included) is gone
    assert rule_containers(run_id) == []
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0


def test_an_unimportable_rule_fails_every_call(tmp_path, run_id):
    inputs = samples(tmp_path, ["ok", "ok"])
    rule = tmp_path / "rule.py"
    rule.write_text("import module_that_does_not_exist\n")
    runner = DockerSubmissionRunner(DockerBackend(image=AGENT_IMAGE), Limits(pids=64), CALL_TIMEOUT, MEMORY_MB,
                                    labels={LABEL_RUN: run_id})
    results = runner(rule, "predict", inputs)
    assert [r.error for r in results] == ["ModuleNotFoundError: No module named 'module_that_does_not_exist'"] * 2
    assert rule_containers(run_id) == []


def test_a_forking_rule_scores_only_on_its_own_answers(tmp_path, run_id):
    """Every predict() forks a child that returns at once: only the worker's own, numbered replies count."""
    from tests.harness.test_submission_replies import FORKING

    inputs = samples(tmp_path, ["ok"] * 12)
    rule = tmp_path / "rule.py"
    rule.write_text(FORKING)
    runner = DockerSubmissionRunner(DockerBackend(image=AGENT_IMAGE), Limits(pids=64), CALL_TIMEOUT, MEMORY_MB,
                                    labels={LABEL_RUN: run_id})
    assert runner(rule, "predict", inputs) == [CallResult(value=["parent", i]) for i in range(12)]
    assert rule_containers(run_id) == []

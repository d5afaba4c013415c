"""Docker sandbox timeouts: the whole process tree dies at the deadline, nothing waits forever."""

from __future__ import annotations

import re
import time

import pytest
from tests.support.docker import client, dirs, docker_marks, make_sandbox, py, run_id, test_image  # noqa: F401 - fixtures

from harness.sandbox.docker import DockerSandboxError

pytestmark = docker_marks


def _sleepers(box) -> list[str]:
    r = box.exec(["ps", "-eo", "args="])
    return sorted(line.strip() for line in r.stdout.splitlines() if re.match(r"^(/bin/)?sleep 3\d\d$", line.strip()))


def test_timeout_kills_the_whole_process_tree(make_sandbox):
    box = make_sandbox()
    # another exec's background process must survive (the kill is aimed at the timed-out exec only)
    assert box.exec(["sh", "-c", "nohup sleep 399 >/dev/null 2>&1 &"]).returncode == 0
    tree = ("sleep 301 & (sleep 302 &) ; setsid sleep 303 & nohup sleep 304 >/dev/null 2>&1 & "
            "env -i /bin/sleep 305 & python3 -c 'import os,time; os.setsid(); os.fork() or time.sleep(306); "
            "time.sleep(306)' & sleep 300")
    started = time.monotonic()
    r = box.exec(["sh", "-c", tree], timeout=2)
    elapsed = time.monotonic() - started
    assert r.timed_out and r.returncode is None
    assert 2 <= elapsed < 10 and 2 <= r.duration < 10
    assert _sleepers(box) == ["sleep 399"]


def test_timeout_when_output_stream_is_held_open(make_sandbox):
    """A daemon that keeps stdout open and ignores SIGTERM still ends at the deadline."""
    box = make_sandbox()
    r = box.exec(["sh", "-c", "trap '' TERM; (trap '' TERM; setsid sleep 333) & echo started; wait"], timeout=1.5)
    assert r.timed_out and r.stdout == "started\n" and r.duration < 10
    assert box.exec(["true"]).returncode == 0  # the sandbox stays usable


def test_timeout_kills_a_child_that_cleared_its_environment_and_left_the_session(make_sandbox):
    box = make_sandbox()
    r = box.exec(["sh", "-c", "env -i setsid /bin/sleep 334 & env -i sh -c 'sleep 335 & sleep 336' & sleep 300"],
                 timeout=1.5)
    assert r.timed_out and r.duration < 8
    assert _sleepers(box) == []
    assert box.exec(["true"]).returncode == 0


def test_timeout_falls_back_to_killing_the_container(make_sandbox, monkeypatch, tmp_path):
    """When the in-container sweep cannot end the command, the container is killed at deadline + grace."""
    import harness.sandbox.docker as docker_backend

    monkeypatch.setattr(docker_backend, "KILL_GRACE", 1.0)
    monkeypatch.setattr(docker_backend.DockerSandbox, "_kill_marked", lambda self, marker: None)
    box = make_sandbox()
    assert box.exec(["sh", "-c", "echo kept > /tmp/state"]).returncode == 0
    r = box.exec(["sh", "-c", "echo started; sleep 300"], timeout=1.5)
    assert r.timed_out and r.stdout == "started\n" and 2.5 <= r.duration < 8
    with pytest.raises(DockerSandboxError, match="cannot run 'true' in the sandbox"):
        box.exec(["true"])
    box.copy_out("/tmp/state", tmp_path / "state")  # a stopped container can still be copied from
    assert (tmp_path / "state").read_text() == "kept\n"


def test_output_of_a_quick_command_is_complete(make_sandbox):
    box = make_sandbox()
    r = box.exec(py("import sys; sys.stdout.write('x' * 3_000_000); sys.stderr.write('y' * 100_000)"))
    assert (len(r.stdout), len(r.stderr), r.returncode) == (3_000_000, 100_000, 0)



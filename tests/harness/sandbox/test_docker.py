"""Docker sandbox backend: exec, copy-out, timeouts, limits, labels, errors, cleanup of killed runs."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import textwrap

import pytest
from tests.support.docker import client, dirs, docker_marks, make_sandbox, py, run_id, test_image  # noqa: F401 - fixtures

from harness.contracts.sandbox import Limits, SandboxSpec
from harness.sandbox.docker import (
    AGENT_UID,
    LABEL_EPISODE,
    LABEL_MANAGED,
    LABEL_RUN,
    DockerBackend,
    DockerSandboxError,
    cleanup,
)

pytestmark = docker_marks


# -- basics ------------------------------------------------------------------------------
def test_exec_output_exit_code_stdin_and_user(make_sandbox):
    box = make_sandbox(env={"EPISODE_VAR": "visible"})
    r = box.exec(["sh", "-c", "echo out; echo err >&2; echo $EPISODE_VAR $HOME $(pwd); exit 7"])
    assert (r.returncode, r.stdout, r.stderr, r.timed_out) == (7, "out\nvisible /home/agent /workspace\n", "err\n", False)
    r = box.exec(["sh", "-c", "tr a-z A-Z"], stdin="hello\n" * 20000)
    assert r.returncode == 0 and r.stdout == "HELLO\n" * 20000
    r = box.exec(["id", "-u"])
    expected = AGENT_UID if os.getuid() == 0 else os.getuid()
    assert r.stdout.strip() == str(expected) and r.stdout.strip() != "0"


def test_workspace_and_home_are_shared_with_the_host(make_sandbox, dirs):
    ws, home = dirs
    (ws / "task.txt").write_text("from host")
    box = make_sandbox()
    r = box.exec(["sh", "-c", "cat task.txt; echo result > results.json; echo log > $HOME/session.jsonl"])
    assert r.returncode == 0 and r.stdout == "from host"
    assert (ws / "results.json").read_text() == "result\n"
    assert (home / "session.jsonl").read_text() == "log\n"


def test_copy_out_file_folder_and_escaping_links(make_sandbox, tmp_path):
    box = make_sandbox()
    r = box.exec(["sh", "-c", "mkdir -p /tmp/out/sub && echo deep > /tmp/out/sub/f && ln -s /etc/passwd /tmp/out/escape "
                              "&& ln -s sub/f /tmp/out/inside && echo one > /tmp/one.txt"])
    assert r.returncode == 0
    box.copy_out("/tmp/out", tmp_path / "copy")
    assert (tmp_path / "copy/sub/f").read_text() == "deep\n"
    assert (tmp_path / "copy/inside").read_text() == "deep\n"
    assert not (tmp_path / "copy/escape").exists() and not (tmp_path / "copy/escape").is_symlink()
    box.copy_out("/tmp/one.txt", tmp_path / "one.txt")
    assert (tmp_path / "one.txt").read_text() == "one\n"
    with pytest.raises(FileNotFoundError, match="/nope"):
        box.copy_out("/nope", tmp_path / "nope")


# -- limits, labels ----------------------------------------------------------------------------
def test_limits_are_applied(make_sandbox, client):
    box = make_sandbox(limits=Limits(cpus=0.5, memory_mb=256, pids=64))
    host = client.api.inspect_container(box.container_id)["HostConfig"]
    assert host["NanoCpus"] == 500_000_000
    assert host["Memory"] == 256 * 2**20
    assert host["PidsLimit"] == 64
    assert host["NetworkMode"] == "none"
    assert host["CapDrop"] == ["ALL"] and "no-new-privileges" in host["SecurityOpt"]
    # the kernel enforces them: read the cgroup files (v1 or v2) from inside
    r = box.exec(["sh", "-c", "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes;"
                              "cat /sys/fs/cgroup/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids/pids.max;"
                              "cat /sys/fs/cgroup/cpu.max 2>/dev/null || "
                              "echo $(cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us) $(cat /sys/fs/cgroup/cpu/cpu.cfs_period_us)"])
    memory, pids, cpu = r.stdout.split("\n")[:3]
    quota, period = map(int, cpu.split())
    assert (int(memory), int(pids), quota / period) == (256 * 2**20, 64, 0.5)
    # and they bite: a memory hog is killed, a fork storm hits the pids cap
    r = box.exec(py("x = bytearray(600 * 2**20); x[::4096] = b'1' * len(x[::4096]); print('survived')"), timeout=60)
    assert "survived" not in r.stdout and r.returncode == 137
    r = box.exec(py("""
        import os, time
        forked, error = 0, None
        for _ in range(100):
            try:
                pid = os.fork()
            except OSError as e:
                error = e.errno
                break
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            forked += 1
        print(forked, error)
    """), timeout=60)
    forked, error = r.stdout.split()
    assert int(forked) < 64 and error == str(errno.EAGAIN), r


def test_labels_present(make_sandbox, client, run_id):
    box = make_sandbox(labels={LABEL_RUN: run_id, LABEL_EPISODE: "balldrop-seed-3"})
    labels = client.api.inspect_container(box.container_id)["Config"]["Labels"]
    assert labels[LABEL_RUN] == run_id and labels[LABEL_EPISODE] == "balldrop-seed-3" and labels[LABEL_MANAGED] == "1"


# -- availability and errors ------------------------------------------------------------------
def test_missing_image_is_reported(dirs):
    backend = DockerBackend(image="harness-missing:does-not-exist")
    ok, why = backend.available()
    assert not ok and why == ("the image harness-missing:does-not-exist is not present in the Docker engine: "
                              "build or load it first")
    with pytest.raises(DockerSandboxError, match="harness-missing:does-not-exist is not present"):
        backend.create(SandboxSpec(workspace=dirs[0]))


def test_missing_agent_image_names_the_build_command(monkeypatch):
    import harness.image.build as build

    monkeypatch.delenv("HARNESS_DOCKER_IMAGE", raising=False)
    monkeypatch.setattr(build, "find_agent_image", lambda client, recipe=None: (None, "harness-agent:0123456789ab"))
    ok, why = DockerBackend().available()
    assert not ok
    assert why.startswith("the agent runtime image (harness-agent:0123456789ab) is not built: "
                          "run `harness image build --bootstrap`")


def test_bad_proxy_socket_leaves_nothing_behind(test_image, dirs, client, run_id, tmp_path):
    not_a_socket = tmp_path / "proxy.sock"
    not_a_socket.write_text("")
    with pytest.raises(DockerSandboxError, match="proxy_socket .* is not a Unix socket"):
        DockerBackend(image=test_image).create(SandboxSpec(workspace=dirs[0], proxy_socket=not_a_socket,
                                                           labels={LABEL_RUN: run_id}))
    assert client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []


def test_engine_refusal_is_a_sandbox_error_and_leaves_nothing(test_image, dirs, client, run_id):
    with pytest.raises(DockerSandboxError, match="the container did not start: .*"):
        DockerBackend(image=test_image).create(SandboxSpec(workspace=dirs[0], limits=Limits(memory_mb=1),
                                                           labels={LABEL_RUN: run_id}))
    assert client.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}) == []


# -- cleanup after a killed run ---------------------------------------------------------------
def test_cleanup_after_sigkill_removes_labelled_containers_and_volumes(test_image, client, tmp_path, run_id):
    from click.testing import CliRunner

    from harness.cli.sandbox_cmd import sandbox

    ws = tmp_path / "ws"
    ws.mkdir()
    script = textwrap.dedent(f"""
        import sys, time, docker
        from pathlib import Path
        from harness.contracts.sandbox import SandboxSpec
        from harness.sandbox.docker import DockerBackend
        labels = {{"harness.run": "{run_id}", "harness.episode": "e1"}}
        box = DockerBackend(image="{test_image}").create(SandboxSpec(workspace=Path("{ws}"), labels=labels))
        docker.from_env().volumes.create(labels={{**labels, "harness.managed": "1"}})
        print("ready", flush=True)
        box.exec(["sleep", "600"], timeout=600)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    label = {"label": [f"{LABEL_RUN}={run_id}"]}
    assert len(client.api.containers(all=True, filters=label)) == 1  # positive control: left behind
    assert len(client.api.volumes(filters=label)["Volumes"] or []) == 1
    result = CliRunner().invoke(sandbox, ["cleanup", "--run", run_id])
    assert result.exit_code == 0, result.output
    assert "1 container(s) and 1 volume(s)" in result.output
    assert client.api.containers(all=True, filters=label) == []
    assert (client.api.volumes(filters=label)["Volumes"] or []) == []
    assert cleanup(run_id) == ([], [])

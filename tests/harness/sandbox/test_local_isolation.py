"""Isolation properties of the local sandbox backends beyond the conformance kit, each with a positive control.

The properties every backend has (no egress, no DNS, the workspace the only writable place, no host
environment, a timeout kills the whole process tree) are checked by :class:`harness.testing.SandboxBackendTests`
(``tests/harness/test_testing_kits.py``).  Here: what bubblewrap and unshare guarantee in their own way --
only the code the sandbox needs is visible from the repository, no resolver configuration, an environment
exactly what the harness passes (also with a proxy socket), read-only system folders, no capabilities or
nested user namespaces, and no sandbox outliving a crashed harness.  Every test runs on bubblewrap and
unshare (skipped, with the reason, only when the backend's ``available()`` says it cannot run here).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
from tests.support.sandbox import ISOLATING, get_backend, run_probe

from harness.contracts.sandbox import SandboxSpec
from harness.testing.sandbox import ENVIRON_PROBE, processes_with
from harness.sandbox.mounts import repository_root
from tests.support.paths import REPO


@pytest.fixture(params=ISOLATING)
def backend(request):
    return get_backend(request.param)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def _wait_gone(token: str, seconds: float = 5.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    return processes_with(token)


def test_repository_shows_only_the_code_the_sandbox_needs(backend, workspace):
    repo = repository_root()
    assert {"harness", "plugins", "tests"} <= set(os.listdir(repo))  # positive control on the host
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, f"""
            import json, os
            print(json.dumps({{"repo": sorted(os.listdir({str(repo)!r}))}}))
        """)
    allowed = {"harness", "plugins"}
    prefix = Path(sys.prefix).resolve()
    if prefix.is_relative_to(repo):  # the interpreter's own environment (e.g. a .venv in the checkout) is bound
        allowed.add(prefix.relative_to(repo).parts[0])  # read-only so that Python runs; it holds no answer key
    assert set(inside["repo"]) <= allowed, inside["repo"]


def test_no_resolver_configuration_inside(backend, workspace):
    if not os.path.exists("/etc/resolv.conf"):
        pytest.skip("the host has no /etc/resolv.conf, so there is no positive control")
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, """
            import json, os
            print(json.dumps({"resolv_conf": os.path.exists("/etc/resolv.conf")}))
        """)
    assert inside["resolv_conf"] is False


def test_interpreter_and_system_folders_are_not_writable(backend, workspace):
    name = f"sbx-escape-{uuid.uuid4().hex}"
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, f"""
            import json, os, sys
            out = {{}}
            for p in {["/workspace/" + name, sys.prefix + "/" + name, "/usr/" + name]!r}:
                try:
                    open(p, "w").write("x"); out[p] = "written"
                except OSError as e:
                    out[p] = type(e).__name__
            print(json.dumps(out))
        """)
    assert inside[f"/workspace/{name}"] == "written"  # positive control
    assert inside[f"{sys.prefix}/{name}"] != "written" and inside[f"/usr/{name}"] != "written"
    assert not os.path.exists(f"{sys.prefix}/{name}") and not os.path.exists(f"/usr/{name}")


def test_environment_is_exactly_what_the_harness_passes(backend, workspace, tmp_path, monkeypatch):
    canary = f"sk-canary-{uuid.uuid4().hex}"
    monkeypatch.setenv("HARNESS_TEST_CANARY_KEY", canary)
    host = subprocess.run(["env"], check=True, capture_output=True, text=True).stdout  # positive control
    assert canary in host
    proxy = socket.socket(socket.AF_UNIX)
    proxy.bind(str(tmp_path / "p.sock"))
    proxy.listen()
    probe = ENVIRON_PROBE
    try:
        for spec in (SandboxSpec(workspace=workspace, env={"SPEC_VAR": "1"}),
                     SandboxSpec(workspace=workspace, env={"SPEC_VAR": "1"}, proxy_socket=tmp_path / "p.sock")):
            with backend.create(spec) as sb:
                inside = run_probe(sb, probe, env={"EXEC_VAR": "2"})
            assert set(inside["env"]) - {"PWD", "SHLVL", "_", "LC_CTYPE"} == {"PATH", "HOME", "LANG", "SPEC_VAR", "EXEC_VAR"}
            # PID 1 (the launcher) was started with an empty environment (bwrap adds PWD)
            assert {v.split("=")[0] for v in inside["environs"]["1"].split("\0") if v} <= {"PWD"}
            for pid, environ in inside["environs"].items():
                assert canary not in environ and "HARNESS_TEST_CANARY_KEY" not in environ, pid
    finally:
        proxy.close()


def test_proc_sys_capabilities_and_user_namespaces_are_locked(backend, workspace):
    assert os.geteuid() != 0 or os.access("/proc/sys/kernel/core_pattern", os.W_OK)  # positive control
    with backend.create(SandboxSpec(workspace=workspace)) as sb:
        inside = run_probe(sb, """
            import json, os, subprocess
            caps = {l.split(":")[0]: int(l.split()[1], 16) for l in open("/proc/self/status") if l.startswith("Cap")}
            nested = subprocess.run(["unshare", "--user", "true"], capture_output=True).returncode
            print(json.dumps({"core_pattern_writable": os.access("/proc/sys/kernel/core_pattern", os.W_OK),
                              "caps": caps, "nested_userns_rc": nested, "uid": os.getuid()}))
        """)
    assert inside["core_pattern_writable"] is False
    assert inside["caps"]["CapEff"] == inside["caps"]["CapPrm"] == inside["caps"]["CapBnd"] == 0
    assert inside["nested_userns_rc"] != 0


@pytest.mark.parametrize("name", ISOLATING)
def test_sandbox_dies_with_the_harness(name, workspace, tmp_path):
    get_backend(name)
    token = f"sbx-orphan-{uuid.uuid4().hex}"
    harness = textwrap.dedent(f"""
        import os, sys, time
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.support.sandbox import BACKENDS
        from harness.contracts.sandbox import SandboxSpec
        sb = BACKENDS[{name!r}].create(SandboxSpec(workspace=Path({str(workspace)!r})))
        sb.spawn(["sh", "-c", "touch started; sleep 120 # {token}"])
        while not Path({str(workspace / "started")!r}).exists():
            time.sleep(0.01)
        os._exit(0)  # the harness crashes without destroying its sandbox
    """)
    # TMPDIR: the crashed harness leaves its sandbox's private folder behind; keep it in tmp_path
    subprocess.run([sys.executable, "-c", harness], check=True, timeout=60,
                   env={**os.environ, "TMPDIR": str(tmp_path)})
    assert (workspace / "started").exists()  # positive control: the command ran
    assert _wait_gone(token) == []

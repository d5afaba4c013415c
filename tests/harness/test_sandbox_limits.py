"""Resource-limit conformance of every sandbox backend: /tmp size, total memory, processes, rule budget, cleanup.

Each test is parametrised over the local backends (and Docker where an
engine and the base image are present) and uses only the backend contract
(``create`` / ``exec`` / ``spawn``), so it can move into the backend
conformance kit unchanged.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pandas as pd
import pytest

from harness.contracts.sandbox import Limits, SandboxSpec
from harness.sandbox import cgroups
from harness.submission import make_runner
from tests.support.sandbox import ISOLATING, get_backend
from tests.support.paths import REPO

BACKENDS = [*ISOLATING, pytest.param("docker", marks=pytest.mark.docker)]
#: Reason given when a memory/pids test skips; `.ci/run` fails when it sees it.
NO_CGROUP = "no writable cgroup (neither v2 with memory+pids delegated nor v1 memory+pids)"


def docker_image() -> str:
    """The bootstrapped base image, or skip (these tests never build it)."""
    from tests.support.docker import ENGINE, engine_client

    if not ENGINE:
        pytest.skip("no Docker engine answers")
    from harness.image.bootstrap import BootstrapSpec

    client = engine_client()
    try:
        tag = BootstrapSpec().tag
        client.images.get(tag)
    except Exception:  # noqa: BLE001 - any failure: the image is not usable here
        pytest.skip("the harness base image is not present in the engine")
    finally:
        client.close()
    return tag


def make(name: str, tmp_path: Path, limits: Limits):
    ws = tmp_path / f"ws-{uuid.uuid4().hex[:6]}"
    ws.mkdir()
    if name == "docker":
        from harness.sandbox.docker import DockerBackend

        return DockerBackend(image=docker_image()).create(SandboxSpec(workspace=ws, limits=limits))
    backend = get_backend(name)
    if name in ISOLATING and cgroups.support()[0] is None and limits.memory_mb < 4096:
        pytest.skip(NO_CGROUP)
    return backend.create(SandboxSpec(workspace=ws, limits=limits))


def py(source: str) -> list[str]:
    return ["python3", "-c", textwrap.dedent(source)]


@pytest.mark.parametrize("name, where", [(n, w) for n in ISOLATING for w in ("/tmp", "/dev/shm")]
                         + [pytest.param("docker", "/dev/shm", marks=pytest.mark.docker)])
def test_writing_more_than_the_tmp_limit_fails_inside(tmp_path, name, where):
    """Docker's /tmp is the container's writable layer (disk, not memory): its describe() says so."""
    with make(name, tmp_path, Limits(tmp_mb=32)) as sb:
        r = sb.exec(["sh", "-c", f"dd if=/dev/zero of={where}/big bs=1M count=64 2>&1; echo rc=$?; "
                     f"du -m {where}/big"], timeout=60)
    out = r.stdout
    assert "rc=0" not in out, out
    assert "No space left on device" in out
    written = int(out.strip().splitlines()[-1].split()[0])
    assert written <= 32


MEMORY_PROBE = """
import json, os, time
kids = []
for i in range({n}):
    pid = os.fork()
    if pid == 0:
        block = b"\\x01" * ({size} << 20)  # {size} MiB, every page written
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
survived = 0
for pid in kids:
    _, status = os.waitpid(pid, 0)
    survived += os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
print(json.dumps({{"survived": survived}}))
"""


@pytest.mark.parametrize("name", BACKENDS)
def test_many_processes_together_cannot_exceed_the_memory_cap(tmp_path, name):
    # 6 processes x 64 MiB = 384 MiB, each far below any per-process cap; the sandbox's total is 192 MiB.
    with make(name, tmp_path, Limits(memory_mb=192, pids=64)) as sb:
        r = sb.exec(py(MEMORY_PROBE.format(n=6, size=64)), timeout=120)
    if r.returncode == 0:
        survived = json.loads(r.stdout.strip().splitlines()[-1])["survived"]
        assert survived * 64 < 192, f"{survived} processes of 64 MiB survived under a 192 MiB cap"
    else:  # the out-of-memory killer may pick the parent
        assert r.returncode in (137, -9) or r.returncode > 128, r


@pytest.mark.parametrize("name", ISOLATING)
def test_memory_probe_passes_without_a_tight_cap(tmp_path, name):
    """The probe itself is sound: with room for all, all six survive (so the test above can fail)."""
    with make(name, tmp_path, Limits(memory_mb=1024, pids=64)) as sb:
        r = sb.exec(py(MEMORY_PROBE.format(n=6, size=64)), timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["survived"] == 6


@pytest.mark.parametrize("name", BACKENDS)
def test_process_count_is_capped_for_the_whole_sandbox(tmp_path, name):
    probe = """
    import json, os, time
    started = 0
    for i in range(80):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        started += 1
    print(json.dumps({"started": started}), flush=True)
    os._exit(0)
    """
    with make(name, tmp_path, Limits(memory_mb=1024, pids=32)) as sb:
        r = sb.exec(py(probe), timeout=60)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout.strip().splitlines()[-1])["started"] < 32


@pytest.mark.parametrize("name", ISOLATING)
def test_local_backends_state_what_they_enforce(name):
    details = get_backend(name).describe()
    if cgroups.support()[0] is None:
        assert "memory_mb" in details["limits_not_enforced"]
    else:
        assert "memory_mb" in details["limits_enforced"] and "pids" in details["limits_enforced"]
    assert "tmp_mb" in details["limits_enforced"]
    assert details["limits_not_enforced"].startswith("cpus")


def test_none_backend_states_it_enforces_nothing():
    details = get_backend("none").describe()
    assert details["limits_enforced"] == ""
    assert all(f in details["limits_not_enforced"] for f in ("memory_mb", "pids", "tmp_mb"))


@pytest.mark.parametrize("name", ISOLATING)
def test_rule_budget_stops_a_sleeping_rule_within_budget_plus_one_call_timeout(tmp_path, name):
    backend = get_backend(name)
    (tmp_path / "rule.py").write_text("import time\ndef predict(df):\n    time.sleep(1000)\n")
    samples = []
    for i in range(12):
        pd.DataFrame({"col1": [1.0], "col2": [0.0]}).to_parquet(tmp_path / f"s{i}.parquet")
        samples.append(tmp_path / f"s{i}.parquet")
    budget, call_timeout = 4.0, 1.5
    # what two runner calls cost besides the rule's time on this machine now (sandbox set-up, worker start)
    (tmp_path / "quick.py").write_text("def predict(df):\n    return ['x']\n")
    quick = make_runner(backend, call_timeout=60, memory_mb=1024, budget=120)
    started = time.monotonic()
    assert [r.value for r in quick(tmp_path / "quick.py", "predict", samples[:1])
            + quick(tmp_path / "quick.py", "predict", samples[1:2])] == [["x"], ["x"]]
    overhead = time.monotonic() - started
    runner = make_runner(backend, call_timeout=call_timeout, memory_mb=1024, budget=budget)
    started = time.monotonic()
    first = runner(tmp_path / "rule.py", "predict", samples[:6])
    second = runner(tmp_path / "rule.py", "predict", samples[6:])  # the held-out batch shares the budget
    elapsed = time.monotonic() - started
    # 12 calls of 1.5 s would take 18 s; sandbox set-up and teardown of two runner calls come on top
    assert elapsed < budget + call_timeout + max(2.0, overhead + 1.0), (elapsed, overhead)
    errors = [r.error for r in first + second]
    assert all(e is not None for e in errors)
    assert errors[-1] == f"rule budget of {budget:g}s spent"
    assert all(e == f"rule budget of {budget:g}s spent" for e in errors[6:])
    assert sum(e.startswith("timeout after") for e in errors) <= int(budget / call_timeout) + 1


SIGKILL_CHILD = """
import sys, time
from pathlib import Path
from harness.contracts.sandbox import SandboxSpec
name, ws, marker = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if name == "docker":
    from harness.sandbox.docker import DockerBackend
    backend = DockerBackend(image=sys.argv[4])
else:
    from tests.support.sandbox import BACKENDS
    backend = BACKENDS[name]
sb = backend.create(SandboxSpec(workspace=ws, labels={"harness.run": "sigkill-" + marker}))
sb.spawn(["sh", "-c", f"(setsid sleep {marker} &) ; sleep {marker}"]) if name != "docker" else None
if name == "docker":
    import threading
    threading.Thread(target=sb.exec, args=(["sh", "-c", f"sleep {marker}"],), daemon=True).start()
print(getattr(sb, "private", "") or getattr(sb, "container_id", ""), flush=True)
time.sleep(1000)
"""


def _processes_with(marker: str) -> list[str]:
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                cmd = Path(f"/proc/{entry.name}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if f"sleep {marker}" in cmd:
                out.append(f"{entry.name}: {cmd}")
    return out


@pytest.mark.parametrize("name", BACKENDS)
def test_sigkill_then_cleanup_leaves_nothing(tmp_path, name):
    image = docker_image() if name == "docker" else ""
    if name != "docker":
        get_backend(name)
    marker = f"{4000 + int(uuid.uuid4().int % 1000)}.{os.getpid() % 1000}"
    ws = tmp_path / "ws"
    ws.mkdir()
    repo = REPO
    child = subprocess.Popen([sys.executable, "-c", SIGKILL_CHILD, name, str(ws), marker, image],
                             stdout=subprocess.PIPE, cwd=repo, text=True)
    try:
        handle = child.stdout.readline().strip()
        assert handle, "the child did not start its sandbox"
        deadline = time.monotonic() + 20
        while not _processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _processes_with(marker), "the sandboxed command did not start"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    r = subprocess.run([sys.executable, "-m", "harness", "sandbox", "cleanup"], capture_output=True, text=True,
                       cwd=repo, timeout=120)
    assert r.returncode == 0, r.stderr
    deadline = time.monotonic() + 10
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []
    if name == "docker":
        from tests.support.docker import engine_client

        client = engine_client()
        try:
            left = client.api.containers(all=True, filters={"label": f"harness.run=sigkill-{marker}"})
        finally:
            client.close()
        assert left == []
        assert f"sigkill-{marker}" in r.stdout
    else:
        assert not Path(handle).exists(), f"{handle} survived cleanup"
        assert handle not in Path("/proc/mounts").read_text()
        assert [g for g in cgroups.leftovers(include_live=True) if f"-{child.pid}-" in g.dirs[0].name] == []


@pytest.mark.parametrize("name", ISOLATING)
def test_files_holding_an_environment_are_owner_only(tmp_path, name):
    backend = get_backend(name)
    ws = tmp_path / "ws"
    ws.mkdir()
    with backend.create(SandboxSpec(workspace=ws, env={"SOME_SETTING": "x"})) as sb:
        proc = sb.spawn(["sleep", "30"])
        try:
            files = [p for p in sb.private.iterdir() if p.is_file() and p.name != "hosts"]
            assert any(p.name.startswith("launch-") for p in files)
            for p in files:
                assert p.stat().st_mode & 0o777 == 0o600, p
            assert sb.private.stat().st_mode & 0o077 == 0
        finally:
            proc.kill()


def test_cleanup_keeps_leftovers_of_live_owners_unless_all(tmp_path):
    import json as _json

    from harness.sandbox import owner
    from harness.sandbox.cleanup import local_leftovers

    live, dead, unknown = (tmp_path / f"harness-sbx-{n}" for n in ("live", "dead", "unknown"))
    for d in (live, dead, unknown):
        d.mkdir()
    owner.write(live)
    me = owner.current()
    (dead / "owner.json").write_text(_json.dumps({**me, "start": int(me["start"]) + 1}))  # same pid, other process
    folders, _ = local_leftovers(temp_dir=tmp_path)
    assert folders == [dead]
    folders, _ = local_leftovers(include_live=True, temp_dir=tmp_path)
    assert folders == sorted([live, dead, unknown])

"""End to end: SIGINT and SIGTERM stop `harness run` within one rule-call timeout, in the agent phase and
in the rule phase, and leave nothing behind (no process, control group, ``harness-sbx-*`` or
``harness-sub-*`` folder), as a normal exit does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest
import yaml
from tests.support.paths import REPO
from tests.support.sandbox import get_backend

from harness.sandbox import cgroups

BASE = yaml.safe_load((REPO / "tasks/tracebench/balldrop-low-direct.yaml").read_text())
CALL_TIMEOUT = 20
#: a memory cap no other run uses: the rule worker's command line names it (``--memory-mb``)
RULE_MEMORY_MB = 1111

AGENT = '''
import os, sys

from harness.contracts import Agent, AgentInvocation
from harness.hookspecs import hookimpl

WRITER = """
import os, sys, time
os.chdir('/workspace')
if sys.argv[1] == 'programmatic':
    open('rule.py', 'w').write('import time\\\\ndef predict(df):\\\\n    time.sleep(3600)\\\\n')
else:
    time.sleep(3600)
"""


class SleepyAgent(Agent):
    name = "sleepy-test"
    version = "1"
    needs_model = False
    image_capable = bool(os.environ.get("SLEEPY_IMAGE"))

    def command(self, ctx):
        python = "python3" if self.image_capable else sys.executable
        return AgentInvocation(argv=[python, "-c", WRITER, ctx.task_info["submission"], os.environ["SLEEPY_MARKER"]])


@hookimpl
def register_agents(register):
    register(SleepyAgent())
'''


def start(tmp_path: Path, submission: str, sandbox: str, marker: str,
          **extra_env: str) -> tuple[subprocess.Popen, Path]:
    site = tmp_path / "site"
    info = site / "sleepy_agent-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sleepy-agent\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[harness]\nsleepy = sleepy_agent\n")
    (site / "sleepy_agent.py").write_text(textwrap.dedent(AGENT))
    profiles = tmp_path / "profiles"
    profiles.mkdir()
    (profiles / "sleepy-test.yaml").write_text("name: sleepy-test\nagent: sleepy-test\n")
    spec = {**BASE, "params": {**BASE["params"], "submission": submission, "n_test": 3, "pool_per_class": 25,
                               "heldout_per_class": 1}}
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec))
    (tmp_path / "settings.yaml").write_text(yaml.safe_dump({
        "rule_call_timeout": CALL_TIMEOUT, "rule_budget": 600, "episode_timeout": 600,
        "rule_memory_mb": RULE_MEMORY_MB}))
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "HARNESS_CACHE_DIR": str(tmp_path / "cache"), "HARNESS_PROFILES": str(profiles),
           "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]), "TMPDIR": str(temp), "SLEEPY_MARKER": marker,
           **extra_env}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--task", "spec.yaml", "--agent", "sleepy-test",
                             "--out", "run", "--settings", "settings.yaml", "--sandbox", sandbox],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return proc, temp


def wait_for(condition, seconds: float, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        if proc.poll() is not None:
            pytest.fail(f"harness exited early ({proc.returncode}): {proc.stderr.read()[-2000:]}")
        time.sleep(0.2)
    proc.kill()
    pytest.fail(f"not reached in {seconds} s: {proc.stderr.read()[-2000:]}")


def processes_naming(*needles: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        text = " ".join(a.decode(errors="replace") for a in argv)
        if any(n in text for n in needles):
            found.append(f"{entry.name}: {text[:200]}")
    return found


def leftover_groups(pid: int) -> list[str]:
    """Control groups the harness process ``pid`` created (their names carry its owner tag)."""
    return [str(d) for g in cgroups.leftovers(include_live=True) for d in g.dirs
            if d.name.startswith(f"{cgroups.PREFIX}{pid}-")]


def signal_and_wait(proc: subprocess.Popen, signum: int, code: int) -> str:
    """Send ``signum`` to the run and wait at most one call timeout: it exits with ``code``, no traceback;
    returns its stderr."""
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=CALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        pytest.fail(f"still running {CALL_TIMEOUT} s after the signal: {err[-2000:]}")
    assert proc.returncode == code, err[-2000:]
    assert time.monotonic() - sent < CALL_TIMEOUT
    assert "Traceback" not in err, err[-3000:]
    return err


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bubblewrap", "unshare"])
@pytest.mark.parametrize("phase", ["agent", "rule"])
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_the_run_and_leaves_nothing(tmp_path, backend, phase, signum, code):
    get_backend(backend)
    marker = f"sleepy-{uuid.uuid4().hex[:10]}"
    proc, temp = start(tmp_path, "direct" if phase == "agent" else "programmatic", backend, marker)
    if phase == "agent":
        wait_for(lambda: bool(processes_naming(marker)), 120, proc)
    else:
        wait_for(lambda: bool(processes_naming(f"--memory-mb {RULE_MEMORY_MB}")), 180, proc)
        time.sleep(1)  # the worker is inside predict(), asleep
    signal_and_wait(proc, signum, code)
    time.sleep(0.5)
    assert processes_naming(marker, f"--memory-mb {RULE_MEMORY_MB}") == []
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith(("harness-sbx-", "harness-sub-"))) == []
    assert leftover_groups(proc.pid) == []
    rows = list((tmp_path / "run" / "episodes").glob("*/row.json")) if (tmp_path / "run").exists() else []
    assert rows == []  # the interrupted episode is not recorded as finished: a re-run runs it again


def owned_by(pid: int) -> tuple[list[str], list[str]]:
    """(containers, volumes) of the Docker engine whose owner label names the harness process ``pid``."""
    import socket

    from harness.sandbox.docker_engine import LABEL_OWNER, connect

    client = connect(timeout=10)
    try:
        prefix = f"{socket.gethostname()}:{pid}-"
        # The low-level list: ``containers.list`` inspects each container after listing it, and a container
        # removed in between (the harness cleaning up as it should) raises NotFound.
        containers = [c["Names"][0].lstrip("/") for c in client.api.containers(all=True, filters={"label": LABEL_OWNER})
                      if (c.get("Labels") or {}).get(LABEL_OWNER, "").startswith(prefix)]
        volumes = [v.name for v in client.volumes.list(filters={"label": LABEL_OWNER})
                   if (v.attrs.get("Labels") or {}).get(LABEL_OWNER, "").startswith(prefix)]
        return containers, volumes
    finally:
        client.close()


@pytest.mark.slow
@pytest.mark.docker
@pytest.mark.parametrize("phase", ["agent", "rule"])
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_docker_run_and_leaves_nothing(tmp_path, phase, signum, code):
    from tests.support.terminal_e2e import AGENT_IMAGE, NO_IMAGE_REASON

    if AGENT_IMAGE is None:
        pytest.skip(NO_IMAGE_REASON)
    marker = f"sleepy-{uuid.uuid4().hex[:10]}"
    proc, temp = start(tmp_path, "direct" if phase == "agent" else "programmatic", "docker", marker,
                       SLEEPY_IMAGE="1")
    if phase == "agent":
        wait_for(lambda: bool(owned_by(proc.pid)[0]), 180, proc)
        time.sleep(3)  # the agent's command runs
    else:
        wait_for(lambda: any(n.startswith("harness-rule-") for n in owned_by(proc.pid)[0]), 300, proc)
        time.sleep(8)  # the worker imports pandas, then sleeps inside predict()
    signal_and_wait(proc, signum, code)
    assert owned_by(proc.pid) == ([], [])
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith(("harness-sbx-", "harness-sub-"))) == []

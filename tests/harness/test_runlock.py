"""One writer per run folder: two ``harness run`` processes into one ``--out``, ``--wait``, a dead holder's lock.

No test relies on timing: each waits until the first run holds its lock (the lock file names its pid) and
the first run's agent blocks until the test creates a file, so the second run starts while the first is
still writing, whatever the machine's load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pyarrow.parquet as pq
import pytest

from harness import runlock
from harness.errors import HarnessError
from tests.support.shell_run import harness_cli, profile, shell_task

ANSWER = """echo '{"answer": 42}' > results.json"""
#: generous bound on waiting for a child process's state (only a failure ever waits this long)
PATIENCE = 120.0


def blocked_until(go) -> str:
    """A shell agent that waits for the file ``go`` and then answers correctly."""
    return f"while [ ! -e {go} ]; do sleep 0.05; done; {ANSWER}"


def wait_for_holder(out, proc) -> dict:
    """Poll until ``proc`` holds ``out``'s lock (its pid in run.lock); fail if it exits first."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        holder = runlock.holder(out)
        if holder and holder.get("pid") == proc.pid:
            return holder
        if proc.poll() is not None:
            pytest.fail(f"the first run ended before it held the lock: {proc.communicate()}")
        time.sleep(0.02)
    pytest.fail("the first run never held the lock")


def finish(proc) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=PATIENCE)
    return proc.returncode, out, err


def test_a_second_run_into_the_same_out_fails_at_once_naming_the_holder(tmp_path):
    out, go = tmp_path / "run", tmp_path / "go"
    agent = profile(tmp_path)
    first = harness_cli("run", "--task", shell_task(tmp_path, blocked_until(go)), "--agent", agent, "--sandbox",
                        "none", "--out", out)
    try:
        holder = wait_for_holder(out, first)
        # the same command from another terminal (the same task name), with an agent that would leave no answer
        other = tmp_path / "other"
        other.mkdir()
        second = harness_cli("run", "--task", shell_task(other, "true"), "--agent", agent, "--sandbox", "none",
                             "--out", out)
        code, _, err = finish(second)
        assert code == 2
        [line] = [line for line in err.splitlines() if "error" in line or "Traceback" in line]
        assert line.startswith("error: ") and err.endswith(line + "\n")
        assert f"pid {first.pid} on host {holder['host']}, started {holder['started']}" in err
        assert "--wait" in err
    finally:
        go.touch()
        code, stdout, err = finish(first)
    assert code == 0, err
    [row] = [json.loads(p.read_text()) for p in out.glob("episodes/*/row.json")]
    assert row["accuracy"] == 1.0 and row["status"] == "ok"  # the first's score is its own
    assert pq.read_table(out / "results.parquet").column("accuracy").to_pylist() == [1.0]
    assert not (out / runlock.LOCK_NAME).exists()  # released: the folder holds no lock file


def test_with_wait_the_second_run_runs_after_the_first_and_both_entries_are_kept(tmp_path):
    out, go = tmp_path / "run", tmp_path / "go"
    agent, task = profile(tmp_path), shell_task(tmp_path, blocked_until(go))
    first = harness_cli("run", "--task", task, "--agent", agent, "--sandbox", "none", "--seed", "0", "--out", out)
    try:
        wait_for_holder(out, first)
        second = harness_cli("run", "--task", task, "--agent", agent, "--sandbox", "none", "--seed", "1", "--out",
                             out, "--wait")
        line = ""
        while not line.startswith("waiting for the run writing"):  # blocks until the second run says it waits
            line = second.stderr.readline()
            assert line, "the second run ended without waiting"
        assert f"pid {first.pid}" in line
        assert not list(out.glob("episodes/*seed1*"))  # it waits: nothing of its own is written yet
    finally:
        go.touch()
    code, _, err = finish(first)
    assert code == 0, err
    code, _, err = finish(second)
    assert code == 0, err
    episodes = json.loads((out / "run.json").read_text())["episodes"]
    assert sorted(e["key"].split("-")[1] for e in episodes) == ["seed0", "seed1"]
    table = pq.read_table(out / "results.parquet")
    assert table.num_rows == 2 and table.column("accuracy").to_pylist() == [1.0, 1.0]


def test_a_lock_left_by_a_killed_run_is_taken_over(tmp_path):
    out, go = tmp_path / "run", tmp_path / "go"
    agent, task = profile(tmp_path), shell_task(tmp_path, blocked_until(go))
    first = harness_cli("run", "--task", task, "--agent", agent, "--sandbox", "none", "--out", out,
                        start_new_session=True)
    dead = wait_for_holder(out, first)
    os.killpg(first.pid, 9)  # kill -9: no handler runs, run.lock stays with the dead run's record
    first.communicate()
    assert runlock.holder(out) == dead
    go.touch()
    code, _, err = finish(harness_cli("run", "--task", task, "--agent", agent, "--sandbox", "none", "--out", out))
    assert code == 0, err
    assert f"took over the lock of a run that ended without releasing {out} (pid {dead['pid']}" in err
    assert pq.read_table(out / "results.parquet").column("accuracy").to_pylist() == [1.0]


def test_acquire_refuses_while_held_and_names_the_holder(tmp_path):
    with runlock.hold(tmp_path) as lock:
        assert lock.took_over is None
        record = runlock.holder(tmp_path)
        assert record["pid"] == os.getpid() and record["host"] and record["started"]
        # another process (flock locks belong to open files: a child is another holder)
        code = subprocess.run([sys.executable, "-c", "import sys; from harness import runlock\n"
                               f"runlock.acquire({str(tmp_path)!r})"], capture_output=True, text=True)
        assert code.returncode != 0 and "RunLocked" in code.stderr and f"pid {os.getpid()}" in code.stderr
    assert runlock.holder(tmp_path) is None  # released and removed
    with runlock.hold(tmp_path) as again:  # and taken again by the next
        assert again.took_over is None


def test_a_lock_file_without_a_holder_is_taken_over_with_its_record(tmp_path):
    (tmp_path / runlock.LOCK_NAME).write_text(json.dumps({"pid": 999999, "host": "gone", "started": "then"}))
    with runlock.hold(tmp_path) as lock:
        assert lock.took_over == {"pid": 999999, "host": "gone", "started": "then"}
        assert runlock.holder(tmp_path)["pid"] == os.getpid()


def test_the_lock_error_is_a_harness_error_naming_the_folder_and_holder(tmp_path):
    with runlock.hold(tmp_path):  # flock locks of two open files conflict, in one process too
        with pytest.raises(runlock.RunLocked) as caught:
            runlock.acquire(tmp_path)
    assert isinstance(caught.value, HarnessError)
    assert str(caught.value).startswith(f"{tmp_path} is being written by another run (pid {os.getpid()} on host ")


def test_the_dask_client_writes_episodes_only_holding_the_lock(tmp_path):
    from harness.config import RunSettings
    from harness.dask_executor import DaskExecutor
    from harness.store import RunStore

    class Client:
        def scheduler_info(self):
            return {"workers": {"w1": {}, "w2": {}}}

    store = RunStore.create(tmp_path / "run")
    with pytest.raises(HarnessError, match="does not hold the run folder's lock"):
        DaskExecutor(client=Client()).start(2, None, store, RunSettings(), None, {})
    with runlock.hold(store.root):
        executor = DaskExecutor(client=Client())
        executor.start(2, None, store, RunSettings(), None, {})
        assert executor.workers == 2

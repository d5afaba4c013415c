"""A full disk is an episode failure: an agent fills a small ``--out`` file system (a tmpfs this test mounts).

The test mounts a 16 MiB tmpfs (the tests run as root; without the right to mount, the test fails saying
so: a skipped test would hide the case).  Episode 0 answers; episode 1 fills the disk the first time it runs.
"""

from __future__ import annotations

import errno
import json
import subprocess

import pyarrow.parquet as pq
import pytest

from harness import diskfull
from tests.support.shell_run import harness_cli, profile, shell_task

ANSWER = """echo '{"answer": 42}' > results.json"""


@pytest.fixture
def small_fs(tmp_path):
    """A 16 MiB tmpfs at ``tmp_path/fs``, unmounted afterwards."""
    mount = tmp_path / "fs"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.fail(f"this test mounts a small tmpfs and needs root (or CAP_SYS_ADMIN) to: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_an_agent_that_fills_the_out_disk_fails_its_episode_and_the_run_resumes(tmp_path, small_fs):
    once = tmp_path / "filled-once"  # outside the small file system
    script = (f'if [ "$EPISODE" = 1 ] && [ ! -e {once} ]; then touch {once}; cat /dev/zero > fill; exit 1; fi; '
              + ANSWER)
    command = ["run", "--task", shell_task(tmp_path, script, episodes=2), "--agent", profile(tmp_path),
               "--sandbox", "none", "--out", small_fs / "run"]
    proc = harness_cli(*command)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == diskfull.EXIT_CODE == 75, err
    lines = err.strip().splitlines()
    assert lines[-1].startswith("error: ") and "disk full: " in lines[-1], err
    assert "Traceback" not in err
    rows = {"1" if p.parent.name.startswith("shell-1-") else "0": json.loads(p.read_text())
            for p in (small_fs / "run").glob("episodes/*/row.json")}  # folders shell-<id>, shell-1-<id>
    assert rows["0"]["status"] == "ok" and rows["0"]["accuracy"] == 1.0  # the finished episode is kept
    assert rows["1"]["status"] == "failed" and rows["1"]["error_kind"] == "disk_full"
    assert rows["1"]["error"].startswith("disk full: ")
    assert not (small_fs / "run" / "run.lock").exists() and not (small_fs / "run" / ".disk-reserve").exists()

    proc = harness_cli(*command)  # still full: refused before anything is written, with the same exit code
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 75 and err.splitlines()[-1].startswith(f"error: {small_fs / 'run'}: disk full: ")
    [fill] = (small_fs / "run").glob("episodes/shell-1-*/workspace/fill")
    fill.unlink()  # the user frees space
    proc = harness_cli(*command)  # the same command resumes: episode 1 runs again
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert "1 finished episode(s) are kept" in err  # the disk-full episode is not one of them
    table = pq.read_table(small_fs / "run" / "results.parquet").to_pydict()
    assert table["status"] == ["ok", "ok"] and table["accuracy"] == [1.0, 1.0]


def test_enospc_and_edquot_are_a_full_disk_and_other_errors_are_not():
    assert diskfull.is_disk_full(OSError(errno.ENOSPC, "No space left on device", "/x"))
    assert diskfull.is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    assert diskfull.is_disk_full(OSError("[Errno 28] Error writing bytes to file. Detail: No space left on device"))
    assert not diskfull.is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not diskfull.is_disk_full(ValueError("No space left on device"))
    assert diskfull.reason(OSError(errno.ENOSPC, "No space left on device", "/r/a.txt")) == \
        "disk full: No space left on device (/r/a.txt)"
    assert diskfull.reason(OSError(errno.ENOSPC, "No space left on device", b"/r/bad\xff")) == \
        "disk full: No space left on device (/r/bad\\xff)"  # a name that is not UTF-8, escaped


def test_a_run_that_cannot_keep_its_reserve_stops_before_writing(small_fs):
    (small_fs / "fill").write_bytes(b"")
    with open(small_fs / "fill", "wb") as file, pytest.raises(OSError):
        while True:
            file.write(bytes(1 << 20))
    with pytest.raises(diskfull.DiskFull) as caught:
        with diskfull.reserve(small_fs):
            pass
    assert str(caught.value).startswith(f"{small_fs}: disk full: ") and caught.value.exit_code == 75
    assert not (small_fs / diskfull.RESERVE_NAME).exists()

"""``workspace_mb``: an agent that writes more than it into its workspace (or its home) is stopped, on every
local backend (the watch is the harness's, over the host folders every backend binds)."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
import yaml

from harness.atif import native_file_size
from harness import plugins as registry
from harness.config import RunSettings
from harness.sandbox.docker_engine import no_engine_reason
from harness.workspace_cap import used_bytes
from tests.support.docker import ENGINE
from tests.support.shell_run import harness_cli, profile, shell_task

#: writes 1 MiB at a time, forever (until stopped; the episode's own limit is 300 s)
FILL = "while true; do head -c 1048576 /dev/zero >> big; sleep 0.02; done"


@pytest.mark.parametrize("sandbox, folder", [("bubblewrap", "workspace"), ("unshare", "workspace"),
                                             ("none", "workspace"), ("bubblewrap", "home")])
def test_an_agent_writing_past_workspace_mb_is_stopped(tmp_path, sandbox, folder):
    ok, why = registry.get("sandbox_backend", sandbox).available()
    assert ok, f"the {sandbox} sandbox should run on this machine: {why}"
    stopped_past_the_cap(tmp_path, sandbox, folder)


@pytest.mark.docker
@pytest.mark.skipif(not ENGINE, reason=no_engine_reason())
def test_an_agent_writing_past_workspace_mb_is_stopped_in_docker(tmp_path):
    stopped_past_the_cap(tmp_path, "docker", "workspace")


def stopped_past_the_cap(tmp_path, sandbox: str, folder: str) -> None:
    settings = tmp_path / "settings.yaml"
    settings.write_text(yaml.safe_dump({"workspace_mb": 16}))
    out = tmp_path / "run"
    script = FILL if folder == "workspace" else f"cd $HOME && {FILL}"  # the home is a host folder too
    proc = harness_cli("run", "--task", shell_task(tmp_path, script), "--agent", profile(tmp_path), "--sandbox",
                       sandbox, "--settings", settings, "--timeout", "300", "--out", out)
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 3, err[-3000:]  # its one episode failed: the documented "every episode failed" code
    assert "error: every episode failed (1 of 1)" in err
    [row] = pq.read_table(out / "results.parquet").to_pylist()
    assert row["status"] == "failed" and row["error_kind"] == "workspace_limit", row
    assert row["error"].startswith("workspace over workspace_mb (") and "limit 16 MiB): the agent was stopped" \
        in row["error"]
    assert row["agent_seconds"] < 300  # stopped by the watch, not by the episode's time limit
    [episode] = out.glob("episodes/*")  # a home file is stored compressed after the episode (big.zst)
    size = (episode / folder / "big").stat().st_size if folder == "workspace" else native_file_size(episode / folder / "big")
    assert size > 16 * 2**20  # it did write past the limit before it was stopped


def test_used_bytes_counts_allocated_blocks(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * (1 << 20))
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "b").write_bytes(b"y" * (1 << 20))
    with open(tmp_path / "sparse", "wb") as file:  # 1 GiB long, a few blocks used
        file.truncate(1 << 30)
    (tmp_path / "link").symlink_to("/usr")  # not followed
    assert 2 << 20 <= used_bytes(tmp_path) < (2 << 20) + (1 << 20)


def test_the_default_and_the_settings_docs():
    assert RunSettings().workspace_mb == 10240
    description = RunSettings.model_fields["workspace_mb"].description  # printed above the field by `harness settings`
    assert description.startswith("MiB: most an agent may write into its workspace")


def test_a_missing_workspace_measures_zero(tmp_path):
    assert used_bytes(tmp_path / "missing") == 0

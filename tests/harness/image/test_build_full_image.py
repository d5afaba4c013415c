"""The full agent runtime image: tool versions (TraceBench Appendix C.3-C.5), reuse by recipe hash, engine script."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from tests.support.docker import client, docker_marks  # noqa: F401 - fixtures

from harness.contracts.sandbox import SandboxSpec
from harness.image.build import build_image
from harness.image.recipe import RUNTIME_PACKAGES, UV_VERSION
from harness.sandbox.docker import DockerBackend
from tests.support.paths import REPO

pytestmark = docker_marks


def test_engine_script_is_idempotent():
    """With an engine answering, the CI script returns at once and changes nothing."""
    proc = subprocess.run(["bash", str(REPO / "scripts/docker-engine.sh")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "engine answers" in proc.stderr and "starting dockerd" not in proc.stderr


@pytest.fixture(scope="module")
def agent_image(client):
    """Build (cold: ~10 min) or reuse the bootstrapped agent runtime image."""
    lines: list[str] = []
    result = build_image(bootstrap=True, client=client, log=lines.append)
    return result


@pytest.mark.slow
def test_rebuild_is_skipped_while_the_recipe_is_unchanged(agent_image, client):
    again = build_image(bootstrap=True, client=client, log=lambda line: None)
    assert again.reused and again.tag == agent_image.tag and again.seconds < 30
    labels = client.images.get(agent_image.tag).labels
    assert labels["harness.image"] == "agent"


@pytest.mark.slow
def test_full_image_tool_versions(agent_image, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "python3 -c 'import sys; print(\"python\", sys.version.split()[0])'; "
        "echo node $(node --version); uv --version; "
        "echo codex $(codex --version 2>/dev/null | tail -n 1); "
        "echo gemini $(gemini --version 2>/dev/null | tail -n 1); "
        "echo claude $(claude --version 2>/dev/null | tail -n 1); "
        "echo opencode $(opencode --version 2>/dev/null | tail -n 1); "
        "command -v rg tmux ps asciinema; "
        "python3 -m pip list --format=freeze 2>/dev/null"
    )
    with DockerBackend(image=agent_image.tag).create(SandboxSpec(workspace=ws, home=home)) as box:
        r = box.exec(["bash", "-c", script], timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    lines = r.stdout.splitlines()
    first = dict(line.split(" ", 1) for line in lines[:7])
    assert first["python"].startswith("3.13.")
    assert int(first["node"].lstrip("v").split(".")[0]) >= 20
    assert first["uv"] == UV_VERSION
    assert first["codex"] == "codex-cli 0.124.0"
    assert first["gemini"] == "0.35.3"
    assert first["claude"] == "2.1.96 (Claude Code)"
    assert first["opencode"] == "1.14.41"
    assert [Path(p).name for p in lines[7:11]] == ["rg", "tmux", "ps", "asciinema"]
    installed = dict(line.split("==") for line in lines[11:] if "==" in line)
    norm = {k.lower(): v for k, v in installed.items()}
    for name, version in RUNTIME_PACKAGES.items():
        assert norm.get(name.lower()) == version, name

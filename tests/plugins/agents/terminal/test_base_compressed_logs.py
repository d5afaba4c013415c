"""Every native-log reader reads a log the harness stored compressed as it read the plain one.

After an episode the harness stores the text files of the agent's home compressed (``harness.native_logs``:
``name.zst``), and ``harness runs compact`` does so to older runs; the converters read them through
``harness.atif`` (read_native_text, find_native_files, native_file_size, copy_native_file).  On every recorded episode of
every agent plugin that reads a native log (``tests/fixtures/native_logs/<agent>/<case>``, the error and
timeout cases included), with every home file compressed (no size threshold) and the proxy log too: the
trajectory -- ``extra.native_logs`` included -- and every metric extractor's values are the same.
"""

from __future__ import annotations

import shutil

import pytest

from harness import plugins as registry
from harness.contracts import EpisodeArtifacts
from harness.episode import run_extractors
from harness.compressed_files import compress_file
from harness.native_logs import compress_home
from harness.proxy_records import one_parse_per_episode, proxy_log
from tests.plugins.agents.terminal.test_base_invalid_utf8 import FIXTURES, native_log_agents


def cases() -> list[tuple[str, str]]:
    return [(agent, case.name) for agent in native_log_agents() for case in sorted((FIXTURES / agent).iterdir())
            if case.is_dir()]


def read(agent, folder, workspace):
    """(trajectory, metric values) of the recorded episode in ``folder``."""
    stdout = (folder / "agent.stdout").read_text() if (folder / "agent.stdout").is_file() else ""
    trajectory = agent.trajectory(folder / "home", stdout, proxy_log(folder))
    extractors = [r.obj for r in registry.plugins().registry("metric_extractor").values()]
    with one_parse_per_episode():
        metrics = run_extractors(extractors, EpisodeArtifacts(trajectory, proxy_log(folder), workspace), [])
    return trajectory, [(getattr(owner, "name", None), values) for owner, values in metrics]


def test_every_recorded_episode_is_covered():
    covered = {agent for agent, _ in cases()}
    assert {"claude-code", "codex", "gemini-cli", "opencode", "retrieval", "drbench", "opendr", "bench2future",
            "codex-dr"} <= covered
    assert len(cases()) >= 18


@pytest.mark.parametrize(("agent_name", "case"), cases())
def test_a_compressed_home_gives_the_same_trajectory_and_metrics(tmp_path, agent_name, case):
    agent = registry.get("agent", agent_name)
    source = FIXTURES / agent_name / case
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    before = read(agent, source, workspace)
    copy = tmp_path / "episode"
    shutil.copytree(source, copy, symlinks=True)
    done = compress_home(copy / "home", min_bytes=0)
    if (log := proxy_log(copy)) is not None:
        compress_file(log)
        assert proxy_log(copy).name == "proxy.jsonl.zst"
    assert done.problems == []
    logs = agent.native_logs(copy / "home")
    stored = {p.relative_to(copy / "home").as_posix() for p in (copy / "home").rglob("*") if p.is_file()}
    for path in logs:  # every native log is stored compressed (OpenCode's SQLite database too)
        relative = path.relative_to(copy / "home").as_posix()
        assert relative + ".zst" in stored and relative not in stored, relative
    if case == "direct":  # a whole episode: a trajectory, read from at least one compressed native log
        assert before[0] is not None
        assert any(p.relative_to(copy / "home").as_posix() + ".zst" in stored for p in logs)
    after = read(agent, copy, workspace)
    assert after == before

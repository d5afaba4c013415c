"""Every registered metric extractor's output on fixed episodes is pinned to its ``version``: a change of what an
extractor computes without a version bump fails here (tests/support/versions.py says how to update the golden
file tests/golden/versions/extractors.json after a bump).

The fixed episodes: the hand-made Claude Code-style trajectory (tests/fixtures/trajectories/claude_mixed.json)
with plots in its workspace, with and without image support; the captured proxy logs of three CLIs
(tests/fixtures/native_logs, three wires) without a trajectory; an episode with no evidence at all; a
deep-research agent's trajectory naming its upstream software.
"""

from __future__ import annotations

import json

import pytest

from harness import plugins as registry
from harness.config import AgentProfile, Prices
from harness.contracts import EpisodeArtifacts
from tests.support import versions
from tests.support.paths import TESTS

PRICES = Prices(input=5, cached=0.5, output=25)


@pytest.fixture
def episodes(tmp_path) -> list[EpisodeArtifacts]:
    ws = tmp_path / "workspace"
    (ws / "test_samples").mkdir(parents=True)
    (ws / "test_samples" / "a3f9c2d1e4b5.parquet").write_bytes(b"PAR1")
    for name in ("fig_a.png", "fig_b.png", "fig_c.png"):
        (ws / name).write_bytes(b"\x89PNG\r\n")
    (ws / ".cache").mkdir()
    (ws / ".cache" / "font.png").write_bytes(b"x")
    empty = tmp_path / "empty"
    empty.mkdir()
    mixed = json.loads((TESTS / "fixtures" / "trajectories" / "claude_mixed.json").read_text())

    def profile(agent="claude-code", image_support=True):
        return AgentProfile(name="p", agent=agent, image_support=image_support, prices=PRICES)

    logs = TESTS / "fixtures" / "native_logs"
    return [
        EpisodeArtifacts(mixed, None, ws, profile()),
        EpisodeArtifacts(mixed, None, ws, profile(image_support=False)),
        *[EpisodeArtifacts(None, logs / agent / "direct" / "proxy.jsonl", empty, profile(agent))
          for agent in ("claude-code", "gemini-cli", "opencode")],
        EpisodeArtifacts(None, None, empty, None),
        EpisodeArtifacts({"schema_version": "ATIF-v1.6", "session_id": "dr", "steps": [],
                          "extra": {"upstream": "open-deep-research 0.0.16"}}, None, empty, profile("opendr")),
    ]


def test_every_extractors_output_on_fixed_episodes_matches_its_version(episodes, tmp_path):
    found = {}
    for name, reg in registry.plugins().registry("metric_extractor").items():
        extractor = reg.obj
        assert isinstance(extractor.version, str) and extractor.version != "0", \
            f"built-in extractor {name!r} declares no version"
        outputs = [extractor.extract(case) for case in episodes]
        found[name] = (extractor.version, versions.digest(outputs, tmp_path))
    assert versions.check("extractors", found) == []


def test_a_changed_output_without_a_bump_is_caught(episodes, tmp_path, monkeypatch):
    """The check itself: an extractor whose output changes while its version stays fails with the reason."""
    monkeypatch.delenv(versions.UPDATE, raising=False)
    extractor = registry.get("metric_extractor", "interaction")
    golden = json.loads((versions.GOLDEN / "extractors.json").read_text())
    outputs = [{**extractor.extract(case), "tool_calls": 0} for case in episodes]  # "today's" changed code
    problems = versions.check("extractors", {**{n: (e["version"], e["digest"]) for n, e in golden.items()},
                                             "interaction": (extractor.version, versions.digest(outputs, tmp_path))})
    assert len(problems) == 1 and problems[0].startswith(
        "extractors 'interaction': its output on the fixed inputs changed but its version is still '1': bump")
    bumped = versions.check("extractors", {**{n: (e["version"], e["digest"]) for n, e in golden.items()},
                                           "interaction": ("2", versions.digest(outputs, tmp_path))})
    assert len(bumped) == 1 and "is version '2' now (golden: '1')" in bumped[0]

"""An episode's ``proxy.jsonl`` is parsed once: the agent's trajectory converter, the trajectory floor and the
metric extractors share one parse (:func:`harness.proxy_records.one_parse_per_episode`), and nothing of it
outlives the episode."""

from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from harness import EpisodeArtifacts, logfile
from harness.wire import load_log, read_log
from harness.episode import _metrics
from harness.proxy_records import one_parse_per_episode

REQUEST = {"type": "request", "seq": 1, "ts": 100.0, "method": "POST", "path": "/v1/messages", "wire": "anthropic",
           "body": {"model": "m", "messages": [{"role": "user", "content": "Which parameter changed?"}]}}
RESPONSE = {"type": "response", "seq": 1, "ts": 101.0, "status": 200, "cost_usd": 0.01,
            "usage": {"prompt_tokens": 120, "cached_tokens": 0, "completion_tokens": 8, "reasoning_tokens": 0}}


@pytest.fixture
def reads(monkeypatch) -> list[str]:
    seen: list[str] = []
    read_lines = logfile.read_lines
    monkeypatch.setattr(logfile, "read_lines",
                        lambda path, *a, **k: seen.append(str(path)) or read_lines(path, *a, **k))
    return seen


def write_log(path, *lines: str):
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_inside_an_episode_every_reader_shares_one_parse_and_nothing_outlives_it(tmp_path, reads):
    log = write_log(tmp_path / "proxy.jsonl", json.dumps(REQUEST), json.dumps(RESPONSE))
    with one_parse_per_episode():
        strict = read_log(log)
        lenient = load_log(log, lenient=True)
        artifacts = EpisodeArtifacts(None, log, tmp_path).proxy_records
    assert reads == [str(log)]
    assert strict == lenient.records == artifacts.records and len(strict) == 2
    load_log(log)
    load_log(log)
    assert reads == [str(log)] * 3  # outside a block each read parses again: no module cache


def test_a_strict_read_still_refuses_a_broken_line_after_a_lenient_one(tmp_path, reads):
    log = write_log(tmp_path / "proxy.jsonl", json.dumps(REQUEST), "{not json", json.dumps(RESPONSE))
    with one_parse_per_episode():
        assert load_log(log, lenient=True).broken_lines == 1
        with pytest.raises(ValueError, match=r"proxy.jsonl: line 2"):
            read_log(log)
    assert reads == [str(log)]


def test_an_episode_parses_its_proxy_log_once(tmp_path, reads):
    """The episode's own path: a model agent whose converter reads the log, the trajectory floor (the agent
    needs a model) and the usage extractor."""
    from tsagent_plugins.metrics.extractors import UsageMetrics

    root = tmp_path / "episode"
    (root / "workspace").mkdir(parents=True)
    log = write_log(root / "proxy.jsonl", json.dumps(REQUEST), json.dumps(RESPONSE))
    converted: list[int] = []

    class Agent:
        name, version, needs_model = "reader", "1", True

        def trajectory(self, home, stdout, proxy_log):
            converted.append(len(read_log(proxy_log)))
            return None

    plan = SimpleNamespace(agent=Agent(), profile=SimpleNamespace(model="m"), extractors=[UsageMetrics()])
    paths = SimpleNamespace(root=root, home=root / "home", workspace=root / "workspace")
    parts = _metrics(plan, paths, "", ("Which parameter changed?", time.time(), "it exited 0", None))
    assert converted == [2]
    assert [p for p in reads if p.endswith("proxy.jsonl")] == [str(log)]
    usage = dict(parts)[plan.extractors[0]]
    assert usage["prompt_tokens"] == 120
    steps = json.loads((root / "trajectory.json").read_text())["steps"]
    assert steps[0]["source"] == "user" and steps[0]["message"] == "Which parameter changed?"

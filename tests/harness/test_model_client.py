"""One way to a model: in-harness model users (a model-backed forecaster) call through the run's proxy, its
rate limiter and its cost cap; commands outside a run open a :class:`harness.ModelClient` themselves."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import harness
from harness.cli import cli
from harness.config import AgentProfile, Budget
from harness.limits import RateLimiter
from harness.model_client import CostCapReached, ModelClient
from harness.wire import read_log
from tests.support.paths import REPO

LLM_DP = REPO / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml"
PROFILE = """name: dp-priced
agent: llm-dp
provider: custom
model: scripted-model
prices: {input: 2.0, cached: 0.0, output: 10.0}
"""


def upstream_requests(run_dir):
    """Requests the proxy sent upstream, from the episodes' proxy logs (``episodes/*/proxy/*/proxy.jsonl.zst``)."""
    logs = sorted(run_dir.glob("episodes/*/proxy/*/proxy.jsonl.zst"))
    return logs, sum(1 for log in logs for record in read_log(log) if record.get("type") == "request")


def test_the_client_is_public_api():
    assert harness.ModelClient is ModelClient and harness.CostCapReached is CostCapReached


def test_llm_dp_requests_go_through_the_runs_rate_limiter_and_count_against_max_cost(tmp_path, monkeypatch):
    """Three sample tasks, one at a time, cap $0.000001: the first llm-dp episode spends more than the cap, so
    no other starts (``--max-cost``); each of its requests was admitted by the run's limiter of the scripted
    backend (``--settings`` rate_limits), and its proxy log lies in the episode folder."""
    admitted = []
    original = RateLimiter.try_acquire

    def counting(self, key):
        wait = original(self, key)
        if wait == 0:
            admitted.append(self.limit.requests_per_min)
        return wait

    monkeypatch.setattr(RateLimiter, "try_acquire", counting)
    (tmp_path / "dp-priced.yaml").write_text(PROFILE)
    (tmp_path / "settings.yaml").write_text("rate_limits: {scripted: {requests_per_min: 1000}}\n")
    out = tmp_path / "run"
    result = CliRunner().invoke(cli, ["run", "--task", str(LLM_DP), "--agent", str(tmp_path / "dp-priced.yaml"),
                                      "--set", "forecasters=[llm-dp]", "--set", "contexts=[no-context]",
                                      "--settings", str(tmp_path / "settings.yaml"), "--max-cost", "0.000001",
                                      "--jobs", "1", "--out", str(out)])
    # the tasks the cap left unrun make the submission incomplete: the command fails on it, after the results
    assert result.exit_code != 0 and "1 invalid export(s)" in str(result.exception), result.output
    assert (out / "results.parquet").is_file() and "no forecast for 2 task(s)" in result.output, result.output
    rows = [json.loads(p.read_text()) for p in sorted(out.glob("episodes/*/row.json"))]
    assert len(rows) == 1, "the cap stops the run after the first episode"
    assert rows[0]["status"] == "ok" and rows[0]["profile"] == "dp-priced" and rows[0]["cost_usd"] > 0.000001
    logs, sent = upstream_requests(out)
    assert len(logs) == 1 and logs[0].parent.parent.parent == out / "episodes" / rows[0]["episode"]
    assert sent >= 1 and admitted == [1000] * sent


def test_a_model_backend_option_reaches_in_harness_episodes(tmp_path):
    """--model-backend on a run of a model-backed forecaster is used, not refused as ignored."""
    (tmp_path / "dp-priced.yaml").write_text(PROFILE)
    result = CliRunner().invoke(cli, ["run", "--task", str(LLM_DP), "--agent", str(tmp_path / "dp-priced.yaml"),
                                      "--set", "forecasters=[llm-dp]", "--set", "contexts=[no-context]",
                                      "--set", "model_backend=null", "--model-backend", "scripted",
                                      "--set", "tasks=sample", "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output + str(result.exception)
    rows = [json.loads(p.read_text()) for p in sorted((tmp_path / "run").glob("episodes/*/row.json"))]
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}


def test_a_client_refuses_a_call_once_its_max_cost_is_spent(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text("final: {text: hello there}\n")
    profile = AgentProfile(name="p", agent="llm-judge", provider="custom", model="m",
                           prices={"input": 2.0, "cached": 0.0, "output": 10.0})
    client = ModelClient.open(profile, tmp_path / "logs", "scripted", {"script": str(script)},
                              Budget(max_cost_usd=1.0), max_cost_usd=0.000001)
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 10}
    try:
        with client.call("first") as call:
            assert call.budget.max_cost_usd == pytest.approx(0.000001)  # never more than what is left
            answer = call.request("POST", "/v1/chat/completions", body, {"authorization": "Bearer x"})
            assert answer.status == 200
        assert client.spent_usd > 0.000001 and client.totals["requests"] == 1
        with pytest.raises(CostCapReached, match="max cost"):
            with client.call("second"):
                pass
    finally:
        client.stop()
    assert (tmp_path / "logs" / "first-0001" / "proxy.jsonl.zst").is_file()

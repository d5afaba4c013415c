"""Per-episode caps: each one refuses the next request with a non-retryable 4xx in the provider's format."""

import pytest

from harness.config import Budget, Prices
from harness.proxy import ModelProxy, Upstream, UpstreamResponse, read_log
from harness.proxy.client import request

# every answer reports 600 tokens: prompt 500 (100 cached) + completion 100
NATIVE = {
    "anthropic": ("/v1/messages", {"type": "message", "usage": {"input_tokens": 400, "cache_read_input_tokens": 100,
                                                                "output_tokens": 100}}),
    "openai-chat": ("/v1/chat/completions", {"object": "chat.completion", "choices": [], "usage": {
        "prompt_tokens": 500, "completion_tokens": 100, "prompt_tokens_details": {"cached_tokens": 100}}}),
    "openai-responses": ("/v1/responses", {"object": "response", "id": "r", "usage": {
        "input_tokens": 500, "output_tokens": 100, "input_tokens_details": {"cached_tokens": 100}}}),
    "gemini": ("/v1beta/models/g:generateContent", {"candidates": [], "usageMetadata": {
        "promptTokenCount": 500, "cachedContentTokenCount": 100, "candidatesTokenCount": 100}}),
}
# one answer at these prices: (400*500 + 100*0 + 100*2000)/1e6 = 0.2 + 0.2 = $0.40
PRICES = Prices(input=500, cached=0, output=2000)


class Canned(Upstream):
    """Answers every request with the 600-token body of its wire format; counts calls."""

    def __init__(self):
        self.calls = 0

    async def handle(self, req):
        if req.method == "HEAD":
            return UpstreamResponse.json(200, {})
        self.calls += 1
        return UpstreamResponse.json(200, NATIVE[req.wire][1])


def run(tmp_path, budget, wire, n, stream=False):
    upstream = Canned()
    path = NATIVE[wire][0]
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", PRICES, budget)
        answers = [request(tmp_path / "s", "POST", path, {"model": "m", "stream": stream}) for _ in range(n)]
        usage = proxy.close_episode("e")
    return answers, usage, upstream.calls


def assert_provider_error(wire, answer, cap):
    assert answer.status == 400  # never 429 or 5xx: those start the CLIs' retry loops
    body = answer.json()
    if wire == "anthropic":
        assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
        message = body["error"]["message"]
    elif wire == "gemini":
        assert body["error"]["code"] == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
        message = body["error"]["message"]
    else:
        assert body["error"]["type"] == "invalid_request_error" and body["error"]["code"] == "budget_exceeded"
        message = body["error"]["message"]
    assert cap in message and "budget" in message


@pytest.mark.parametrize("wire", list(NATIVE))
def test_max_requests(tmp_path, wire):
    answers, usage, calls = run(tmp_path, Budget(max_requests=2), wire, 3)
    assert [a.status for a in answers] == [200, 200, 400]
    assert_provider_error(wire, answers[2], "max_requests")
    assert calls == 2  # the refused request never reached the upstream
    assert (usage.n_requests, usage.n_refused, usage.budget_exceeded) == (2, 1, "max_requests")
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (1000, 200, 200)


def test_max_tokens(tmp_path):
    # 600 per answer: admitted at 0 and 600 (< 1000), refused at 1200 (>= 1000)
    answers, usage, calls = run(tmp_path, Budget(max_tokens=1000), "openai-responses", 4)
    assert [a.status for a in answers] == [200, 200, 400, 400]
    assert_provider_error("openai-responses", answers[2], "max_tokens")
    assert (calls, usage.total_tokens, usage.n_refused, usage.budget_exceeded) == (2, 1200, 2, "max_tokens")


def test_max_cost(tmp_path):
    # $0.40 per answer: admitted at 0, 0.4, 0.8 (< 1.0), refused at 1.2
    answers, usage, calls = run(tmp_path, Budget(max_cost_usd=1.0), "gemini", 4, stream=True)
    assert [a.status for a in answers] == [200, 200, 200, 400]
    assert answers[3].headers["content-type"].startswith("application/json")  # an error, not an event stream
    assert_provider_error("gemini", answers[3], "max_cost_usd")
    assert calls == 3
    assert usage.cost_usd == pytest.approx(1.2)
    assert usage.budget_exceeded == "max_cost_usd"


def test_overshoot_by_last_response_is_marked_at_close(tmp_path):
    answers, usage, _ = run(tmp_path, Budget(max_tokens=500), "anthropic", 1)
    assert answers[0].status == 200
    assert (usage.total_tokens, usage.n_refused, usage.budget_exceeded) == (600, 0, "max_tokens")


def test_reaching_a_cap_exactly_without_asking_more_is_not_exceeding(tmp_path):
    answers, usage, _ = run(tmp_path, Budget(max_tokens=1200, max_requests=2), "openai-chat", 2)
    assert [a.status for a in answers] == [200, 200]
    assert usage.total_tokens == 1200 and usage.budget_exceeded is None


def test_refusal_is_logged(tmp_path):
    run(tmp_path, Budget(max_requests=1), "anthropic", 2)
    records = read_log(tmp_path / "p.jsonl")
    assert [r["type"] for r in records] == ["request", "response", "request", "response"]
    refusal = records[3]
    assert refusal["refused"] == "max_requests" and refusal["status"] == 400 and refusal["origin"] == "proxy"
    assert refusal["cost_usd"] == 0.0 and refusal["usage"] is None


def test_no_budget_means_no_cap(tmp_path):
    answers, usage, calls = run(tmp_path, Budget(), "openai-chat", 5)
    assert all(a.status == 200 for a in answers) and calls == 5 and usage.budget_exceeded is None
    assert usage.cost_usd == pytest.approx(5 * 0.4)


def test_head_probes_are_not_model_requests(tmp_path):
    upstream = Canned()
    with ModelProxy(upstream) as proxy:
        proxy.open_episode("e", tmp_path / "s", tmp_path / "p.jsonl", PRICES, Budget(max_requests=1))
        probes = [request(tmp_path / "s", "HEAD", "/").status for _ in range(3)]
        model = request(tmp_path / "s", "POST", "/v1/messages", {"model": "m"})
        usage = proxy.close_episode("e")
    assert probes == [200, 200, 200] and model.status == 200
    assert (usage.n_requests, usage.n_refused, usage.budget_exceeded) == (1, 0, None)

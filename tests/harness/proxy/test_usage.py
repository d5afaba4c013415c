"""Usage normalisation per provider (stream and not, cached + reasoning) and equation (1) costs.

Prices are TraceBench Table 21 (USD per 1M input / cached / output tokens).
Every expected number below is worked out by hand in the comment next to it.
"""

import json

import pytest

from harness.config import Prices
from harness.proxy import Usage, encode_event, usage_from_body, usage_from_sse
from harness.proxy.wire import StreamUsage
from harness.proxy.wire.anthropic import from_anthropic
from harness.proxy.wire.chat import from_openai_chat
from harness.proxy.wire.gemini import from_gemini
from harness.proxy.wire.responses import from_openai_responses

OPUS = Prices(input=5, cached=0.5, output=25)        # claude-opus-4.6
GEMINI = Prices(input=2, cached=0.2, output=12)      # gemini-3.1-pro
GPT = Prices(input=5, cached=0.5, output=30)         # gpt-5.5
MINIMAX = Prices(input=0.3, cached=0.059, output=1.20)  # minimax-m2.7


def sse(*events):
    return b"".join(encode_event(data, name) for name, data in events)


# -- Anthropic: input_tokens EXCLUDES cache reads and cache writes ------------------
ANTHROPIC_USAGE = {"input_tokens": 1000, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 500,
                   "output_tokens": 800}
# prompt = 1000 + 3000 + 500 = 4500; cached = 3000; completion = 800 (thinking inside, not broken out)
# cost = (1500*5 + 3000*0.5 + 800*25) / 1e6 = (7500 + 1500 + 20000) / 1e6 = 0.029
ANTHROPIC_EXPECTED = Usage(4500, 3000, 800, 0)


def test_anthropic_non_stream():
    body = {"type": "message", "content": [{"type": "thinking", "thinking": "..."}], "usage": ANTHROPIC_USAGE}
    usage = usage_from_body(body, "anthropic")
    assert usage == ANTHROPIC_EXPECTED
    assert usage.total_tokens == 5300
    assert usage.cost(OPUS) == pytest.approx(0.029, abs=1e-12)


def test_anthropic_stream_usage_split_across_message_start_and_delta():
    start_usage = {"input_tokens": 1000, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 500,
                   "output_tokens": 1}
    stream = sse(("message_start", {"type": "message_start", "message": {"id": "m", "usage": start_usage}}),
                 ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                          "delta": {"type": "text_delta", "text": "hi"}}),
                 ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                    "usage": {"output_tokens": 800}}),
                 ("message_stop", {"type": "message_stop"}))
    assert usage_from_sse(stream, "anthropic") == ANTHROPIC_EXPECTED
    # the wire format is also recognised from the events alone
    assert usage_from_sse(stream) == ANTHROPIC_EXPECTED


def test_anthropic_stream_counts_are_cumulative_not_added():
    # two message_delta events (server tools send several): the later total wins, no double count
    stream = sse(("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 10,
                                                                                     "output_tokens": 1}}}),
                 ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 40}}),
                 ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 90}}))
    assert usage_from_sse(stream, "anthropic") == Usage(10, 0, 90, 0)


def test_anthropic_stream_input_reported_only_in_message_delta():
    # Anthropic-compatible gateways send input_tokens 0 at the start and the real count at the end
    stream = sse(("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 0,
                                                                                     "output_tokens": 0}}}),
                 ("message_delta", {"type": "message_delta", "usage": {"input_tokens": 700,
                                                                        "cache_read_input_tokens": 200,
                                                                        "output_tokens": 50}}))
    assert usage_from_sse(stream, "anthropic") == Usage(900, 200, 50, 0)


# -- OpenAI Chat Completions: prompt includes cached, completion includes reasoning ----------
CHAT_USAGE = {"prompt_tokens": 5000, "completion_tokens": 1200, "total_tokens": 6200,
              "prompt_tokens_details": {"cached_tokens": 4096},
              "completion_tokens_details": {"reasoning_tokens": 900}}
# cost at gpt-5.5 = (904*5 + 4096*0.5 + 1200*30) / 1e6 = (4520 + 2048 + 36000) / 1e6 = 0.042568
CHAT_EXPECTED = Usage(5000, 4096, 1200, 900)


def test_openai_chat_non_stream():
    body = {"object": "chat.completion", "choices": [{"message": {"content": "x"}}], "usage": CHAT_USAGE}
    usage = usage_from_body(body, "openai-chat")
    assert usage == CHAT_EXPECTED
    assert usage.cost(GPT) == pytest.approx(0.042568, abs=1e-12)


def test_openai_chat_stream_usage_in_last_chunk():
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "4"}}]}
    stream = sse((None, chunk), (None, {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
                 (None, {"object": "chat.completion.chunk", "choices": [], "usage": CHAT_USAGE}), (None, "[DONE]"))
    assert usage_from_sse(stream, "openai-chat") == CHAT_EXPECTED
    assert usage_from_sse(stream) == CHAT_EXPECTED


def test_openai_chat_stream_without_usage_chunk_has_no_usage():
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "4"}}]}
    assert usage_from_sse(sse((None, chunk), (None, "[DONE]")), "openai-chat") is None


def test_chat_compatible_cache_hit_field_and_minimax_price():
    # some compatible servers report cache hits as prompt_cache_hit_tokens
    usage = from_openai_chat({"prompt_tokens": 20000, "prompt_cache_hit_tokens": 15000, "completion_tokens": 2000,
                              "completion_tokens_details": {"reasoning_tokens": 1500}})
    assert usage == Usage(20000, 15000, 2000, 1500)
    # (5000*0.3 + 15000*0.059 + 2000*1.2) / 1e6 = (1500 + 885 + 2400) / 1e6 = 0.004785
    assert usage.cost(MINIMAX) == pytest.approx(0.004785, abs=1e-12)


# -- OpenAI Responses: input includes cached, output includes reasoning ---------------------
RESPONSES_USAGE = {"input_tokens": 7000, "input_tokens_details": {"cached_tokens": 6000},
                   "output_tokens": 2500, "output_tokens_details": {"reasoning_tokens": 2000}, "total_tokens": 9500}
# cost at gpt-5.5 = (1000*5 + 6000*0.5 + 2500*30) / 1e6 = (5000 + 3000 + 75000) / 1e6 = 0.083
RESPONSES_EXPECTED = Usage(7000, 6000, 2500, 2000)


def test_openai_responses_non_stream():
    body = {"id": "resp_1", "object": "response", "output": [], "usage": RESPONSES_USAGE}
    usage = usage_from_body(body, "openai-responses")
    assert usage == RESPONSES_EXPECTED
    assert usage.cost(GPT) == pytest.approx(0.083, abs=1e-12)
    assert usage_from_body(body) == RESPONSES_EXPECTED


def test_openai_responses_stream_usage_in_response_completed():
    stream = sse(("response.created", {"type": "response.created", "response": {"id": "r", "usage": None}}),
                 ("response.output_text.delta", {"type": "response.output_text.delta", "delta": "hi"}),
                 ("response.completed", {"type": "response.completed",
                                         "response": {"id": "r", "usage": RESPONSES_USAGE}}))
    assert usage_from_sse(stream, "openai-responses") == RESPONSES_EXPECTED
    assert usage_from_sse(stream) == RESPONSES_EXPECTED


def test_openai_responses_incomplete_response_still_counts():
    stream = sse(("response.incomplete", {"type": "response.incomplete",
                                          "response": {"id": "r", "usage": RESPONSES_USAGE}}))
    assert usage_from_sse(stream, "openai-responses") == RESPONSES_EXPECTED


# -- Gemini: prompt includes cached, candidates EXCLUDE thoughts -----------------------------
GEMINI_META = {"promptTokenCount": 10000, "cachedContentTokenCount": 8000, "candidatesTokenCount": 300,
               "thoughtsTokenCount": 700, "totalTokenCount": 11000}
# completion = 300 + 700 = 1000; reasoning = 700
# cost at gemini-3.1-pro = (2000*2 + 8000*0.2 + 1000*12) / 1e6 = (4000 + 1600 + 12000) / 1e6 = 0.0176
GEMINI_EXPECTED = Usage(10000, 8000, 1000, 700)


def test_gemini_non_stream():
    body = {"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP"}],
            "usageMetadata": GEMINI_META}
    usage = usage_from_body(body, "gemini")
    assert usage == GEMINI_EXPECTED
    assert usage.total_tokens == 11000 == GEMINI_META["totalTokenCount"]
    assert usage.cost(GEMINI) == pytest.approx(0.0176, abs=1e-12)


def test_gemini_stream_last_usage_metadata_wins():
    partial = {"promptTokenCount": 10000, "candidatesTokenCount": 5, "totalTokenCount": 10005}
    stream = sse((None, {"candidates": [{"content": {"parts": [{"text": "a", "thought": True}]}}],
                         "usageMetadata": partial}),
                 (None, {"candidates": [{"content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}],
                         "usageMetadata": GEMINI_META}))
    assert usage_from_sse(stream, "gemini") == GEMINI_EXPECTED
    assert usage_from_sse(stream) == GEMINI_EXPECTED


def test_gemini_stream_as_json_array():
    # streamGenerateContent without alt=sse answers a JSON array of chunks
    body = [{"candidates": [{"content": {"parts": [{"text": "a"}]}}]},
            {"candidates": [{"content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}],
             "usageMetadata": GEMINI_META}]
    assert usage_from_body(body, "gemini") == GEMINI_EXPECTED


def test_gemini_tool_use_prompt_tokens_are_input():
    assert from_gemini({"promptTokenCount": 100, "toolUsePromptTokenCount": 40, "candidatesTokenCount": 10}) == \
        Usage(140, 0, 10, 0)


# -- general ----------------------------------------------------------------------------------
def test_missing_and_null_fields_read_as_zero():
    assert from_anthropic({"input_tokens": 5, "cache_read_input_tokens": None, "output_tokens": 2}) == Usage(5, 0, 2, 0)
    assert from_openai_chat({"prompt_tokens": 5, "completion_tokens": 2, "prompt_tokens_details": None}) == \
        Usage(5, 0, 2, 0)
    assert from_openai_responses({"input_tokens": 5}) == Usage(5, 0, 0, 0)
    assert usage_from_body({"choices": []}, "openai-chat") is None
    assert usage_from_body("not a body") is None


def test_usage_sums_and_episode_cost_is_sum_of_response_costs():
    total = ANTHROPIC_EXPECTED + ANTHROPIC_EXPECTED
    assert total == Usage(9000, 6000, 1600, 0)
    assert total.cost(OPUS) == pytest.approx(2 * 0.029, abs=1e-12)
    assert total.to_dict()["total_tokens"] == 10600


def test_stream_usage_ignores_non_json_and_unknown_events():
    acc = StreamUsage()
    acc.feed_object("[DONE]")
    acc.feed_object({"hello": "world"})
    assert acc.result() is None
    acc.feed_object({"type": "response.completed", "response": {"usage": RESPONSES_USAGE}})
    assert acc.wire == "openai-responses"
    assert acc.result() == RESPONSES_EXPECTED


def test_body_shape_detection_for_unknown_paths():
    assert usage_from_body(json.loads(json.dumps({"type": "message", "usage": ANTHROPIC_USAGE}))) == ANTHROPIC_EXPECTED
    assert usage_from_body({"object": "chat.completion", "choices": [], "usage": CHAT_USAGE}) == CHAT_EXPECTED
    assert usage_from_body({"candidates": [], "usageMetadata": GEMINI_META}) == GEMINI_EXPECTED

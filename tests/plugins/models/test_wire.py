"""Scripted backend round trips through the proxy, in the four wire formats the CLIs use.

Each request below is shaped like the real CLI's (tool list, streaming flags);
the streamed answers are reassembled the way a client does it, so the test
checks the event sequences, not just that bytes came back.
"""

import json
import math

import pytest

from harness.config import Budget, Prices
from harness.proxy import DUMMY_API_KEY, ModelProxy, parse_sse, read_log
from harness.proxy.client import request, stream_answer
from tsagent_plugins.models.script_format import parse_script
from tsagent_plugins.models.scripted import ScriptedUpstream

SHELL = "python3 -c 'print(6*7)'"
PROMPT = "Compute six times seven with Python."
PRICES = Prices(input=5, cached=0.5, output=25)
USAGE = {"prompt_tokens": 1200, "cached_tokens": 1000, "completion_tokens": 80, "reasoning_tokens": 30}

CLAUDE_TOOLS = [
    {"name": "Bash", "description": "Run a command", "input_schema": {
        "type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"},
                                         "timeout": {"type": "number"}}, "required": ["command"]}},
    {"name": "Write", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"},
                                                                        "content": {"type": "string"}}}},
]
CODEX_TOOLS = [
    {"type": "function", "name": "exec_command", "parameters": {
        "type": "object", "properties": {"cmd": {"type": "string"}, "workdir": {"type": "string"}},
        "required": ["cmd"]}},
    {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
]
GEMINI_TOOLS = [{"functionDeclarations": [
    {"name": "read_file", "parametersJsonSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
    {"name": "run_shell_command", "parametersJsonSchema": {
        "type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"},
                                         "dir_path": {"type": "string"}}, "required": ["command"]}}]}]
OPENCODE_TOOLS = [{"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}, "description": {"type": "string"},
                                     "timeout": {"type": "number"}}, "required": ["command", "description"]}}}]


def open_proxy(tmp_path, script):
    upstream = ScriptedUpstream(parse_script(script))
    proxy = ModelProxy(upstream).start()
    proxy.open_episode("e", tmp_path / "s", tmp_path / "proxy.jsonl", PRICES, Budget())
    return proxy, upstream, tmp_path / "s"


def post_stream(sock, path, body, headers=None):
    status, hdrs, pieces = stream_answer(sock, "POST", path, body, headers)
    return status, hdrs, b"".join(p for _, p in pieces)


# -- client-side reassembly ---------------------------------------------------------------
def assemble_anthropic(raw):
    events = parse_sse(raw)
    names = [e.event for e in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    blocks, stop, usage = [], None, {}
    for e in events:
        d = e.json()
        assert d["type"] == e.event
        if e.event == "message_start":
            usage.update(d["message"]["usage"])
        elif e.event == "content_block_start":
            assert d["index"] == len(blocks)
            blocks.append({**d["content_block"], "_json": ""})
        elif e.event == "content_block_delta":
            b, delta = blocks[d["index"]], d["delta"]
            if delta["type"] == "text_delta":
                b["text"] += delta["text"]
            elif delta["type"] == "thinking_delta":
                b["thinking"] += delta["thinking"]
            elif delta["type"] == "signature_delta":
                b["signature"] = delta["signature"]
            elif delta["type"] == "input_json_delta":
                b["_json"] += delta["partial_json"]
        elif e.event == "content_block_stop":
            b = blocks[d["index"]]
            if b["type"] == "tool_use":
                b["input"] = json.loads(b["_json"])
        elif e.event == "message_delta":
            stop = d["delta"]["stop_reason"]
            usage.update(d["usage"])
    for b in blocks:
        b.pop("_json")
    return blocks, stop, usage


def assemble_chat(raw):
    events = parse_sse(raw)
    assert events[-1].data == "[DONE]"
    text, reasoning, calls, finish, usage = "", "", {}, None, None
    for e in events[:-1]:
        d = e.json()
        assert d["object"] == "chat.completion.chunk"
        if d.get("usage"):
            assert d["choices"] == []
            usage = d["usage"]
        for ch in d["choices"]:
            delta = ch["delta"]
            text += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or ""
            for tc in delta.get("tool_calls") or []:
                slot = calls.setdefault(tc["index"], {"id": None, "name": None, "arguments": ""})
                slot["id"] = tc.get("id") or slot["id"]
                slot["name"] = (tc.get("function") or {}).get("name") or slot["name"]
                slot["arguments"] += (tc.get("function") or {}).get("arguments") or ""
            finish = ch["finish_reason"] or finish
    return text, reasoning, [calls[i] for i in sorted(calls)], finish, usage


def assemble_responses(raw):
    events = parse_sse(raw)
    assert events[0].event == "response.created"
    assert [d.json()["sequence_number"] for d in events] == list(range(len(events)))
    done = [e.json()["item"] for e in events if e.event == "response.output_item.done"]
    completed = events[-1].json()
    assert events[-1].event == completed["type"]
    deltas = "".join(e.json()["delta"] for e in events if e.event == "response.output_text.delta")
    return done, completed["response"], deltas


def assemble_gemini(raw):
    chunks = [e.json() for e in parse_sse(raw)]
    parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
    assert "finishReason" in chunks[-1]["candidates"][0]
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    return parts, chunks[-1]["candidates"][0]["finishReason"], chunks[-1]["usageMetadata"]


# -- Claude Code: Anthropic Messages ------------------------------------------------------------
def claude_request(messages, stream=True):
    return {"model": "claude-opus-4-6", "max_tokens": 32000, "stream": stream, "system": [
        {"type": "text", "text": "You are Claude Code."}], "tools": CLAUDE_TOOLS, "messages": messages,
        "thinking": {"type": "enabled", "budget_tokens": 10000}}


CLAUDE_HEADERS = {"x-api-key": DUMMY_API_KEY, "anthropic-version": "2023-06-01"}


def test_claude_code_round_trip(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, {"turns": [
        {"reasoning": "Use python.", "text": "Running it.", "tool_calls": [{"shell": SHELL}], "usage": USAGE,
         "expect": {"contains": PROMPT, "auth": "dummy", "model": "claude-opus-4-6",
                    "header": {"anthropic-version": "2023-06-01"}, "body_path": {"tools.0.name": "Bash"}}},
        {"expect": {"last_tool_result_contains": "42"}, "text": "The answer is 42.", "usage": USAGE},
    ]})
    first = [{"role": "user", "content": [{"type": "text", "text": PROMPT}]}]
    status, hdrs, raw = post_stream(sock, "/v1/messages?beta=true", claude_request(first), CLAUDE_HEADERS)
    assert status == 200 and hdrs["content-type"].startswith("text/event-stream")
    blocks, stop, usage = assemble_anthropic(raw)
    assert [b["type"] for b in blocks] == ["thinking", "text", "tool_use"]
    assert blocks[0]["thinking"] == "Use python." and blocks[0]["signature"]
    assert blocks[1]["text"] == "Running it."
    tool = blocks[2]
    assert tool["name"] == "Bash" and tool["id"].startswith("toolu_")
    assert tool["input"] == {"command": SHELL, "description": f"Run: {SHELL}"}
    assert stop == "tool_use"
    # Anthropic's own fields: input excludes the cache read
    assert (usage["input_tokens"], usage["cache_read_input_tokens"], usage["output_tokens"]) == (200, 1000, 80)

    second = first + [{"role": "assistant", "content": blocks},
                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool["id"],
                                                    "content": [{"type": "text", "text": "42\n"}]}]}]
    blocks, stop, _ = assemble_anthropic(post_stream(sock, "/v1/messages?beta=true", claude_request(second),
                                                     CLAUDE_HEADERS)[2])
    assert [b["text"] for b in blocks] == ["The answer is 42."] and stop == "end_turn"
    # turns are exhausted: a plain "done"
    final = request(sock, "POST", "/v1/messages", claude_request(second, stream=False), CLAUDE_HEADERS).json()
    assert final["content"] == [{"type": "text", "text": "done"}] and final["stop_reason"] == "end_turn"
    usage = proxy.close_episode("e")
    proxy.stop()
    assert usage.assertion_failures == [] and upstream.turns_used("e") == 2
    # two scripted turns of (1200, 1000, 80) plus the final answer's computed usage
    records = read_log(tmp_path / "proxy.jsonl")
    final_usage = records[-1]["usage"]
    assert final_usage["completion_tokens"] == 1  # ceil(len("done") / 4)
    assert usage.prompt_tokens == 2400 + final_usage["prompt_tokens"]
    assert usage.cached_tokens == 2000 and usage.completion_tokens == 161
    assert usage.reasoning_tokens == 0  # Anthropic does not break thinking out of output_tokens


def test_anthropic_non_stream_tool_call(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"tool_calls": [{"name": "Write", "arguments": {
        "file_path": "/workspace/results.json", "content": "{}"}}]}])
    body = request(sock, "POST", "/v1/messages", claude_request([{"role": "user", "content": "go"}], stream=False))
    proxy.stop()
    msg = body.json()
    assert msg["type"] == "message" and msg["stop_reason"] == "tool_use"
    assert msg["content"] == [{"type": "tool_use", "id": "toolu_scripted_1_1", "name": "Write",
                               "input": {"file_path": "/workspace/results.json", "content": "{}"}}]


# -- Codex: OpenAI Responses ---------------------------------------------------------------------
def codex_request(items, tools=CODEX_TOOLS, stream=True):
    return {"model": "gpt-5.5", "instructions": "You are Codex.", "input": items, "tools": tools,
            "reasoning": {"effort": "high", "summary": "auto"}, "stream": stream, "store": False}


def test_codex_round_trip(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, [
        {"reasoning": "Plan: run python.", "tool_calls": [{"shell": SHELL}], "usage": USAGE,
         "expect": {"contains": PROMPT, "reasoning_effort": "high", "model": "gpt-5.5", "auth": "dummy",
                    "wire": "openai-responses"}},
        {"expect": {"last_tool_result_contains": "42"}, "text": "It is 42.", "usage": USAGE},
    ])
    first = [{"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]}]
    status, _, raw = post_stream(sock, "/v1/responses", codex_request(first),
                                 {"authorization": f"Bearer {DUMMY_API_KEY}"})
    assert status == 200
    items, response, _ = assemble_responses(raw)
    assert [i["type"] for i in items] == ["reasoning", "function_call"]
    assert items[0]["summary"] == [{"type": "summary_text", "text": "Plan: run python."}]
    call = items[1]
    assert call["name"] == "exec_command" and json.loads(call["arguments"]) == {"cmd": SHELL}
    assert response["id"].startswith("resp_") and response["status"] == "completed"
    assert response["usage"] == {"input_tokens": 1200, "input_tokens_details": {"cached_tokens": 1000},
                                 "output_tokens": 80, "output_tokens_details": {"reasoning_tokens": 30},
                                 "total_tokens": 1280}
    second = first + items + [{"type": "function_call_output", "call_id": call["call_id"],
                               "output": "Process exited with code 0\nOutput:\n42\n"}]
    items, response, deltas = assemble_responses(post_stream(sock, "/v1/responses", codex_request(second))[2])
    assert items == [{"type": "message", "id": items[0]["id"], "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": "It is 42.", "annotations": []}]}]
    assert deltas == "It is 42."
    usage = proxy.close_episode("e")
    proxy.stop()
    assert usage.assertion_failures == []
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.reasoning_tokens) == \
        (2400, 2000, 160, 60)
    # 2 x (200*5 + 1000*0.5 + 80*25)/1e6 = 2 x 0.0035
    assert usage.cost_usd == pytest.approx(0.007)


@pytest.mark.parametrize("tools,kind,expected", [
    ([{"type": "function", "name": "shell", "parameters": {"type": "object", "properties": {
        "command": {"type": "array", "items": {"type": "string"}}, "workdir": {"type": "string"}}}}],
     "function_call", {"command": ["bash", "-lc", SHELL]}),
    ([{"type": "local_shell"}], "local_shell_call", ["bash", "-lc", SHELL]),
])
def test_codex_shell_tool_variants(tmp_path, tools, kind, expected):
    proxy, _, sock = open_proxy(tmp_path, [{"tool_calls": [{"shell": SHELL}]}])
    items, _, _ = assemble_responses(post_stream(sock, "/v1/responses", codex_request([], tools=tools))[2])
    proxy.stop()
    assert items[0]["type"] == kind
    got = json.loads(items[0]["arguments"]) if kind == "function_call" else items[0]["action"]["command"]
    assert got == expected


def test_responses_non_stream_and_incomplete(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"text": "cut", "stop_reason": "max_output_tokens"}])
    body = request(sock, "POST", "/v1/responses", codex_request([], stream=False)).json()
    proxy.stop()
    assert body["object"] == "response" and body["status"] == "incomplete"
    assert body["incomplete_details"] == {"reason": "max_output_tokens"}
    assert body["output"][0]["content"][0]["text"] == "cut"


# -- Gemini CLI ----------------------------------------------------------------------------------
def gemini_request(contents):
    return {"contents": contents, "systemInstruction": {"role": "user", "parts": [{"text": "You are Gemini CLI."}]},
            "tools": GEMINI_TOOLS, "generationConfig": {"thinkingConfig": {"thinkingLevel": "HIGH",
                                                                           "includeThoughts": True}}}


GEMINI_PATH = "/v1beta/models/gemini-3.1-pro:streamGenerateContent?alt=sse"


def test_gemini_cli_round_trip(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, {
        "match": [{"when": {"model": "gemini-2.5-flash-lite"}, "reply": {"text": '{"model_choice": "pro"}'}}],
        "turns": [
            {"reasoning": "I will use the shell.", "text": "Running.", "tool_calls": [{"shell": SHELL}],
             "usage": USAGE, "expect": {"contains": PROMPT, "model": "gemini-3.1-pro", "reasoning_effort": "high",
                                        "auth": "dummy"}},
            {"expect": {"last_tool_result_contains": "42"}, "text": "42 it is.", "usage": USAGE}]})
    headers = {"x-goog-api-key": DUMMY_API_KEY}
    # a routing call to another model is answered by the match rule and consumes no turn
    routing = request(sock, "POST", "/v1beta/models/gemini-2.5-flash-lite:generateContent",
                      gemini_request([{"role": "user", "parts": [{"text": "route"}]}]), headers).json()
    assert routing["candidates"][0]["content"]["parts"] == [{"text": '{"model_choice": "pro"}'}]
    assert routing["candidates"][0]["finishReason"] == "STOP"
    first = [{"role": "user", "parts": [{"text": PROMPT}]}]
    status, hdrs, raw = post_stream(sock, GEMINI_PATH, gemini_request(first), headers)
    assert status == 200 and hdrs["content-type"].startswith("text/event-stream")
    parts, finish, meta = assemble_gemini(raw)
    thought = "".join(p["text"] for p in parts if p.get("thought"))
    text = "".join(p["text"] for p in parts if "text" in p and not p.get("thought"))
    calls = [p["functionCall"] for p in parts if "functionCall" in p]
    assert (thought, text, finish) == ("I will use the shell.", "Running.", "STOP")
    assert calls == [{"name": "run_shell_command", "args": {"command": SHELL, "description": f"Run: {SHELL}"}}]
    # Gemini's own fields: candidates exclude thoughts
    assert meta == {"promptTokenCount": 1200, "cachedContentTokenCount": 1000, "candidatesTokenCount": 50,
                    "thoughtsTokenCount": 30, "totalTokenCount": 1280}
    second = first + [{"role": "model", "parts": [{"functionCall": calls[0]}]},
                      {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                                       "response": {"output": "42\n"}}}]}]
    parts, finish, _ = assemble_gemini(post_stream(sock, GEMINI_PATH, gemini_request(second), headers)[2])
    assert "".join(p["text"] for p in parts) == "42 it is." and finish == "STOP"
    usage = proxy.close_episode("e")
    proxy.stop()
    assert upstream.turns_used("e") == 2 and usage.assertion_failures == []
    assert usage.n_requests == 3
    assert (usage.cached_tokens, usage.reasoning_tokens) == (2000, 60)


def test_gemini_stream_without_sse_is_a_json_array(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"text": "a" * 40, "chunk_size": 16}])
    chunks = request(sock, "POST", "/v1beta/models/g:streamGenerateContent",
                     gemini_request([{"role": "user", "parts": [{"text": "hi"}]}])).json()
    proxy.stop()
    assert isinstance(chunks, list) and len(chunks) == 3
    assert "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks) == "a" * 40
    assert chunks[-1]["candidates"][0]["finishReason"] == "STOP" and "usageMetadata" in chunks[-1]


# -- OpenCode: OpenAI Chat Completions --------------------------------------------------------
def opencode_request(messages, tools=OPENCODE_TOOLS, stream=True):
    body = {"model": "scripted-model", "messages": messages, "stream": stream}
    if stream:
        body["stream_options"] = {"include_usage": True}
    if tools:
        body["tools"] = tools
    return body


def test_opencode_round_trip(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, {
        "match": [{"when": {"no_tools": True}, "reply": {"text": "Six times seven"}}],
        "turns": [
            {"reasoning": "Shell it.", "tool_calls": [{"shell": SHELL}], "usage": USAGE,
             "expect": {"contains": PROMPT, "body_path": {"stream_options.include_usage": True}, "auth": "dummy"}},
            {"expect": {"last_tool_result_contains": "42"}, "text": "The result is 42.", "usage": USAGE}]})
    headers = {"authorization": f"Bearer {DUMMY_API_KEY}"}
    user = [{"role": "user", "content": PROMPT}]
    # the session-title request (no tools) does not consume a turn
    text, _, calls, finish, _ = assemble_chat(post_stream(sock, "/v1/chat/completions",
                                                          opencode_request(user, tools=None), headers)[2])
    assert (text, calls, finish) == ("Six times seven", [], "stop")
    text, reasoning, calls, finish, usage = assemble_chat(
        post_stream(sock, "/v1/chat/completions", opencode_request(user), headers)[2])
    assert (text, reasoning, finish) == ("", "Shell it.", "tool_calls")
    assert len(calls) == 1 and calls[0]["name"] == "bash" and calls[0]["id"].startswith("call_")
    assert json.loads(calls[0]["arguments"]) == {"command": SHELL, "description": f"Run: {SHELL}"}
    assert usage == {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
                     "prompt_tokens_details": {"cached_tokens": 1000},
                     "completion_tokens_details": {"reasoning_tokens": 30}}
    follow = user + [{"role": "assistant", "content": None, "tool_calls": [
        {"id": calls[0]["id"], "type": "function", "function": {"name": "bash", "arguments": calls[0]["arguments"]}}]},
        {"role": "tool", "tool_call_id": calls[0]["id"], "content": "42\n"}]
    text, _, _, finish, _ = assemble_chat(post_stream(sock, "/v1/chat/completions", opencode_request(follow),
                                                      headers)[2])
    assert (text, finish) == ("The result is 42.", "stop")
    usage = proxy.close_episode("e")
    proxy.stop()
    assert upstream.turns_used("e") == 2 and usage.assertion_failures == []
    assert usage.completion_tokens >= 160 and usage.cached_tokens == 2000


def test_chat_non_stream(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"text": "hello", "tool_calls": [{"shell": "ls"}]}])
    body = request(sock, "POST", "/v1/chat/completions", opencode_request([{"role": "user", "content": "x"}],
                                                                          stream=False)).json()
    proxy.stop()
    msg = body["choices"][0]["message"]
    assert body["object"] == "chat.completion" and body["choices"][0]["finish_reason"] == "tool_calls"
    assert msg["content"] == "hello"
    assert msg["tool_calls"][0]["function"] == {"name": "bash",
                                                "arguments": json.dumps({"command": "ls", "description": "Run: ls"})}


# -- usage round trip and defaults ------------------------------------------------------------
FORMAT_REQUESTS = {
    "anthropic": ("/v1/messages", claude_request([{"role": "user", "content": "x"}])),
    "openai-responses": ("/v1/responses", codex_request([])),
    "gemini": (GEMINI_PATH, gemini_request([])),
    "openai-chat": ("/v1/chat/completions", opencode_request([{"role": "user", "content": "x"}])),
}


@pytest.mark.parametrize("wire", list(FORMAT_REQUESTS))
@pytest.mark.parametrize("stream", [True, False])
def test_scripted_usage_reads_back_exactly_through_the_proxy(tmp_path, wire, stream):
    path, body = FORMAT_REQUESTS[wire]
    if not stream:
        body = {**body, "stream": False}
        path = path.replace("streamGenerateContent?alt=sse", "generateContent")
    proxy, _, sock = open_proxy(tmp_path, [{"text": "ok", "reasoning": "hm", "usage": USAGE}])
    assert request(sock, "POST", path, body).status == 200
    usage = proxy.close_episode("e")
    proxy.stop()
    reasoning = 0 if wire == "anthropic" else 30
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens, usage.reasoning_tokens) == \
        (1200, 1000, 80, reasoning)
    assert usage.cost_usd == pytest.approx((200 * 5 + 1000 * 0.5 + 80 * 25) / 1e6)


def test_default_usage_is_computed_from_sizes(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"text": "x" * 40, "reasoning": "y" * 21}])
    body = opencode_request([{"role": "user", "content": "z" * 100}])
    request(sock, "POST", "/v1/chat/completions", body)
    usage = proxy.close_episode("e")
    proxy.stop()
    sent = len(json.dumps(body).encode())  # the client helper sends json.dumps(body)
    assert usage.prompt_tokens == math.ceil(sent / 4)
    assert usage.reasoning_tokens == 6  # ceil(21 / 4)
    assert usage.completion_tokens == 10 + 6  # ceil(40 / 4) + reasoning
    assert usage.cached_tokens == 0


# -- failures ------------------------------------------------------------------------------------
def test_failed_assertion_answers_400_records_and_keeps_the_turn(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, [{"expect": {"contains": "needle", "model": "claude-opus-4-6"},
                                                   "text": "found"}])
    bad = request(sock, "POST", "/v1/messages", claude_request([{"role": "user", "content": "hay"}]))
    assert bad.status == 400
    message = bad.json()["error"]["message"]
    assert message == "scripted turn 1: contains: 'needle' not found in the request's messages"
    good = claude_request([{"role": "user", "content": "a needle"}], stream=False)
    assert request(sock, "POST", "/v1/messages", good).json()["content"][0]["text"] == "found"
    usage = proxy.close_episode("e")
    proxy.stop()
    assert usage.assertion_failures == [message] and upstream.failures("e") == [message]
    assert read_log(tmp_path / "proxy.jsonl")[1]["assertion_failure"] == message


@pytest.mark.parametrize("wire", list(FORMAT_REQUESTS))
def test_failed_assertion_uses_each_provider_error_format(tmp_path, wire):
    path, body = FORMAT_REQUESTS[wire]
    proxy, _, sock = open_proxy(tmp_path, [{"expect": {"model": "nope"}}])
    answer = request(sock, "POST", path, body)
    proxy.stop()
    assert answer.status == 400
    err = answer.json()
    if wire == "anthropic":
        assert err["type"] == "error" and "model: expected 'nope'" in err["error"]["message"]
    elif wire == "gemini":
        assert err["error"]["status"] == "INVALID_ARGUMENT" and "model: expected 'nope'" in err["error"]["message"]
    else:
        assert err["error"]["type"] == "invalid_request_error" and "model: expected 'nope'" in err["error"]["message"]


def test_shell_call_without_a_shell_tool_fails_naming_the_offered_tools(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"tool_calls": [{"shell": "ls"}]}])
    answer = request(sock, "POST", "/v1/messages", claude_request([], stream=False) | {"tools": CLAUDE_TOOLS[1:]})
    usage = proxy.close_episode("e")
    proxy.stop()
    assert answer.status == 400
    assert "offers no shell tool" in usage.assertion_failures[0] and "offered: Write" in usage.assertion_failures[0]


def test_explicit_tool_not_offered_fails(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"tool_calls": [{"name": "Edit", "arguments": {}}]}])
    request(sock, "POST", "/v1/messages", claude_request([], stream=False))
    usage = proxy.close_episode("e")
    proxy.stop()
    assert usage.assertion_failures == ["scripted turn 1: the script calls tool 'Edit' but the request does not "
                                        "offer it (offered: Bash, Write)"]


def test_auth_dummy_catches_a_real_key_without_quoting_it(tmp_path, monkeypatch):
    canary = "sk-ant-canary-scripted-5521"
    monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
    proxy, _, sock = open_proxy(tmp_path, [{"expect": {"auth": "dummy"}}, {"expect": {"auth": "dummy"}}])
    assert request(sock, "POST", "/v1/messages", claude_request([]), {"x-api-key": canary}).status == 400
    assert request(sock, "POST", "/v1/messages", claude_request([]), {"x-api-key": DUMMY_API_KEY}).status == 200
    no_key = request(sock, "POST", "/v1/messages", claude_request([]))
    usage = proxy.close_episode("e")
    proxy.stop()
    assert no_key.status == 400
    assert usage.assertion_failures[0] == ("scripted turn 1: auth: the request carries the real host key from "
                                           "ANTHROPIC_API_KEY, not a dummy")
    assert usage.assertion_failures[1] == "scripted turn 2: auth: the request carries no API key"
    assert canary not in (tmp_path / "proxy.jsonl").read_text()


def test_error_turn_uses_provider_format_and_is_recorded(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"error": {"status": 529, "message": "overloaded"}}, {"text": "back"}])
    first = request(sock, "POST", "/v1/messages", claude_request([], stream=False))
    second = request(sock, "POST", "/v1/messages", claude_request([], stream=False))
    usage = proxy.close_episode("e")
    proxy.stop()
    assert first.status == 529 and first.json()["error"] == {"type": "overloaded_error", "message": "overloaded"}
    assert second.json()["content"][0]["text"] == "back"
    assert [(e.kind, e.status) for e in usage.errors] == [("upstream_error", 529)]


def test_unknown_path_is_404_and_listed(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, [])
    answer = request(sock, "GET", "/v1/models", None)
    proxy.stop()
    assert answer.status == 404 and upstream.unhandled("e") == ["GET /v1/models"]


def test_final_reply_is_configurable(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, {"final": {"text": "bye", "stop_reason": "max_tokens"}})
    msg = request(sock, "POST", "/v1/messages", claude_request([], stream=False)).json()
    proxy.stop()
    assert msg["content"][0]["text"] == "bye" and msg["stop_reason"] == "max_tokens"


def test_scripted_stream_is_paced_and_relayed_unbuffered(tmp_path):
    proxy, _, sock = open_proxy(tmp_path, [{"text": "x" * 160, "chunk_size": 16, "chunk_delay": 0.08}])
    status, _, pieces = stream_answer(sock, "POST", "/v1/chat/completions",
                                      opencode_request([{"role": "user", "content": "x"}]))
    proxy.stop()
    assert status == 200
    # 10 text deltas + role/finish/usage/DONE frames, 0.08 s apart: ~1.1 s from first to last; a buffering relay
    # would hand them over at once, at the end (the first piece's delay after t0 is the machine's load, not the relay)
    assert pieces[-1][0] - pieces[0][0] > 0.8
    assert len(pieces) >= 10

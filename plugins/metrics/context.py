"""The input context of each LLM call, split into console output and the rest (Appendix G.2).

Console output is what tools returned; it reaches the model inside the next
requests' input context.  :func:`context_blocks` splits one request body into
``(text, is_console)`` blocks with the request's wire format
(:meth:`harness.WireFormat.context_blocks`; each format's module says what is
console output in it: Anthropic ``tool_result`` blocks, OpenAI Chat ``role:
"tool"`` messages, OpenAI Responses ``*_call_output`` items, Gemini
``functionResponse`` parts).

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

The log is the episode's :attr:`harness.EpisodeArtifacts.proxy_records`
(``proxy.jsonl`` read once per episode).  What is read of it: request
lines (``kind`` or ``type`` = ``"request"``) with ``path``, optional ``wire``
and ``body`` (a JSON object; a string body is parsed as JSON when it can be);
response lines (``"response"``) with ``seq`` (the request's), ``status``, ``ts``, ``usage`` {``prompt_tokens``,
``cached_tokens``, ``completion_tokens``, ``reasoning_tokens``} and
``cost_usd``.  Broken lines are skipped and counted.
"""

from __future__ import annotations

import json
from typing import Any

from harness.wire import ProxyRecords, is_completion, wire_format
from harness.wire import WireBlock as Block


def request_body(record: dict) -> Any:
    body = record.get("body")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return body


def context_blocks(body: Any, wire: str, memo: dict | None = None) -> list[Block]:
    """``(text, is_console)`` blocks of one request's input context (see the module docstring): the wire
    format's blocks, then the tool definitions (``tools``, as JSON); none for an unknown wire.

    ``memo`` (optional, shared across the requests of one episode) keeps the
    serialized tool calls by their id: every later request repeats them.
    """
    fmt = wire_format(wire)
    if not isinstance(body, dict) or fmt is None:
        return []
    blocks = fmt.context_blocks(body, {} if memo is None else memo)
    tools = body.get("tools")
    if tools:
        blocks.append((json.dumps(tools, ensure_ascii=False), False))
    return blocks


def context_tokens(calls: list[tuple[dict, Any]], wires: list[str], count) -> tuple[int, int]:
    """(console tokens, input-context tokens) summed over ``calls`` (``(record, body)``, with their ``wires``);
    ``count(text)`` tokenizes one text.  The same sums as counting every block of :func:`context_blocks` of
    every call, computed incrementally so that the work grows with the conversation, not its square:

    - every format's context is the blocks of the body without its conversation list (the format's first
      ``completion_keys`` member: ``messages``, ``input``, ``contents``) followed by each conversation item's
      blocks, item by item (``tests/plugins/metrics/test_context.py`` checks it on each format);
    - a call whose leading conversation items equal (``==``) the previous call's reuses their cumulative
      console and total tokens, and only its new items are tokenized; a body without the conversation equal
      to the previous call's (system prompt, tool definitions) reuses its tokens too.

    Choice: items are compared with Python ``==``, for which ``1``, ``1.0`` and ``true`` are equal; a client
    resending an earlier message with a number turned into an equal boolean would keep the earlier count.
    Clients resend their history verbatim.
    """
    console = total = 0
    memo: dict = {}
    head_of, head_sums = None, (0, 0)
    previous: list | None = None
    sums: list[tuple[int, int]] = [(0, 0)]  # cumulative (console, total) of previous[:i]
    where: tuple | None = None

    def blocks_sums(body: Any, wire: str) -> tuple[int, int]:
        c = t = 0
        for text, is_console in context_blocks(body, wire, memo):
            n = count(text)
            t += n
            if is_console:
                c += n
        return c, t

    for (_, body), wire in zip(calls, wires):
        fmt = wire_format(wire)
        key = fmt.completion_keys[0] if fmt is not None and fmt.completion_keys else None
        items = body.get(key) if isinstance(body, dict) and key is not None else None
        if not isinstance(items, list):
            c, t = blocks_sums(body, wire)
            console, total, previous, head_of = console + c, total + t, None, None
            continue
        head = {k: v for k, v in body.items() if k != key}
        if head_of is None or head_of[0] != wire or head_of[1] != head:
            head_of, head_sums = (wire, head), blocks_sums(head, wire)
        same = 0
        if previous is not None and where == (wire, key):
            if len(items) >= len(previous) and items[:len(previous)] == previous:
                same = len(previous)
            else:
                while same < min(len(items), len(previous)) and items[same] == previous[same]:
                    same += 1
        del sums[same + 1:]
        for item in items[same:]:
            c, t = blocks_sums({key: [item]}, wire)
            sums.append((sums[-1][0] + c, sums[-1][1] + t))
        previous, where = items, (wire, key)
        console += head_sums[0] + sums[-1][0]
        total += head_sums[1] + sums[-1][1]
    return console, total


def is_llm_call(record: dict, body: Any) -> bool:
    """A request that asks a model for a completion (not a model listing or a token count):
    :func:`harness.is_completion`."""
    return is_completion(record.get("method"), record.get("path"), body)


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

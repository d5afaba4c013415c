"""The console-share sums computed incrementally (each conversation item tokenized once, the cumulative sums
reused by the next call) equal the sums over every block of every call, for each wire format; the work grows
linearly with the conversation."""

from __future__ import annotations

import pytest

from tsagent_plugins.metrics.context import context_blocks, context_tokens
from tsagent_plugins.metrics.tokenizer import get_tokenizer

#: one conversation item per wire format: (step i) -> (assistant call item, console item); plus the body
FORMATS = {
    "anthropic": ("messages", {"system": [{"type": "text", "text": "You are an analyst."}], "model": "m",
                               "tools": [{"name": "Bash", "input_schema": {"type": "object"}}]},
                  lambda i: ({"role": "assistant", "content": [{"type": "text", "text": f"step {i}"},
                                                               {"type": "tool_use", "id": f"t{i}", "name": "Bash",
                                                                "input": {"command": f"python run.py {i}"}}]},
                             {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                           "content": f"{i}.5 {i * 3}.25 done"}]})),
    "openai-chat": ("messages", {"model": "m", "tools": [{"type": "function", "function": {"name": "bash"}}]},
                    lambda i: ({"role": "assistant", "content": None, "tool_calls": [
                        {"id": str(i), "type": "function", "function": {"name": "bash", "arguments": f"{{\"n\":{i}}}"}}]},
                               {"role": "tool", "tool_call_id": str(i), "content": f"result {i}"})),
    "openai-responses": ("input", {"instructions": "Be brief.", "tools": [{"type": "function", "name": "x"}]},
                         lambda i: ({"type": "function_call", "name": "exec", "arguments": f"{{\"i\":{i}}}",
                                     "call_id": f"c{i}"},
                                    {"type": "function_call_output", "call_id": f"c{i}", "output": f"line {i}\n"})),
    "gemini": ("contents", {"systemInstruction": {"parts": [{"text": "sys"}]}},
               lambda i: ({"role": "model", "parts": [{"functionCall": {"name": "sh", "args": {"i": i}}}]},
                          {"role": "user", "parts": [{"functionResponse": {"name": "sh",
                                                                           "response": {"output": f"o{i}"}}}]})),
}


def _naive(calls, wires, count):
    console = total = 0
    memo: dict = {}
    for (_, body), wire in zip(calls, wires):
        for text, is_console in context_blocks(body, wire, memo):
            total += count(text)
            console += count(text) if is_console else 0
    return console, total


def _series(wire: str, steps: int) -> list[dict]:
    key, head, step = FORMATS[wire]
    items: list = [{"role": "user", "content": "Go."} if wire != "openai-responses" else
                   {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Go."}]}]
    if wire == "gemini":
        items = [{"role": "user", "parts": [{"text": "Go."}]}]
    bodies = []
    for i in range(steps):
        bodies.append({**head, key: list(items)})
        items += list(step(i))
    return bodies


@pytest.mark.parametrize("wire", sorted(FORMATS))
def test_incremental_sums_equal_the_sums_over_every_block(wire):
    tok = get_tokenizer()
    key = FORMATS[wire][0]
    bodies = _series(wire, 12)
    # the awkward cases: a call that drops the oldest items (context compaction), one that edits an earlier item,
    # a side call with another system prompt, a retry of the same call, an input that is a string
    bodies.insert(5, {**bodies[4], key: bodies[4][key][3:]})
    edited = [dict(x) for x in bodies[8][key]]
    edited[2] = bodies[1][key][0]
    bodies.insert(9, {**bodies[8], key: edited})
    bodies.insert(3, {**bodies[2], "system": "other", "instructions": "other", "tools": []})
    bodies.insert(7, bodies[6])
    if wire == "openai-responses":
        bodies.insert(4, {**bodies[3], "input": "a plain string input"})
    calls = [({}, body) for body in bodies]
    wires = [wire] * len(calls)
    expected = _naive(calls, wires, tok.count)
    assert expected[0] > 0 and expected[1] > expected[0]
    assert context_tokens(calls, wires, get_tokenizer().count) == expected


def test_a_change_of_wire_format_between_calls_starts_afresh():
    tok = get_tokenizer()
    calls = [({}, b) for b in _series("anthropic", 4) + _series("openai-chat", 4) + _series("anthropic", 3)]
    wires = ["anthropic"] * 4 + ["openai-chat"] * 4 + ["anthropic"] * 3 + ["unknown"]
    calls.append(({}, {"messages": [{"role": "user", "content": "x"}]}))
    assert context_tokens(calls, wires, tok.count) == _naive(calls, wires, get_tokenizer().count)


def _work(steps: int, count_calls) -> tuple[int, int]:
    """(characters of the texts passed to the tokenizer, characters it encoded) for ``steps`` Anthropic calls,
    each carrying the conversation so far (generated one at a time: memory stays small)."""
    tok = get_tokenizer()
    key, head, step = FORMATS["anthropic"]

    def calls():
        items: list = []
        for i in range(steps):
            yield {}, {**head, key: items}
            items = items + list(step(i))

    console, total = count_calls(calls(), ["anthropic"] * steps, tok.count)
    assert 0 < console < total
    return tok.chars_seen, tok.chars_counted


def test_tokens_counted_for_2000_and_4000_steps():
    """Twice the steps: at most 2.2 times the characters passed to the tokenizer and encoded by it (every call
    repeats the conversation so far: a count over every call's blocks grows with the square)."""
    small, large = _work(2000, context_tokens), _work(4000, context_tokens)
    assert large[0] <= 2.2 * small[0]
    assert large[1] <= 2.2 * small[1]


def test_the_work_measure_sees_a_quadratic_count():
    """The measure above fails a count over every block of every call (smaller sizes: that one is slow)."""
    small, large = _work(150, _naive), _work(300, _naive)
    assert large[0] > 3.5 * small[0]
    assert _work(300, context_tokens)[0] < large[0] / 50

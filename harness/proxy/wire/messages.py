"""Readers shared by the two formats whose conversation is a ``messages`` list (Anthropic Messages and OpenAI
Chat Completions): a request's input-context blocks and its user messages."""

from __future__ import annotations

from typing import Iterator

from harness.proxy.wire.base import Block, json_text, message_text, parts_text


def messages_blocks(body: dict, memo: dict) -> Iterator[Block]:
    """``(text, is_console)`` blocks of a ``messages`` body: ``tool_result`` blocks and ``role: "tool"`` (or
    legacy ``"function"``) messages are console output; the system prompt, texts, thinking, reasoning sent
    back and tool calls (name + arguments, kept in ``memo`` by call id) are the rest."""
    system = body.get("system")
    for text in parts_text(system):
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
                    for text in parts_text(block.get("content")):
                        yield text, True
                elif kind == "tool_use":
                    key = block.get("id")
                    known = memo.get(key) if isinstance(key, str) else None
                    if known is None:
                        known = str(block.get("name", "")) + json_text(block.get("input", {}))
                        if isinstance(key, str):
                            memo[key] = known
                    yield known, False
                elif kind == "thinking":
                    yield str(block.get("thinking", "")), False
                elif kind in ("text", None) and isinstance(block.get("text"), str):
                    yield block["text"], console
        else:
            for text in parts_text(content):
                yield text, console
        for key in ("reasoning_content", "reasoning"):
            if isinstance(message.get(key), str):
                yield message[key], False
        for call in message.get("tool_calls") or []:
            if isinstance(call, dict):
                function = call.get("function") or {}
                yield str(function.get("name", "")) + str(function.get("arguments", "")), False


def messages_user_texts(body: dict) -> list[str]:
    """The texts of the ``role: "user"`` messages that carry no ``tool_result``, in order."""
    out: list[str] = []
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "tool_result"
                                                 for p in content):
                continue
            text = message_text(content)
            if text:
                out.append(text)
    return out

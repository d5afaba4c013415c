"""What the scripted model needs for in-sandbox agents' API calls beyond the CLIs' conversations:
embeddings, forced tool choice, JSON-schema ``response_format``, and ids taken from earlier
tool results (see the ``scripted`` module docstring).

- :func:`embeddings_response`: ``POST /v1/embeddings`` (OpenAI-compatible) answered with a
  deterministic bag-of-words hashing vector per input (lower-cased ``\\w+`` tokens, each
  hashed with SHA-256 to one of ``dim`` signed coordinates, L2-normalised): the same text
  always gets the same vector, texts sharing words have a positive cosine.  Usage:
  ``prompt_tokens`` = ceil(characters / 4) per input.
- :func:`forced_tool`: whether the request forces a tool call, and which tool
  (Chat ``tool_choice`` ``required`` / ``{"type": "function", "function": {"name"}}``;
  Responses ``required`` / ``{"type": "function", "name"}``; Anthropic ``{"type": "any"|"tool"}``;
  Gemini ``toolConfig.functionCallingConfig.mode = ANY`` with ``allowedFunctionNames``).
- :func:`response_schema`: whether the request demands JSON output, and its schema
  (Chat ``response_format`` ``json_object``/``json_schema``; Responses ``text.format``;
  Gemini ``generationConfig.responseMimeType``/``responseSchema``/``responseJsonSchema``).
- :func:`tool_results` and :func:`substitute_ids`: ``{{id:N}}`` in a turn's text and tool
  arguments becomes the N-th distinct id (``id_pattern``) found in the tool results of the
  request's conversation, in order (negative N counts from the end).  Ids are salted per
  run, so scripts take them from what the agent's tools returned (or, with the script's
  ``id_source: messages``, from every message of the request, for an agent that passes earlier
  findings on in a prompt rather than as tool results).
"""

from __future__ import annotations

import hashlib
import math
import re
from typing import Any

from harness.wire import WireFormat, string_leaves, wire_format

PLACEHOLDER = re.compile(r"\{\{id:(-?\d+)\}\}")
_WORD = re.compile(r"\w+")


class MissingId(ValueError):
    """A ``{{id:N}}`` placeholder with no N-th id in the tool results."""


def embed_text(text: str, dim: int) -> list[float]:
    vec = [0.0] * dim
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        index = int.from_bytes(digest[:4], "big") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [round(v / norm, 8) for v in vec]


def embeddings_response(body: Any, dim: int) -> tuple[int, dict]:
    """(HTTP status, JSON body) of an embeddings request."""
    inputs = body.get("input") if isinstance(body, dict) else None
    if isinstance(inputs, str):
        inputs = [inputs]
    if not isinstance(inputs, list) or not inputs or not all(isinstance(t, str) for t in inputs):
        return 400, {"error": {"message": "scripted embeddings: 'input' must be a string or a list of strings",
                               "type": "invalid_request_error", "param": "input", "code": None}}
    tokens = sum(max(1, math.ceil(len(t) / 4)) for t in inputs)
    return 200, {"object": "list", "model": body.get("model") or "scripted-embedding",
                 "data": [{"object": "embedding", "index": i, "embedding": embed_text(t, dim)}
                          for i, t in enumerate(inputs)],
                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


def forced_tool(wire: str, body: dict) -> tuple[bool, str | None]:
    """(the request forces a tool call, the forced tool's name or None for any tool), read by the wire format
    (:meth:`harness.WireFormat.forced_tool`; ``tool_choice`` for a wire no format decodes)."""
    return (wire_format(wire) or WireFormat()).forced_tool(body)


def response_schema(wire: str, body: dict) -> tuple[bool, dict | None]:
    """(the request demands a JSON answer, its JSON schema or None), read by the wire format."""
    fmt = wire_format(wire)
    return fmt.response_schema(body) if fmt is not None else (False, None)


def tool_results(wire: str, body: dict) -> list[str]:
    """Texts of every tool result in the request's conversation, oldest first, read by the wire format."""
    fmt = wire_format(wire)
    return fmt.tool_results(body) if fmt is not None else []


def ids_in(results: list[str], pattern: str) -> list[str]:
    """Distinct ids matching ``pattern`` in ``results``, in order of first appearance."""
    seen: list[str] = []
    regex = re.compile(pattern)
    for text in results:
        for match in regex.findall(text):
            if match not in seen:
                seen.append(match)
    return seen


def has_placeholder(value: Any) -> bool:
    return any(PLACEHOLDER.search(s) for s in string_leaves(value)) if value is not None else False


def substitute_ids(value: Any, ids: list[str], source: str = "the tool results") -> Any:
    """``value`` with each ``{{id:N}}`` replaced by ``ids[N]``; :class:`MissingId` (naming ``source``, where
    the ids were taken from) when out of range."""
    def one(text: str) -> str:
        def repl(match: re.Match) -> str:
            n = int(match.group(1))
            if not -len(ids) <= n < len(ids):
                raise MissingId(f"{{{{id:{n}}}}}: {source} hold {len(ids)} id(s)")
            return ids[n]
        return PLACEHOLDER.sub(repl, text)

    if isinstance(value, str):
        return one(value)
    if isinstance(value, list):
        return [substitute_ids(v, ids, source) for v in value]
    if isinstance(value, dict):
        return {k: substitute_ids(v, ids, source) for k, v in value.items()}
    return value

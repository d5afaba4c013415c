"""The scripted model's script: turns, match rules, expectations (format in ``scripted``'s docstring).

:func:`load_script` reads YAML or JSON and raises :class:`harness.config.ConfigError`
naming the file and the field path of every problem.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, model_validator

from harness import ConfigError, Strict, format_validation_error, load_yaml
from harness.wire import KEY_ENV_VARS, UpstreamRequest
from tsagent_plugins.models.wire.base import ReplyFormat, string_leaves

WireName = Literal["anthropic", "openai-chat", "openai-responses", "gemini"]
Texts = str | list[str]


class ToolCallSpec(Strict):
    """``shell: "<command>"`` (mapped to the request's shell tool) or ``name`` + ``arguments``."""

    shell: str | None = None
    name: str | None = None
    arguments: dict[str, Any] | list[Any] | str | None = None
    id: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ToolCallSpec:
        if (self.shell is None) == (self.name is None):
            raise ValueError("give exactly one of 'shell' (a command) or 'name' (+ 'arguments')")
        if self.shell is not None and self.arguments is not None:
            raise ValueError("'arguments' goes with 'name', not with 'shell'")
        return self


class UsageSpec(Strict):
    """Normalised token counts to report; missing ones are computed from sizes."""

    prompt_tokens: int | None = Field(None, ge=0)
    cached_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)
    reasoning_tokens: int | None = Field(None, ge=0)

    @model_validator(mode="after")
    def _consistent(self) -> UsageSpec:
        if None not in (self.prompt_tokens, self.cached_tokens) and self.cached_tokens > self.prompt_tokens:
            raise ValueError("cached_tokens cannot exceed prompt_tokens (prompt tokens include cached ones)")
        if None not in (self.completion_tokens, self.reasoning_tokens) and \
                self.reasoning_tokens > self.completion_tokens:
            raise ValueError("reasoning_tokens cannot exceed completion_tokens (completion includes reasoning)")
        return self


class Expect(Strict):
    """Assertions on the incoming request; any failure answers HTTP 400 and is recorded."""

    contains: Texts | None = None
    not_contains: Texts | None = None
    last_tool_result_contains: Texts | None = None
    header: dict[str, str] | None = None
    body_path: dict[str, Any] | None = None
    model: str | None = None
    reasoning_effort: str | None = None
    auth: str | None = Field(None, description="'dummy' (a key that is not a real host key), 'none', or an exact key")
    wire: WireName | None = None


class ErrorSpec(Strict):
    """Answer with an HTTP error in the provider's format instead of a reply."""

    status: int = Field(ge=400, le=599)
    message: str = "scripted error"


class Turn(Strict):
    """One model answer."""

    text: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCallSpec] = Field(default_factory=list)
    usage: UsageSpec | None = None
    expect: Expect | None = None
    stop_reason: str | None = None
    error: ErrorSpec | None = None
    chunk_delay: float = Field(0.0, ge=0, le=60, description="seconds between streamed frames")
    delay: float = Field(0.0, ge=0, le=600, description="seconds before the answer starts (a model's latency)")
    chunk_size: int | None = Field(None, ge=1, description="characters per streamed text delta")
    structured: Any = Field(None, description="a JSON value answered as the text (JSON-schema response_format)")

    @model_validator(mode="after")
    def _one_text(self) -> Turn:
        if self.structured is not None and self.text is not None:
            raise ValueError("give 'text' or 'structured', not both")
        return self


class When(Strict):
    """Conditions of a match rule (all given ones must hold)."""

    no_tools: bool | None = None
    model: str | None = None
    path_contains: str | None = None
    contains: str | None = None
    body_path: dict[str, Any] | None = None
    wire: WireName | None = None


class MatchRule(Strict):
    """Requests outside the conversation (titles, routing) answered without consuming a turn."""

    when: When
    reply: Turn


class Final(Strict):
    """The answer once the turns have run out."""

    text: str = "done"
    stop_reason: str | None = None


class Script(Strict):
    """A whole script: ``turns`` in order, ``match`` rules, ``final`` reply."""

    turns: list[Turn] = Field(default_factory=list)
    match: list[MatchRule] = Field(default_factory=list)
    final: Final = Final()
    model: str | None = Field(None, description="model name in replies (default: the requested one)")
    chunk_size: int = Field(16, ge=1)
    id_pattern: str = Field(r"doc_[0-9a-f]{12}", description="what {{id:N}} placeholders pick from tool results")
    id_source: Literal["tool_results", "messages"] = Field(
        "tool_results", description="where {{id:N}} ids are taken from: the request's tool results, or all its "
                                    "messages (system prompt included), in order")
    embedding_dim: int = Field(256, ge=2, le=8192, description="size of the scripted embeddings")


def parse_script(data: Any, source: Path | str = "<script>") -> Script:
    """Validate already-loaded data (a list of turns or a mapping); ConfigError naming ``source``."""
    if isinstance(data, list):
        data = {"turns": data}
    if not isinstance(data, dict):
        raise ConfigError(source, [f"<root>: expected a list of turns or a mapping, got {type(data).__name__}"])
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, format_validation_error(exc)) from None


def load_script(path: Path | str) -> Script:
    """Read a YAML/JSON script file."""
    path = Path(path)
    return parse_script(load_yaml(path), path)


# -- checking requests ------------------------------------------------------------
_MISSING = object()


def body_get(body: Any, dotted: str) -> Any:
    """Value at a dotted path (``tools.0.name``); a sentinel when absent."""
    cur = body
    for part in dotted.split("."):
        if isinstance(cur, dict) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.lstrip("-").isdigit() and -len(cur) <= int(part) < len(cur):
            cur = cur[int(part)]
        else:
            return _MISSING
    return cur


def _texts(value: Texts) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def conversation_text(fmt: ReplyFormat, body: dict) -> str:
    return "\n".join(string_leaves(fmt.conversation(body)))


def check_expect(expect: Expect, request: UpstreamRequest, body: dict, fmt: ReplyFormat) -> list[str]:
    """Failure messages (empty when every assertion holds).  Never quotes a credential."""
    fails: list[str] = []
    if expect.wire is not None and request.wire != expect.wire:
        fails.append(f"wire: expected {expect.wire}, the request is {request.wire} ({request.path})")
    if expect.contains is not None or expect.not_contains is not None:
        text = conversation_text(fmt, body)
        for needle in _texts(expect.contains or []):
            if needle not in text:
                fails.append(f"contains: {needle!r} not found in the request's messages")
        for needle in _texts(expect.not_contains or []):
            if needle in text:
                fails.append(f"not_contains: {needle!r} found in the request's messages")
    if expect.last_tool_result_contains is not None:
        result = fmt.last_tool_result(body)
        if result is None:
            fails.append("last_tool_result_contains: the request has no tool result")
        else:
            for needle in _texts(expect.last_tool_result_contains):
                if needle not in result:
                    fails.append(f"last_tool_result_contains: {needle!r} not in the last tool result "
                                 f"{result[:200]!r}")
    for name, want in (expect.header or {}).items():
        got = request.headers.get(name.lower())
        if got != want:
            shown = "<credential>" if name.lower() in ("authorization", "x-api-key", "x-goog-api-key") else got
            fails.append(f"header {name}: expected {want!r}, got {shown!r}")
    for dotted, want in (expect.body_path or {}).items():
        got = body_get(body, dotted)
        if got is _MISSING:
            fails.append(f"body_path {dotted}: missing (expected {want!r})")
        elif got != want:
            fails.append(f"body_path {dotted}: expected {want!r}, got {got!r}")
    if expect.model is not None:
        got = fmt.model(request, body)
        if got != expect.model:
            fails.append(f"model: expected {expect.model!r}, got {got!r}")
    if expect.reasoning_effort is not None:
        got = fmt.reasoning_effort(body)
        if got != expect.reasoning_effort.lower():
            fails.append(f"reasoning_effort: expected {expect.reasoning_effort!r}, got {got!r}")
    if expect.auth is not None:
        fails += _check_auth(expect.auth, request.credential())
    return fails


def _check_auth(want: str, sent: str | None) -> list[str]:
    if want == "none":
        return [] if sent is None else ["auth: expected no API key, the request carries one"]
    if sent is None:
        return ["auth: the request carries no API key"]
    if want == "dummy":
        for var in KEY_ENV_VARS:
            real = os.environ.get(var, "").strip()
            if real and sent == real:
                return [f"auth: the request carries the real host key from {var}, not a dummy"]
        return []
    return [] if sent == want else ["auth: the API key sent differs from the expected one"]


def matches(when: When, request: UpstreamRequest, body: dict, fmt: ReplyFormat) -> bool:
    """Whether a match rule's conditions all hold for this request."""
    if when.wire is not None and request.wire != when.wire:
        return False
    if when.no_tools is not None and (not fmt.tools(body)) != when.no_tools:
        return False
    if when.model is not None and fmt.model(request, body) != when.model:
        return False
    if when.path_contains is not None and when.path_contains not in request.path:
        return False
    if when.contains is not None and when.contains not in conversation_text(fmt, body):
        return False
    for dotted, want in (when.body_path or {}).items():
        if body_get(body, dotted) != want:
            return False
    return True

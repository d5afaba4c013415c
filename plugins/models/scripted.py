"""The ``scripted`` model backend: answers the CLIs offline, in their own wire formats.

It is an in-process :class:`harness.proxy.Upstream` (no network) that speaks
Anthropic Messages (``POST /v1/messages``, stream or not), OpenAI Responses
(``POST /v1/responses``, stream or not), OpenAI Chat Completions
(``POST /v1/chat/completions``, stream with a usage chunk, or not) and Gemini
(``POST /v1beta/models/{model}:generateContent`` and
``:streamGenerateContent``, with ``?alt=sse`` or as a JSON array).  Each
request of an episode is answered by the next turn of a script.

Script format (YAML or JSON; a bare list is the list of turns)::

    model: scripted-model        # optional: model name in replies (default: the requested one)
    chunk_size: 16               # optional: characters per streamed text delta
    final:                       # optional: the answer once the turns run out
      text: done                 #   (default "done", with the format's normal stop reason)
      stop_reason: end_turn
    match:                       # optional: requests outside the conversation
      - when: {no_tools: true}   #   e.g. OpenCode's title request (no tools offered)
        reply: {text: "Ball drop analysis"}
      - when: {model: gemini-2.5-flash-lite}   # e.g. Gemini CLI's routing call
        reply: {text: '{"model_choice": "pro"}'}
    turns:
      - reasoning: "I should compute it."      # thinking / reasoning summary / thought part
        text: "Let me compute that."
        tool_calls:
          - shell: "python3 -c 'print(6*7)'"   # mapped to the request's shell tool
          - name: Write                        # or an explicit tool call
            arguments: {file_path: /workspace/a.txt, content: "x"}
        usage: {prompt_tokens: 1200, cached_tokens: 1000, completion_tokens: 80, reasoning_tokens: 30}
        expect:                                # assertions on the incoming request
          contains: "Compute six times seven"  #   anywhere in system prompt + messages
          model: claude-opus-4-6
          reasoning_effort: high
          auth: dummy                          #   a key was sent and it is not a real host key
          header: {anthropic-version: "2023-06-01"}
          body_path: {stream: true, "tools.0.name": Bash}
      - expect: {last_tool_result_contains: "42"}
        text: "The answer is 42."
      - error: {status: 529, message: overloaded}   # answer with a provider-format error
      - text: "slow"
        chunk_delay: 0.05                      # seconds between streamed frames
        delay: 1.0                             # seconds before the answer starts

``shell:`` goes to whichever shell tool the request's ``tools`` offer: Claude
Code ``Bash`` {command, description}, Codex ``exec_command`` {cmd} or
``shell`` {command: [...]} (or the built-in ``local_shell``), Gemini
``run_shell_command`` {command}, OpenCode ``bash`` {command, description}
(see :mod:`tsagent_plugins.models.wire.tools`).  ``usage`` fields left out are computed
from sizes (prompt: request bytes / 4; completion: reply characters / 4 plus
reasoning; cached 0) and written in each format's own fields, so the proxy's
normalisation reads back exactly the scripted numbers.

``expect`` keys: ``contains``/``not_contains`` (str or list), ``last_tool_result_contains``,
``header`` (name → value), ``body_path`` (dotted path → value), ``model``,
``reasoning_effort``, ``auth`` (``dummy`` | ``none`` | exact key), ``wire``.
A failed expectation (or a tool the request does not offer) is answered with
HTTP 400 in the provider's error format carrying the message, does not consume
the turn, and is recorded: :meth:`ScriptedUpstream.failures` and
``EpisodeUsage.assertion_failures``.  ``match`` rules are checked first and
never consume a turn; ``when`` keys: ``no_tools``, ``model``, ``path_contains``,
``contains``, ``body_path``, ``wire``.

For in-sandbox agents that call the API directly (see :mod:`tsagent_plugins.models.structured`):
``POST /v1/embeddings`` is answered with deterministic bag-of-words vectors (size
``embedding_dim``, default 256) without consuming a turn; a request that forces a
tool call (``tool_choice``) or demands JSON (``response_format`` / ``text.format``)
fails the turn unless the reply calls that tool / is JSON valid against the schema
(``structured: <value>`` answers a JSON value as the text); ``{{id:N}}`` in a turn's
text, ``shell``, ``arguments`` or ``structured`` is the N-th distinct id (regex
``id_pattern``, default ``doc_`` + 12 hex digits) in the conversation's tool results
(with ``id_source: messages``: in all its messages, system prompt included, in order),
so a script can cite per-run salted document ids it cannot know in advance.

Options of the backend (``upstream(options)``): ``script`` (a path, or the
script itself as a mapping/list) or ``replay`` (a recorded ``proxy.jsonl``,
whose responses are answered in order; see :mod:`tsagent_plugins.models.replay`).
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import ModelBackend
from harness import hookimpl
from harness import lazy_module
from harness.wire import Upstream, UpstreamConfigError, UpstreamRequest, UpstreamResponse, Usage
from harness.wire import error_body
from tsagent_plugins.models.replay import ReplayUpstream
from tsagent_plugins.models.structured import (MissingId, embeddings_response, forced_tool, has_placeholder, ids_in,
                                       response_schema, substitute_ids, tool_results)
from tsagent_plugins.models.wire import FORMATS, Call, Reply, ReplyFormat
from tsagent_plugins.models.wire.gemini import GeminiWire
from tsagent_plugins.models.wire.tools import ToolMismatch, find_shell_tool, find_tool, shell_arguments

if TYPE_CHECKING:
    from tsagent_plugins.models import script_format
    from tsagent_plugins.models.script_format import Script, Turn
else:  # pydantic models, built when a script is first read: registering the backend needs none of them
    script_format = lazy_module("tsagent_plugins.models.script_format")

_ID_PREFIX = {"anthropic": "msg_scripted_", "openai-chat": "chatcmpl-scripted-",
              "openai-responses": "resp_scripted_", "gemini": "scripted-"}


@dataclass
class _EpisodeState:
    script: Script
    next_turn: int = 0
    replies: int = 0
    failures: list[str] = field(default_factory=list)
    unhandled: list[str] = field(default_factory=list)


class ScriptedUpstream(Upstream):
    """Answer every episode from ``script`` (or a per-episode one set with :meth:`assign`)."""

    name = "scripted"

    def __init__(self, script: Script | Path | str | None = None):
        self.script = _as_script(script) if script is not None else script_format.Script()
        self._assigned: dict[str, Script] = {}
        self._states: dict[str, _EpisodeState] = {}

    def assign(self, episode_id: str, script: Script | Path | str) -> None:
        """Use ``script`` for ``episode_id`` (before the episode opens)."""
        self._assigned[episode_id] = _as_script(script)

    def open_episode(self, episode_id: str) -> None:
        self._states[episode_id] = _EpisodeState(self._assigned.get(episode_id, self.script))

    def _state(self, episode_id: str) -> _EpisodeState:
        if episode_id not in self._states:
            self.open_episode(episode_id)
        return self._states[episode_id]

    def failures(self, episode_id: str) -> list[str]:
        """Failed expectations of ``episode_id`` so far (kept after the episode closes)."""
        return list(self._state(episode_id).failures)

    def turns_used(self, episode_id: str) -> int:
        """How many scripted turns ``episode_id`` consumed."""
        return self._state(episode_id).next_turn

    def unhandled(self, episode_id: str) -> list[str]:
        """Requests on paths the scripted backend does not speak (``METHOD path``)."""
        return list(self._state(episode_id).unhandled)

    async def handle(self, request: UpstreamRequest) -> UpstreamResponse:
        state = self._state(request.episode_id)
        if request.method == "HEAD":  # connectivity probes (Claude Code sends HEAD /)
            return UpstreamResponse.json(200, {})
        if request.method == "POST" and request.path.split("?")[0].rstrip("/").endswith("/embeddings"):
            status, payload = embeddings_response(request.json(), state.script.embedding_dim)
            return UpstreamResponse.json(status, payload)
        fmt = FORMATS.get(request.wire or "")
        if fmt is None or request.method != "POST":
            state.unhandled.append(f"{request.method} {request.path}")
            message = f"the scripted model does not serve {request.method} {request.path}"
            return UpstreamResponse.json(404, error_body(request.wire or "unknown", 404, message))
        body = request.json()
        if not isinstance(body, dict):
            return self._fail(state, fmt, "request", ["the request body is not a JSON object"])
        turn, label, consume = self._pick(state, request, body, fmt)
        fails = script_format.check_expect(turn.expect, request, body, fmt) if turn.expect else []
        if fails:
            return self._fail(state, fmt, label, fails)
        try:
            reply = self._resolve(state, turn, request, body, fmt)
        except (ToolMismatch, MissingId) as exc:
            return self._fail(state, fmt, label, [str(exc)])
        fails = _structure_failures(fmt, body, reply) if turn.error is None else []
        if fails:
            return self._fail(state, fmt, label, fails)
        if consume:
            state.next_turn += 1
        if turn.delay:
            import asyncio  # imported on use: registering the backend starts no event loop machinery

            await asyncio.sleep(turn.delay)
        if turn.error is not None:
            return UpstreamResponse.json(turn.error.status, fmt.error(turn.error.status, turn.error.message))
        if not fmt.is_stream(request, body):
            return UpstreamResponse.json(200, fmt.render_json(reply))
        if isinstance(fmt, GeminiWire) and not fmt.is_sse(request):
            return UpstreamResponse.json(200, fmt.stream_chunks(reply))
        return UpstreamResponse.sse(_paced(fmt.render_stream(reply, request, body), turn.chunk_delay))

    def _pick(self, state: _EpisodeState, request: UpstreamRequest, body: dict,
              fmt: ReplyFormat) -> tuple[Turn, str, bool]:
        script = state.script
        for index, rule in enumerate(script.match, 1):
            if script_format.matches(rule.when, request, body, fmt):
                return rule.reply, f"match rule {index}", False
        if state.next_turn < len(script.turns):
            return script.turns[state.next_turn], f"turn {state.next_turn + 1}", True
        return script_format.Turn(text=script.final.text, stop_reason=script.final.stop_reason), "final", False

    def _fail(self, state: _EpisodeState, fmt: ReplyFormat, label: str, fails: list[str]) -> UpstreamResponse:
        message = f"scripted {label}: " + "; ".join(fails)
        state.failures.append(message)
        return UpstreamResponse.json(400, fmt.error(400, message), assertion_failure=message)

    def _resolve(self, state: _EpisodeState, turn: Turn, request: UpstreamRequest, body: dict,
                 fmt: ReplyFormat) -> Reply:
        if has_placeholder(turn.model_dump(include={"text", "tool_calls", "structured"})):
            if state.script.id_source == "messages":
                texts, source = [script_format.conversation_text(fmt, body)], "the messages"
            else:
                texts, source = tool_results(fmt.name, body), "the tool results"
            ids = ids_in(texts, state.script.id_pattern)
            turn = turn.model_copy(update={
                "text": substitute_ids(turn.text, ids, source),
                "structured": substitute_ids(turn.structured, ids, source),
                "tool_calls": [c.model_copy(update={"shell": substitute_ids(c.shell, ids, source),
                                                    "arguments": substitute_ids(c.arguments, ids, source)})
                               for c in turn.tool_calls]})
        state.replies += 1
        n = state.replies
        tools = fmt.tools(body)
        calls = []
        for k, spec in enumerate(turn.tool_calls, 1):
            call_id = spec.id or (f"toolu_scripted_{n}_{k}" if fmt.name == "anthropic" else f"call_scripted_{n}_{k}")
            if spec.shell is not None:
                tool = find_shell_tool(tools)
                calls.append(Call(call_id, tool.name, shell_arguments(tool, spec.shell), tool.kind))
            else:
                assert spec.name is not None
                tool = find_tool(tools, spec.name)
                args = spec.arguments if spec.arguments is not None else ({} if tool.kind == "function" else "")
                calls.append(Call(call_id, tool.name, args, tool.kind))
        model = state.script.model or fmt.model(request, body) or "scripted"
        text = json.dumps(turn.structured) if turn.structured is not None else turn.text
        reply = Reply(id=f"{_ID_PREFIX[fmt.name]}{n}", model=model, text=text, reasoning=turn.reasoning,
                      calls=calls, stop_reason=turn.stop_reason, chunk_size=turn.chunk_size or state.script.chunk_size)
        reply.usage = _usage(turn, request, reply)
        return reply


def _structure_failures(fmt: ReplyFormat, body: dict, reply: Reply) -> list[str]:
    """A forced tool choice the reply does not honour; a JSON answer that is not JSON or not of the schema."""
    fails = []
    forced, name = forced_tool(fmt.name, body)
    if forced and not reply.calls:
        fails.append(f"tool_choice forces a tool call{f' to {name}' if name else ''}, the turn makes none")
    elif forced and name and name not in [c.name for c in reply.calls]:
        fails.append(f"tool_choice forces {name}, the turn calls {[c.name for c in reply.calls]}")
    wants_json, schema = response_schema(fmt.name, body)
    if wants_json and not reply.calls:
        try:
            value = json.loads(reply.text or "")
        except ValueError:
            return fails + ["response_format asks for JSON, the turn's text is not JSON"]
        if isinstance(schema, dict):
            import jsonschema

            error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
            if error is not None:
                fails.append(f"response_format schema: {error.message} at {'/'.join(map(str, error.path)) or '<root>'}")
    return fails


def _usage(turn: Turn, request: UpstreamRequest, reply: Reply) -> Usage:
    """The scripted usage, with missing counts computed from sizes (about 4 characters a token)."""
    spec = turn.usage
    reasoning_chars = len(reply.reasoning or "")
    out_chars = len(reply.text or "") + sum(len(c.arguments_json()) for c in reply.calls)
    reasoning = spec.reasoning_tokens if spec and spec.reasoning_tokens is not None else math.ceil(reasoning_chars / 4)
    completion = (spec.completion_tokens if spec and spec.completion_tokens is not None
                  else max(1, math.ceil(out_chars / 4)) + reasoning)
    cached = spec.cached_tokens if spec and spec.cached_tokens is not None else 0
    prompt = (spec.prompt_tokens if spec and spec.prompt_tokens is not None
              else max(1, math.ceil(request.body_size() / 4), cached))
    return Usage(prompt, min(cached, prompt), completion, min(reasoning, completion))


async def _paced(frames: list[bytes], delay: float) -> AsyncIterator[bytes]:
    for index, frame in enumerate(frames):
        if index and delay:
            import asyncio  # imported on use (see above)

            await asyncio.sleep(delay)
        yield frame


def _as_script(script: Script | Path | str | dict | list) -> Script:
    if isinstance(script, script_format.Script):
        return script
    if isinstance(script, (dict, list)):
        return script_format.parse_script(script, "options.script")
    return script_format.load_script(script)


class ScriptedBackend(ModelBackend):
    """``--model-backend scripted``: options ``script`` (path or inline) or ``replay`` (a proxy.jsonl)."""

    name = "scripted"
    billed = False

    def upstream(self, options: dict[str, Any]) -> Upstream:
        script, replay = options.get("script"), options.get("replay")
        if script is not None and replay is not None:
            raise UpstreamConfigError("model backend 'scripted': give options.script or options.replay, not both")
        if replay is not None:
            if not isinstance(replay, (str, Path)):
                raise UpstreamConfigError(f"model backend 'scripted': options.replay must be a path to a "
                                          f"proxy.jsonl, got {type(replay).__name__}")
            return ReplayUpstream(replay)
        if script is not None and not isinstance(script, (str, Path, dict, list)):
            raise UpstreamConfigError(f"model backend 'scripted': options.script must be a path or a script, "
                                      f"got {type(script).__name__}")
        if script is None:
            raise UpstreamConfigError("the scripted model backend needs a script: pass --script FILE "
                                      "(format: tests/fixtures/scripts/README.md)")
        return ScriptedUpstream(_as_script(script))


@hookimpl
def register_model_backends(register):
    register(ScriptedBackend())

"""The scripted model's upstream (:class:`ScriptedUpstream`): the answers of a script, in the CLIs' wire formats.

The script format and what the backend does are described in :mod:`.scripted`, the plugin module; this one is
imported when a run uses the backend (:meth:`.scripted.ScriptedBackend.upstream`), not when the plugin registers
it: the proxy's upstream base, the wire formats and the script's pydantic models load with the first run.
"""

from __future__ import annotations

import json
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.wire import Upstream, UpstreamRequest, UpstreamResponse, Usage
from harness.wire import error_body
from tsagent_plugins.models.structured import (MissingId, embeddings_response, forced_tool, has_placeholder, ids_in,
                                       response_schema, substitute_ids, tool_results)
from tsagent_plugins.models.script_format import (Script, Turn, check_expect, conversation_text, load_script, matches,
                                                  parse_script)
from tsagent_plugins.models.wire import FORMATS, Call, Reply, ReplyFormat
from tsagent_plugins.models.wire.gemini import GeminiWire
from tsagent_plugins.models.wire.tools import ToolMismatch, find_shell_tool, find_tool, shell_arguments

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
        self.script = as_script(script) if script is not None else Script()
        self._assigned: dict[str, Script] = {}
        self._states: dict[str, _EpisodeState] = {}

    def assign(self, episode_id: str, script: Script | Path | str) -> None:
        """Use ``script`` for ``episode_id`` (before the episode opens)."""
        self._assigned[episode_id] = as_script(script)

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
        fails = check_expect(turn.expect, request, body, fmt) if turn.expect else []
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
            if matches(rule.when, request, body, fmt):
                return rule.reply, f"match rule {index}", False
        if state.next_turn < len(script.turns):
            return script.turns[state.next_turn], f"turn {state.next_turn + 1}", True
        return Turn(text=script.final.text, stop_reason=script.final.stop_reason), "final", False

    def _fail(self, state: _EpisodeState, fmt: ReplyFormat, label: str, fails: list[str]) -> UpstreamResponse:
        message = f"scripted {label}: " + "; ".join(fails)
        state.failures.append(message)
        return UpstreamResponse.json(400, fmt.error(400, message), assertion_failure=message)

    def _resolve(self, state: _EpisodeState, turn: Turn, request: UpstreamRequest, body: dict,
                 fmt: ReplyFormat) -> Reply:
        if has_placeholder(turn.model_dump(include={"text", "tool_calls", "structured"})):
            if state.script.id_source == "messages":
                texts, source = [conversation_text(fmt, body)], "the messages"
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


def as_script(script: Script | Path | str | dict | list) -> Script:
    """``script`` as a :class:`Script`: as it is, parsed (a mapping or list: ``options.script``) or read from a
    file; :class:`harness.ConfigError` naming the file and field when it is malformed."""
    if isinstance(script, Script):
        return script
    if isinstance(script, (dict, list)):
        return parse_script(script, "options.script")
    return load_script(script)

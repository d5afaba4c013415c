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

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import ModelBackend
from harness import hookimpl

if TYPE_CHECKING:
    from harness.wire import Upstream


class ScriptedBackend(ModelBackend):
    """``--model-backend scripted``: options ``script`` (path or inline) or ``replay`` (a proxy.jsonl)."""

    name = "scripted"
    billed = False

    def upstream(self, options: dict[str, Any]) -> Upstream:
        # the upstream, the proxy's modules and the script format load when a run uses the backend
        from harness.wire import UpstreamConfigError
        from tsagent_plugins.models.replay import ReplayUpstream
        from tsagent_plugins.models.scripted_upstream import ScriptedUpstream, as_script

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
        return ScriptedUpstream(as_script(script))


@hookimpl
def register_model_backends(register):
    register(ScriptedBackend())


def __getattr__(name: str) -> Any:
    """:class:`ScriptedUpstream` by its old address, imported on first use (:mod:`.scripted_upstream`)."""
    if name == "ScriptedUpstream":
        from tsagent_plugins.models.scripted_upstream import ScriptedUpstream

        return ScriptedUpstream
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

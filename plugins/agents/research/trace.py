"""The step log of an in-sandbox DR agent (``home/research/steps.jsonl``) as an ATIF trajectory.

Harness side (reads only the JSON lines; imports nothing the agent runs).  Events:
``user`` (the prompt) -> a user step; ``tool`` (list/read/search) -> an agent step with
one tool call and its observation (no model call: no metrics, ``llm_call_count`` 0);
``model`` (a chat call) -> an agent step with its message, tool calls and token usage;
``embedding`` -> an agent step of an embeddings call (usage, no message,
``llm_call_count`` 0: not an LLM iteration); ``note``/``stop`` -> trajectory
``extra`` (retriever, deviation label, limits, stop reason, caps; a ``note`` with a
``reason`` (e.g. malformed structured output) is appended to ``extra.notes``); ``stage``
(a stage / graph node starts) -> every later agent step carries ``extra.stage``, and
``extra.stages`` lists the stages in the order they started (stages without steps too).  Token totals: the sum of
every logged call, cross-checked against the proxy log.
"""

from __future__ import annotations

from pathlib import Path

from harness.atif import find_native_files
from harness.wire import Usage
from harness import untrusted
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.base import json_lines, read_native_log
from tsagent_plugins.agents.terminal.proxylog import read_calls

STEPS_FILE = "research/steps.jsonl"


def _usage(data: dict | None) -> Usage:
    data = data or {}
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("cached_tokens") or 0),
                 int(data.get("completion_tokens") or 0), int(data.get("reasoning_tokens") or 0))


def read_steps(path: Path) -> list[dict]:
    """The events (JSON objects) of a step log, read like a CLI's native log: within
    ``NATIVE_LOG_BOUNDS`` of the terminal agents, invalid UTF-8 replaced by U+FFFD (the
    steps are kept), lines that are not a bounded JSON object skipped.

    Raises ValueError with the reason when the file cannot be read within the bound.
    """
    return json_lines(read_native_log(Path(path)))


def trajectory(agent_name: str, agent_version: str, home: Path, proxy_log: Path | None,
               model: str | None = None) -> dict | None:
    """The ATIF document of the episode, or None when the agent left no step log."""
    path = Path(home) / STEPS_FILE
    if not find_native_files(path.parent, path.name):  # neither plain nor stored compressed
        return None
    builder = TrajectoryBuilder(agent_name, agent_version, model)
    try:
        events = read_steps(path)
    except ValueError as exc:
        events = []
        builder.note(f"step log not read: {exc}")
    total = Usage()
    stage: str | None = None

    def staged(extra: dict | None) -> dict | None:
        return {**(extra or {}), "stage": stage} if stage else extra

    for event in events:
        kind, ts = event.get("type"), event.get("ts")
        if kind == "user":
            builder.user(event.get("message") or "", ts)
        elif kind == "tool":
            step = builder.agent("", ts, extra=staged({"kind": "tool"}))
            step["llm_call_count"] = 0  # a tool the agent's code ran, not a model call
            call_id = builder.tool_call(step, None, str(event.get("name") or ""), event.get("arguments") or {})
            builder.observe(call_id, event.get("result") or "")
        elif kind in ("model", "embedding"):
            if kind == "model" and builder.model_name is None:
                builder.model_name = event.get("model")
            usage = _usage(event.get("usage"))
            total = total + usage
            step = builder.agent(event.get("message") or "", ts, reasoning=event.get("reasoning"),
                                 usage=usage, model_name=event.get("model"),
                                 extra=staged({"kind": "embeddings", "inputs": event.get("inputs")}
                                              if kind == "embedding" else None))
            if kind == "embedding":
                step["llm_call_count"] = 0  # in the token totals, not an LLM iteration
            for k, call in enumerate(event.get("tool_calls") or [], 1):
                fn = call.get("function") if isinstance(call, dict) else None
                if isinstance(fn, dict):
                    builder.tool_call(step, call.get("id") or f"call_{step['step_id']}_{k}", fn.get("name") or "",
                                      fn.get("arguments"))
        elif kind == "stage":
            stage = str(event.get("name") or "") or None
            builder.extra.setdefault("stages", []).append(stage)
        elif kind == "note" and event.get("reason"):
            builder.extra.setdefault("notes", []).append(event["reason"])
        elif kind == "note":
            builder.session_id = builder.session_id or event.get("session_id")
            builder.extra.update({k: v for k, v in event.items()
                                  if k not in ("type", "ts", "session_id") and v is not None})
        elif kind == "stop":
            builder.extra["stop_reason"] = event.get("reason")
            builder.extra["tool_calls"] = event.get("tool_calls")
            builder.extra["tokens"] = event.get("tokens")
    if not any(e.get("type") == "stop" for e in events):
        builder.extra["stop_reason"] = "the agent ended without a stop record (killed or crashed)"
    builder.cli_totals = total
    calls = None
    if proxy_log is not None and Path(proxy_log).exists():
        try:
            calls = read_calls(proxy_log)
        except Exception as exc:  # noqa: BLE001 - an unreadable proxy log must not lose the episode
            builder.note(f"proxy log unreadable: {untrusted.safe_str(exc)}")
    return builder.build(calls)

"""OpenCode 1.14.41 (TraceBench: minimax-m2.7, no reasoning-effort setting).

Headless: ``opencode run --format json --model harness/M`` with the prompt on
standard input (as an argument, a prompt with spaces arrives wrapped in
literal quotes).  The configuration travels in ``OPENCODE_CONFIG_CONTENT`` (a
work-dir ``opencode.json`` gets rewritten): one provider ``harness`` using the
bundled ``@ai-sdk/openai-compatible`` package with ``baseURL`` at the proxy and
the dummy key, the profile's model (tool calls on, limits, the profile's
prices so OpenCode's own cost figures are comparable) as both ``model`` and
``small_model``, every tool permission allowed, auto-update and sharing off.
``XDG_*`` folders live in the episode home; model-list fetches, LSP
downloads, default plugins and auto-update are disabled by environment.  It
calls only streaming ``POST /v1/chat/completions``: a session-title request
without tools, then the conversation.

Native log: the JSON events on stdout (``step_start``, ``text``,
``reasoning``, ``tool_use`` with the tool's result, ``step_finish`` with
tokens and cost, ``error``).  They lack the user message: it is read from the
session database (``$XDG_DATA_HOME/opencode/opencode.db``) or, failing that,
from the proxy log, and the trajectory says so.  OpenCode exits 0 even when a
model call failed; the ``error`` event tells.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from harness import untrusted
from harness import AgentContext
from harness.atif import copy_native_file, find_native_files
from harness.wire import Usage
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.base import NATIVE_LOG_BOUNDS, TerminalAgent, json_lines, merge
from tsagent_plugins.agents.terminal.proxylog import ProxyCall, first_prompt

PROVIDER_ID = "harness"
DATA_DIR = ".local/share/opencode"


def step_usage(tokens: dict) -> Usage:
    """Normalised usage of a ``step_finish`` part's ``tokens``.

    OpenCode reports ``input`` without the cache reads and writes and
    ``output`` without the reasoning tokens: prompt = input + cache.read +
    cache.write, completion = output + reasoning.
    """
    cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
    read, write = int(cache.get("read") or 0), int(cache.get("write") or 0)
    reasoning = int(tokens.get("reasoning") or 0)
    return Usage(int(tokens.get("input") or 0) + read + write, read, int(tokens.get("output") or 0) + reasoning,
                 reasoning)



def _object(data: Any) -> dict:
    """One row's JSON object (bounded); an unreadable row gives an empty object, the other rows are kept."""
    if isinstance(data, bytes):  # a BLOB: its text, invalid UTF-8 replaced
        data = data.decode("utf-8", "replace")
    value = untrusted.parse_json(data if isinstance(data, str) else "", NATIVE_LOG_BOUNDS).value
    return value if isinstance(value, dict) else {}

def session_records(home: Path) -> tuple[list[dict], list[dict]]:
    """``(messages, parts)`` of OpenCode's session database under ``home`` (each row's JSON ``data``).

    The database (with its write-ahead log) is copied first, so the episode's
    files are never touched (a file the harness stored compressed is copied
    plain: :func:`harness.atif.copy_native_file`).  Empty lists when there is
    no database.
    """
    db = Path(home) / DATA_DIR / "opencode.db"
    if not find_native_files(db.parent, db.name):
        return [], []
    with tempfile.TemporaryDirectory(prefix="opencode-db-") as tmp:
        for suffix in ("", "-wal", "-shm"):
            src = db.with_name(db.name + suffix)
            if find_native_files(src.parent, src.name):
                problem = copy_native_file(src, Path(tmp) / src.name)
                if problem is not None:
                    raise ValueError(problem)
        import sqlite3  # imported with the first session database read

        con = sqlite3.connect(Path(tmp) / db.name)
        con.text_factory = lambda raw: raw.decode("utf-8", "replace")  # invalid UTF-8 must not drop the steps
        try:
            messages = [{"id": i, "session_id": s, **_object(d)} for i, s, d in con.execute(
                "SELECT id, session_id, data FROM message ORDER BY time_created, id")]
            parts = [{"message_id": m, **_object(d)} for m, d in con.execute(
                "SELECT message_id, data FROM part ORDER BY time_created, id")]
        finally:
            con.close()
    return messages, parts


class OpenCode(TerminalAgent):
    """The OpenCode CLI (npm ``opencode-ai``)."""

    name = "opencode"
    package = "opencode-ai"
    version = "1.14.41"
    binary = "opencode"
    prompt_on_stdin = True

    def model_id(self, ctx: AgentContext) -> str:
        return f"{PROVIDER_ID}/{ctx.profile.model}"

    def config(self, ctx: AgentContext) -> dict[str, Any]:
        """The OpenCode configuration (before the profile's ``options.config``)."""
        profile = ctx.profile
        prices = profile.prices
        model: dict[str, Any] = {
            "name": profile.model,
            "tool_call": True,
            "limit": {"context": 200000, "output": 32000},
            "cost": {"input": prices.input, "output": prices.output, "cache_read": prices.cached},
        }
        if profile.reasoning_effort:
            model["reasoning"] = True
            model["options"] = {"reasoningEffort": profile.reasoning_effort}
        return {
            "$schema": "https://opencode.ai/config.json",
            "provider": {PROVIDER_ID: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "harness model proxy",
                "options": {"baseURL": (ctx.model_base_url or "").rstrip("/") + "/v1", "apiKey": self.dummy_key()},
                "models": {profile.model: model},
            }},
            "model": self.model_id(ctx),
            "small_model": self.model_id(ctx),
            "permission": {"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
            "autoupdate": False,
            "share": "disabled",
        }

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            "XDG_CONFIG_HOME": f"{ctx.home}/.config",
            "XDG_DATA_HOME": f"{ctx.home}/.local/share",
            "XDG_CACHE_HOME": f"{ctx.home}/.cache",
            "XDG_STATE_HOME": f"{ctx.home}/.local/state",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_TERMINAL_TITLE": "1",
        }

    def config_env(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        return {"OPENCODE_CONFIG_CONTENT": json.dumps(merge(self.config(ctx), extra))}

    def cli_argv(self, ctx: AgentContext, extra_args: list[str]) -> list[str]:
        return [self.binary, "run", "--format", "json", "--model", self.model_id(ctx), *extra_args]

    # -- failures ------------------------------------------------------------------
    def failure_messages(self, stdout: str, stderr: str, exit_code: int | None) -> list[tuple[int | None, str]]:
        out = []
        for event in json_lines(stdout):
            if event.get("type") != "error":
                continue
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            data = error.get("data") if isinstance(error.get("data"), dict) else {}
            status = data.get("statusCode")
            message = str(data.get("message") or error.get("name") or "error")
            out.append((status if isinstance(status, int) else None, message))
        return out

    # -- native log ------------------------------------------------------------------
    def native_logs(self, home: Path) -> list[Path]:
        data = Path(home) / DATA_DIR  # plain or stored compressed
        return find_native_files(data, "opencode.db*") + find_native_files(data, "log/*.log")

    def convert(self, home: Path, stdout: str, calls: list[ProxyCall] | None) -> TrajectoryBuilder:
        events = [e for e in json_lines(stdout) if isinstance(e.get("type"), str)]
        if not events:
            raise ValueError("no OpenCode JSON events on stdout")
        session = next((e.get("sessionID") for e in events if e.get("sessionID")), None)
        import sqlite3

        try:
            messages, parts = session_records(home)
        except (sqlite3.Error, ValueError, OSError) as exc:
            messages, parts = [], []
            note = f"session database unreadable ({exc})"
        else:
            note = None
        mine = [m for m in messages if not session or m.get("session_id") == session]
        model = next((m.get("modelID") for m in mine if m.get("role") == "assistant" and m.get("modelID")), None)
        if model is None and calls:
            model = next((c.model for c in calls if c.model and c.has_tools), None)
        builder = TrajectoryBuilder(self.name, self.version, model, session)
        if note:
            builder.note(note)

        users = [m for m in mine if m.get("role") == "user"]
        if users:
            first = users[0]
            text = "\n".join(p.get("text") or "" for p in parts
                             if p.get("message_id") == first["id"] and p.get("type") == "text" and not p.get("synthetic"))
            builder.user(text, (first.get("time") or {}).get("created"), extra={"filled_from": "opencode.db"})
            builder.note("the user message is missing from OpenCode's JSON events; it was read from its session "
                         "database (opencode.db)")
        else:
            prompt = first_prompt(calls or [])
            if prompt is not None:
                builder.user(prompt, calls[0].ts if calls else None, extra={"filled_from": "proxy.jsonl"})
                builder.note("the user message is missing from OpenCode's JSON events; it was taken from the "
                             "first conversation request in the proxy log")
            else:
                builder.note("the user message is missing from OpenCode's JSON events and could not be recovered")

        step: dict | None = None
        texts: list[str] = []
        thoughts: list[str] = []

        def close() -> None:
            nonlocal step, texts, thoughts
            if step is not None:
                step["message"] = "\n".join(t for t in texts if t)
                if thoughts:
                    step["reasoning_content"] = "\n".join(thoughts)
            step, texts, thoughts = None, [], []

        for event in events:
            kind, part = event["type"], event.get("part") if isinstance(event.get("part"), dict) else {}
            ts = event.get("timestamp")
            if kind == "step_start":
                close()
                step = builder.agent("", ts, extra={"message_id": part.get("messageID")})
            elif kind in ("text", "reasoning", "tool_use") and step is None:
                step = builder.agent("", ts, extra={"message_id": part.get("messageID")})
            if kind == "text":
                texts.append(part.get("text") or "")
            elif kind == "reasoning":
                thoughts.append(part.get("text") or "")
            elif kind == "tool_use":
                state = part.get("state") if isinstance(part.get("state"), dict) else {}
                call_id = builder.tool_call(step, part.get("callID"), part.get("tool") or "", state.get("input"))
                status = state.get("status")
                if status in ("completed", "error"):
                    output = state.get("output") if status == "completed" else state.get("error")
                    builder.observe(call_id, "" if output is None else str(output), is_error=status == "error")
            elif kind == "step_finish":
                tokens = part.get("tokens")
                if step is not None and isinstance(tokens, dict):
                    cost = part.get("cost")
                    builder.set_usage(step, step_usage(tokens), float(cost) if isinstance(cost, (int, float)) else None)
                close()
            elif kind == "error":
                close()
                error = event.get("error") if isinstance(event.get("error"), dict) else {}
                data = error.get("data") if isinstance(error.get("data"), dict) else {}
                builder.system(str(data.get("message") or error.get("name") or "error"), ts,
                               extra={"error": error.get("name"), "status": data.get("statusCode")})
        close()
        if builder.agent_steps() and not builder.has_usage(builder.agent_steps()[-1]):
            builder.note("the last step has no step_finish event (OpenCode stopped early)")
        return builder

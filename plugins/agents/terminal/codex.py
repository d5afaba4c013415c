"""Codex 0.124.0 (TraceBench: gpt-5.5 with reasoning effort high).

Headless: ``codex exec --json --skip-git-repo-check
--dangerously-bypass-approvals-and-sandbox --model M -c
model_reasoning_effort=E -- PROMPT < /dev/null`` with a fresh ``CODEX_HOME``
in the episode home whose ``config.toml`` routes the model through a custom
provider at the proxy (``wire_api = "responses"``: 0.124 rejects ``"chat"``;
some versions ignore the base-URL variable, the provider entry always
works), approvals off, the update check, analytics and the plugin lookup
(which contacts chatgpt.com and api.github.com at start) off.  With an effort
set, ``model_supports_reasoning_summaries`` makes Codex send
``reasoning.effort`` for a model it does not know.

Native log: the rollout ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``
(``response_item`` records of the conversation, ``event_msg`` records such
as ``user_message`` and ``token_count``).  The ``--json`` stdout sometimes
lacks ``item.completed`` events, so the rollout is the source.  Token counts:
OpenAI Responses counting (input includes cached, output includes reasoning);
each model call's usage is the growth of ``total_token_usage`` between
``token_count`` events (repeated events carry the same total).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import AgentContext
from harness.atif import find_native_files
from harness.wire import Usage
from tsagent_plugins.agents.terminal import toml
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.base import TerminalAgent, json_lines, merge, read_native_log, status_in
from tsagent_plugins.agents.terminal.proxylog import ProxyCall

PROVIDER_ID = "harness"
KEY_ENV = "OPENAI_API_KEY"


def _texts(content: Any, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(p.get("text") or "" for p in content if isinstance(p, dict) and p.get("type") in kinds)


def _usage(total: dict) -> Usage:
    return Usage(int(total.get("input_tokens") or 0), int(total.get("cached_input_tokens") or 0),
                 int(total.get("output_tokens") or 0), int(total.get("reasoning_output_tokens") or 0))


def _minus(a: Usage, b: Usage) -> Usage:
    return Usage(a.prompt_tokens - b.prompt_tokens, a.cached_tokens - b.cached_tokens,
                 a.completion_tokens - b.completion_tokens, a.reasoning_tokens - b.reasoning_tokens)


def _output(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return str(value.get("content") if value.get("content") is not None else value.get("output", ""))
    if isinstance(value, list):
        return _texts(value, ("input_text", "output_text", "text"))
    return "" if value is None else str(value)


class Codex(TerminalAgent):
    """OpenAI's Codex CLI (npm ``@openai/codex``)."""

    name = "codex"
    package = "@openai/codex"
    version = "0.124.0"
    binary = "codex"

    def codex_home(self, ctx: AgentContext) -> str:
        return f"{ctx.home}/.codex"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {"CODEX_HOME": self.codex_home(ctx), KEY_ENV: self.dummy_key(), "NO_COLOR": "1"}

    def config(self, ctx: AgentContext) -> dict[str, Any]:
        """The ``config.toml`` content as a mapping (before the profile's ``options.config``)."""
        profile = ctx.profile
        config: dict[str, Any] = {
            "model": profile.model,
            "model_provider": PROVIDER_ID,
            "approval_policy": "never",
            "sandbox_mode": "danger-full-access",
            "check_for_update_on_startup": False,
        }
        if profile.reasoning_effort:
            config["model_reasoning_effort"] = profile.reasoning_effort
            config["model_supports_reasoning_summaries"] = True
        config["analytics"] = {"enabled": False}
        config["features"] = {"plugins": False}
        config["model_providers"] = {PROVIDER_ID: {
            "name": "harness model proxy",
            "base_url": ctx.model_base_url.rstrip("/") + "/v1",
            "env_key": KEY_ENV,
            "wire_api": "responses",
        }}
        return config

    def config_files(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        return {f"{self.codex_home(ctx)}/config.toml": toml.dumps(merge(self.config(ctx), extra))}

    def cli_argv(self, ctx: AgentContext, extra_args: list[str]) -> list[str]:
        argv = [self.binary, "exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                "--model", ctx.profile.model]
        if ctx.profile.reasoning_effort:
            argv += ["-c", f"model_reasoning_effort={ctx.profile.reasoning_effort}"]
        return argv + extra_args + ["--", ctx.prompt]

    # -- failures ------------------------------------------------------------------
    def failure_messages(self, stdout: str, stderr: str, exit_code: int | None) -> list[tuple[int | None, str]]:
        out = []
        for event in json_lines(stdout):
            if event.get("type") == "error":
                text = str(event.get("message") or "")
            elif event.get("type") == "turn.failed":
                text = str((event.get("error") or {}).get("message") or "turn failed")
            else:
                continue
            out.append((status_in(text), text))
        return out

    # -- native log ------------------------------------------------------------------
    def native_logs(self, home: Path) -> list[Path]:
        # the agent's home: listed with bounds, plain or stored compressed
        return find_native_files(Path(home) / ".codex" / "sessions", "**/rollout-*.jsonl")

    def convert(self, home: Path, stdout: str, calls: list[ProxyCall] | None) -> TrajectoryBuilder:
        logs = self.native_logs(home)
        if not logs:
            raise FileNotFoundError(f"no Codex rollout under {Path(home) / '.codex' / 'sessions'}")
        thread = next((e.get("thread_id") for e in json_lines(stdout) if e.get("type") == "thread.started"), None)
        path = next((p for p in logs if thread and thread in p.name), logs[-1])
        records = json_lines(read_native_log(path))
        meta = next((r.get("payload") or {} for r in records if r.get("type") == "session_meta"), {})
        context = next((r.get("payload") or {} for r in records if r.get("type") == "turn_context"), {})
        builder = TrajectoryBuilder(self.name, meta.get("cli_version") or self.version, context.get("model"),
                                    meta.get("id") or path.stem)
        builder.extra.update({"cwd": meta.get("cwd"), "model_provider": meta.get("model_provider"),
                              "reasoning_effort": context.get("effort")})

        state: dict[str, Any] = {"step": None, "texts": [], "thoughts": []}
        last_total = Usage()

        def open_step(ts: Any) -> dict:
            if state["step"] is None:
                state["step"] = builder.agent("", ts)
            return state["step"]

        def close(usage: Usage | None = None) -> None:
            step = state["step"]
            if step is not None:
                step["message"] = "\n".join(t for t in state["texts"] if t)
                if state["thoughts"]:
                    step["reasoning_content"] = "\n".join(state["thoughts"])
                if usage is not None:
                    builder.set_usage(step, usage)
            state.update(step=None, texts=[], thoughts=[])

        for record in records:
            ts, kind = record.get("timestamp"), record.get("type")
            payload = record.get("payload") if isinstance(record.get("payload"), dict) else {}
            ptype = payload.get("type")
            if kind == "response_item":
                if ptype == "message" and payload.get("role") == "assistant":
                    open_step(ts)
                    state["texts"].append(_texts(payload.get("content"), ("output_text", "text")))
                elif ptype == "reasoning":
                    open_step(ts)
                    text = _texts(payload.get("summary"), ("summary_text",)) or _texts(
                        payload.get("content"), ("reasoning_text", "text"))
                    if text:
                        state["thoughts"].append(text)
                elif ptype == "function_call":
                    builder.tool_call(open_step(ts), payload.get("call_id"), payload.get("name") or "",
                                      payload.get("arguments"))
                elif ptype == "custom_tool_call":
                    builder.tool_call(open_step(ts), payload.get("call_id"), payload.get("name") or "",
                                      {"input": payload.get("input")})
                elif ptype == "local_shell_call":
                    action = payload.get("action") if isinstance(payload.get("action"), dict) else {}
                    builder.tool_call(open_step(ts), payload.get("call_id") or payload.get("id"), "local_shell",
                                      {k: v for k, v in action.items() if k != "type"})
                elif ptype == "web_search_call":
                    builder.tool_call(open_step(ts), payload.get("id"), "web_search",
                                      payload.get("action") if isinstance(payload.get("action"), dict) else {})
                elif ptype in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
                    builder.observe(payload.get("call_id"), _output(payload.get("output")))
            elif kind == "event_msg":
                if ptype == "user_message":
                    close()
                    builder.user(payload.get("message") or "", ts)
                elif ptype == "token_count" and isinstance(payload.get("info"), dict):
                    total = payload["info"].get("total_token_usage")
                    if isinstance(total, dict):
                        now = _usage(total)
                        if now != last_total:
                            close(_minus(now, last_total))
                            last_total = now
                elif ptype in ("error", "stream_error"):
                    close()
                    builder.system(str(payload.get("message") or ""), ts, extra={"error": ptype})
                elif ptype == "turn_aborted":
                    builder.note(f"turn aborted: {payload.get('reason')}")
        close()
        if last_total != Usage():
            builder.cli_totals = last_total
        return builder

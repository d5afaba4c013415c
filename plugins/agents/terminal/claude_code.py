"""Claude Code 2.1.96 (TraceBench: claude-opus-4.6 with reasoning effort high).

Headless: ``claude -p --output-format stream-json --verbose
--dangerously-skip-permissions --model M --effort E -- PROMPT`` with
``ANTHROPIC_BASE_URL`` at the proxy, the dummy ``ANTHROPIC_API_KEY``,
``IS_SANDBOX=1`` (allowed as root), non-essential traffic, auto-update,
telemetry and error reporting off, and ``CLAUDE_CONFIG_DIR`` in the episode
home.  It calls only ``POST /v1/messages`` (plus a ``HEAD /`` probe); the
effort arrives as ``output_config.effort``.

Native log: ``$CLAUDE_CONFIG_DIR/projects/<cwd-slug>/<session>.jsonl``, one
entry per content block; the entries of one model call share
``message.id`` and the last carries the call's final ``usage`` (Anthropic
counting: ``input_tokens`` excludes the cache reads and writes).  Tool results
come back as ``tool_result`` blocks of the following user entry.  The
stream-json ``result`` event on stdout has the run's totals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import AgentContext
from harness.atif import find_native_files, native_file_size
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.base import TerminalAgent, json_lines, merge, read_native_log, status_in
from tsagent_plugins.agents.terminal.proxylog import ProxyCall

#: Profile effort -> ``--effort`` value (Claude Code accepts low, medium, high, max).
EFFORT = {"low": "low", "medium": "medium", "high": "high", "xhigh": "max"}


def _blocks(content: Any) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _result_text(content: Any) -> Any:
    """A tool_result's content as ATIF content (text; images become a placeholder)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in _blocks(content):
        if block.get("type") == "text":
            parts.append(block.get("text") or "")
        elif block.get("type") == "image":
            parts.append("[image]")
    return "\n".join(parts)


class ClaudeCode(TerminalAgent):
    """Anthropic's Claude Code CLI (npm ``@anthropic-ai/claude-code``)."""

    name = "claude-code"
    package = "@anthropic-ai/claude-code"
    version = "2.1.96"
    binary = "claude"

    def config_dir(self, ctx: AgentContext) -> str:
        return f"{ctx.home}/.claude"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": ctx.model_base_url or "",
            "ANTHROPIC_API_KEY": self.dummy_key(),
            "ANTHROPIC_MODEL": ctx.profile.model,
            "CLAUDE_CONFIG_DIR": self.config_dir(ctx),
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "DISABLE_BUG_COMMAND": "1",
            "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
        }

    def config_files(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        if not extra:
            return {}
        return {f"{self.config_dir(ctx)}/settings.json": json.dumps(merge({}, extra), indent=2)}

    def cli_argv(self, ctx: AgentContext, extra_args: list[str]) -> list[str]:
        argv = [self.binary, "-p", "--output-format", "stream-json", "--verbose",
                "--dangerously-skip-permissions", "--model", ctx.profile.model]
        effort = ctx.profile.reasoning_effort
        if effort:
            argv += ["--effort", EFFORT[effort]]
        return argv + extra_args + ["--", ctx.prompt]

    # -- failures ------------------------------------------------------------------
    def failure_messages(self, stdout: str, stderr: str, exit_code: int | None) -> list[tuple[int | None, str]]:
        out = []
        for event in json_lines(stdout):
            if event.get("type") == "result" and event.get("is_error"):
                text = str(event.get("result") or event.get("subtype") or "error")
                out.append((status_in(text), text))
        if not out and exit_code not in (0, None):
            for line in stderr.splitlines():
                if "API Error" in line or "Connection error" in line:
                    out.append((status_in(line), line.strip()))
        return out

    # -- native log ------------------------------------------------------------------
    def native_logs(self, home: Path) -> list[Path]:
        # the agent's home: listed with bounds, plain or stored compressed
        return find_native_files(Path(home) / ".claude" / "projects", "**/*.jsonl")

    def _session_file(self, home: Path, events: list[dict]) -> Path:
        session = next((e.get("session_id") for e in events if e.get("session_id")), None)
        projects = Path(home) / ".claude" / "projects"
        if session:
            found = [p for p in find_native_files(projects, "*/*.jsonl") if p.name == f"{session}.jsonl"]
            if found:
                return found[0]
        candidates = sorted(find_native_files(projects, "*/*.jsonl"), key=lambda p: (native_file_size(p) or 0, p.name))
        if not candidates:
            raise FileNotFoundError(f"no Claude Code session log under {projects}")
        return candidates[-1]

    def convert(self, home: Path, stdout: str, calls: list[ProxyCall] | None) -> TrajectoryBuilder:
        from harness.wire import from_anthropic  # the wire formats load with the first conversion

        events = json_lines(stdout)
        path = self._session_file(home, events)
        entries = json_lines(read_native_log(path))
        init = next((e for e in events if e.get("type") == "system" and e.get("subtype") == "init"), {})
        version = init.get("claude_code_version") or next((e["version"] for e in entries if e.get("version")),
                                                          self.version)
        model = init.get("model") or next(
            (e["message"]["model"] for e in entries if e.get("type") == "assistant"
             and isinstance(e.get("message"), dict) and e["message"].get("model") not in (None, "<synthetic>")), None)
        builder = TrajectoryBuilder(self.name, version, model, path.stem)
        builder.extra["cwd"] = next((e.get("cwd") for e in entries if e.get("cwd")), None)

        step: dict | None = None
        step_id: str | None = None
        usage_acc: dict[str, int] = {}
        texts: list[str] = []
        thoughts: list[str] = []

        def close() -> None:
            nonlocal step, step_id, usage_acc, texts, thoughts
            if step is not None:
                step["message"] = "\n".join(t for t in texts if t)
                if thoughts:
                    step["reasoning_content"] = "\n".join(thoughts)
                if usage_acc:
                    builder.set_usage(step, from_anthropic(usage_acc))
            step, step_id, usage_acc, texts, thoughts = None, None, {}, [], []

        sidechain = 0
        for entry in entries:
            kind = entry.get("type")
            message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
            if entry.get("isSidechain"):
                sidechain += 1
                continue
            if kind == "assistant":
                if message.get("model") == "<synthetic>" or entry.get("isApiErrorMessage") or entry.get("error"):
                    close()
                    text = "\n".join(b.get("text", "") for b in _blocks(message.get("content")) if b.get("type") == "text")
                    builder.system(text, entry.get("timestamp"), extra={"error": entry.get("error") or True})
                    continue
                if message.get("id") != step_id or step is None:
                    close()
                    step = builder.agent("", entry.get("timestamp"), model_name=message.get("model"))
                    step_id = message.get("id")
                for block in _blocks(message.get("content")):
                    if block.get("type") == "text":
                        texts.append(block.get("text") or "")
                    elif block.get("type") == "thinking":
                        thoughts.append(block.get("thinking") or "")
                    elif block.get("type") == "tool_use":
                        builder.tool_call(step, block.get("id"), block.get("name") or "", block.get("input"))
                usage = message.get("usage")
                if isinstance(usage, dict):
                    for key, value in usage.items():
                        if isinstance(value, int) and not isinstance(value, bool):
                            usage_acc[key] = max(usage_acc.get(key, 0), value)
            elif kind == "user" and not entry.get("isMeta"):
                close()
                content = message.get("content")
                plain = []
                for block in _blocks(content):
                    if block.get("type") == "tool_result":
                        builder.observe(block.get("tool_use_id"), _result_text(block.get("content")),
                                        is_error=bool(block.get("is_error")))
                    elif block.get("type") == "text":
                        plain.append(block.get("text") or "")
                if plain:
                    builder.user("\n".join(plain), entry.get("timestamp"))
        close()
        subagents = [p for p in find_native_files(path.parent, "*/subagents/*.jsonl")
                     if p.relative_to(path.parent).parts[0] == path.stem]
        if sidechain or subagents:
            builder.note(f"subagent (Task tool) conversations are not inlined: {sidechain} sidechain entries, "
                         f"{len(subagents)} subagent log(s) kept under home/")

        result = next((e for e in reversed(events) if e.get("type") == "result"), None)
        if result is not None:
            if isinstance(result.get("usage"), dict):
                builder.cli_totals = from_anthropic(result["usage"])
            if isinstance(result.get("total_cost_usd"), (int, float)):
                builder.cli_cost_usd = float(result["total_cost_usd"])
            builder.extra["result"] = {k: result.get(k) for k in ("subtype", "is_error", "num_turns", "stop_reason",
                                                                  "terminal_reason") if k in result}
        else:
            builder.note("the stream-json output has no final 'result' event (the run did not finish)")
        return builder


"""Gemini CLI 0.35.3 (TraceBench: gemini-3.1-pro with reasoning effort high).

Headless: ``gemini --yolo -m M --output-format json -p PROMPT < /dev/null``
in a fresh HOME whose ``~/.gemini/settings.json`` pins the auth type to an API
key (some versions reject a key plus base URL otherwise), turns folder trust,
usage statistics, telemetry, auto-update and its notice off, skips the
next-speaker check, uses the built-in grep (else it downloads ripgrep) and
caps the chat model attempts.  ``GOOGLE_GEMINI_BASE_URL`` points at the proxy
(plain http is accepted for loopback), ``GEMINI_API_KEY`` is the dummy key and
``GEMINI_CLI_NO_RELAUNCH`` saves a second Node start.  With ``-m`` it calls
only ``POST /v1beta/models/M:streamGenerateContent?alt=sse``.  The effort
becomes ``thinkingConfig.thinkingLevel`` through a model-config override
(0.35.3 has no built-in alias for gemini-3.1 models).

Native log: ``~/.gemini/tmp/<cwd-basename>/chats/session-*.json``: a
``messages`` list of ``user`` and ``gemini`` messages; each ``gemini`` message
is one model call with its text, thought summaries, tool calls (with their
results) and token counts (``output`` excludes ``thoughts``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import untrusted
from harness import AgentContext
from harness.atif import find_native_files
from harness.wire import Usage
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
from tsagent_plugins.agents.terminal.base import NATIVE_LOG_BOUNDS, TerminalAgent, merge, read_native_log, status_in
from tsagent_plugins.agents.terminal.proxylog import ProxyCall

#: Profile effort -> Gemini ``ThinkingLevel``.
THINKING_LEVEL = {"low": "LOW", "medium": "MEDIUM", "high": "HIGH", "xhigh": "HIGH"}


def _session(path: Path) -> dict:
    """One session file (bounded; invalid UTF-8 replaced, so steps are kept); ValueError with the reason."""
    read = untrusted.parse_json(read_native_log(path), NATIVE_LOG_BOUNDS, str(path))
    if not read.ok:
        raise ValueError(read.reason)
    if not isinstance(read.value, dict):
        raise ValueError(f"{path}: not a JSON object")
    return read.value


def final_json(stdout: str) -> dict | None:
    """The JSON object ``--output-format json`` prints (text before it is skipped)."""
    text = stdout.strip()
    for start in [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n" and text[i + 1:i + 2] == "{"]:
        try:
            value = json.loads(text[start:])
        except (ValueError, RecursionError):
            continue
        return value if isinstance(value, dict) else None
    return None


def token_usage(tokens: dict) -> Usage:
    """Normalised usage of a session message's ``tokens`` (completion = output + thoughts)."""
    thoughts = int(tokens.get("thoughts") or 0)
    return Usage(int(tokens.get("input") or 0) + int(tokens.get("tool") or 0), int(tokens.get("cached") or 0),
                 int(tokens.get("output") or 0) + thoughts, thoughts)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text") or "" for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _thoughts(thoughts: Any) -> str:
    """Thought summaries joined: streamed fragments run on, a new subject starts a paragraph."""
    out = ""
    for thought in thoughts if isinstance(thoughts, list) else []:
        if not isinstance(thought, dict):
            continue
        subject, description = thought.get("subject") or "", thought.get("description") or ""
        if subject:
            out += ("\n\n" if out else "") + f"**{subject}**" + (f"\n{description}" if description else "")
        else:
            out += description
    return out


def _tool_output(result: Any) -> tuple[str, bool]:
    """(text the model was given, whether it is an error) from a tool call's ``result`` parts."""
    texts, error = [], False
    for part in result if isinstance(result, list) else []:
        response = ((part or {}).get("functionResponse") or {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            if "error" in response:
                error = True
                texts.append(str(response["error"]))
            elif "output" in response:
                texts.append(str(response["output"]))
            else:
                texts.append(json.dumps(response, ensure_ascii=False))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return "\n".join(texts), error


def streamed_thoughts(call: ProxyCall) -> str:
    """The thought text of a Gemini response as streamed (fragments joined exactly), from the proxy log
    (read by the wire format, :meth:`harness.WireFormat.reasoning_text`)."""
    from harness.wire import wire_format  # the wire formats load with the first conversion

    fmt = wire_format(call.wire)
    return fmt.reasoning_text(call.events()) if fmt is not None else ""


class GeminiCli(TerminalAgent):
    """Google's Gemini CLI (npm ``@google/gemini-cli``)."""

    name = "gemini-cli"
    package = "@google/gemini-cli"
    version = "0.35.3"
    binary = "gemini"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            "GEMINI_API_KEY": self.dummy_key(),
            "GOOGLE_GEMINI_BASE_URL": ctx.model_base_url or "",
            "GEMINI_CLI_NO_RELAUNCH": "true",
            "NO_BROWSER": "true",
        }

    def settings(self, ctx: AgentContext) -> dict[str, Any]:
        """``~/.gemini/settings.json`` as a mapping (before the profile's ``options.config``)."""
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False, "maxAttempts": 3},
            "model": {"skipNextSpeakerCheck": True},
            "tools": {"useRipgrep": False},
        }
        effort = ctx.profile.reasoning_effort
        if effort:
            settings["modelConfigs"] = {"customOverrides": [{
                "match": {"model": ctx.profile.model},
                "modelConfig": {"generateContentConfig": {"thinkingConfig": {
                    "includeThoughts": True, "thinkingLevel": THINKING_LEVEL[effort]}}},
            }]}
        return settings

    def config_files(self, ctx: AgentContext, extra: dict[str, Any]) -> dict[str, str]:
        return {f"{ctx.home}/.gemini/settings.json": json.dumps(merge(self.settings(ctx), extra), indent=2)}

    def cli_argv(self, ctx: AgentContext, extra_args: list[str]) -> list[str]:
        return [self.binary, "--yolo", "-m", ctx.profile.model, "--output-format", "json", *extra_args,
                "-p", ctx.prompt]

    @staticmethod
    def _thoughts_from_proxy(builder: TrajectoryBuilder, calls: list[ProxyCall] | None) -> None:
        """Replace the session file's thought summaries by the streamed text when steps and calls pair up.

        The session file stores each streamed thought fragment trimmed, so
        joining them loses the spaces between fragments; the proxy log has
        the text as the model sent it.
        """
        steps = builder.agent_steps()
        conversation = [c for c in calls or [] if c.conversational]
        if not steps or len(steps) != len(conversation):
            return
        replaced = 0
        for step, call in zip(steps, conversation, strict=True):
            text = streamed_thoughts(call)
            if text and text != step.get("reasoning_content"):
                step["reasoning_content"] = text
                replaced += 1
        if replaced:
            builder.note(f"reasoning text of {replaced} step(s) taken from the proxy log: the session file keeps "
                         "streamed thought fragments trimmed")

    # -- failures ------------------------------------------------------------------
    def failure_messages(self, stdout: str, stderr: str, exit_code: int | None) -> list[tuple[int | None, str]]:
        out = []
        for text in (stdout, stderr):  # the final JSON goes to stderr when the run failed
            error = (final_json(text) or {}).get("error")
            if isinstance(error, dict):
                code = error.get("code")
                out.append((code if isinstance(code, int) and 400 <= code < 600 else None,
                            str(error.get("message") or "")))
        if out:
            for line in stderr.splitlines():
                if line.startswith("Error when talking to Gemini API"):
                    out.append((status_in(line), line.strip()))
        return out

    # -- native log ------------------------------------------------------------------
    def native_logs(self, home: Path) -> list[Path]:
        return find_native_files(Path(home) / ".gemini" / "tmp", "*/chats/session-*.json")

    def convert(self, home: Path, stdout: str, calls: list[ProxyCall] | None) -> TrajectoryBuilder:
        logs = self.native_logs(home)
        if not logs:
            raise FileNotFoundError(f"no Gemini CLI session file under {Path(home) / '.gemini' / 'tmp'}")
        final = final_json(stdout) or {}
        session_id = final.get("session_id")
        sessions = [(p, _session(p)) for p in logs]
        path, session = next(((p, s) for p, s in sessions if session_id and s.get("sessionId") == session_id),
                             sessions[-1])
        messages = [m for m in session.get("messages") or [] if isinstance(m, dict)]
        model = next((m.get("model") for m in messages if m.get("type") == "gemini" and m.get("model")), None)
        builder = TrajectoryBuilder(self.name, self.version, model, session.get("sessionId") or path.stem)
        for message in messages:
            kind, ts = message.get("type"), message.get("timestamp")
            if kind == "user":
                builder.user(_text(message.get("content")), ts)
            elif kind == "gemini":
                tokens = message.get("tokens")
                step = builder.agent(_text(message.get("content")), ts, reasoning=_thoughts(message.get("thoughts")),
                                     usage=token_usage(tokens) if isinstance(tokens, dict) else None,
                                     model_name=message.get("model"))
                for call in message.get("toolCalls") or []:
                    if not isinstance(call, dict):
                        continue
                    call_id = builder.tool_call(step, call.get("id"), call.get("name") or "", call.get("args"))
                    if call.get("result") is not None:
                        text, error = _tool_output(call.get("result"))
                        builder.observe(call_id, text, is_error=error or call.get("status") == "error",
                                        extra={"status": call.get("status")})
            elif kind in ("error", "warning", "info"):
                builder.system(_text(message.get("content")), ts, extra={"kind": kind})
        self._thoughts_from_proxy(builder, calls)
        stats = final.get("stats") if isinstance(final.get("stats"), dict) else {}
        models = stats.get("models") if isinstance(stats.get("models"), dict) else {}
        if models:
            total = Usage()
            for entry in models.values():
                tokens = (entry or {}).get("tokens") or {}
                thoughts = int(tokens.get("thoughts") or 0)
                total = total + Usage(int(tokens.get("prompt") or 0) + int(tokens.get("tool") or 0),
                                      int(tokens.get("cached") or 0),
                                      int(tokens.get("candidates") or 0) + thoughts, thoughts)
            builder.cli_totals = total
        elif "error" in final:
            builder.note(f"Gemini CLI reported an error: {(final.get('error') or {}).get('message')}")
        return builder

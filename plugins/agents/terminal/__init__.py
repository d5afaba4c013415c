"""The four terminal agents of TraceBench (Section 4.3, Appendix C): real pinned CLIs, headless.

``claude-code`` (Claude Code 2.1.96), ``codex`` (Codex 0.124.0), ``gemini-cli``
(Gemini CLI 0.35.3) and ``opencode`` (OpenCode 1.14.41).  Each runs inside the
sandbox against the harness model proxy with a dummy key, keeps its native
session log in the episode home, and converts it into an ATIF trajectory
cross-checked against the proxy log (see :mod:`tsagent_plugins.agents.terminal.base`).
"""

from harness import hookimpl
from tsagent_plugins.agents.terminal.base import TerminalAgent
from tsagent_plugins.agents.terminal.claude_code import ClaudeCode
from tsagent_plugins.agents.terminal.codex import Codex
from tsagent_plugins.agents.terminal.gemini_cli import GeminiCli
from tsagent_plugins.agents.terminal.opencode import OpenCode

AGENTS = (ClaudeCode, Codex, GeminiCli, OpenCode)

__all__ = ["AGENTS", "ClaudeCode", "Codex", "GeminiCli", "OpenCode", "TerminalAgent"]


@hookimpl
def register_agents(register):
    for cls in AGENTS:
        register(cls())

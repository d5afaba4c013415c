"""Mapping a scripted ``shell:`` call onto the shell tool the request offers.

Each CLI names and shapes its shell tool differently; the tool list in the
request says which one is there:

=================  ===========================  ==============================
CLI                tool                         arguments
=================  ===========================  ==============================
Claude Code        ``Bash``                     ``{command, description}``
Codex              ``exec_command``             ``{cmd}``
Codex (older)      ``shell``                    ``{command: ["bash", "-lc", c]}``
Codex              ``local_shell`` (built-in)   argv ``["bash", "-lc", c]``
Gemini CLI         ``run_shell_command``        ``{command}`` (+ ``description``)
OpenCode           ``bash``                     ``{command, description}``
=================  ===========================  ==============================

Arguments are built from the tool's JSON schema: ``cmd`` or ``command`` gets
the command (a string, or ``bash -lc`` argv when the schema wants an array),
and ``description`` is filled when the schema has one.
"""

from __future__ import annotations

from typing import Any

from tsagent_plugins.models.wire.base import ToolSpec

#: Shell tool names, most specific first.
SHELL_TOOLS = ("Bash", "bash", "run_shell_command", "exec_command", "shell_command", "shell", "local_shell")


class ToolMismatch(LookupError):
    """The script asks for a tool the request does not offer."""


def _props(schema: Any) -> dict[str, Any]:
    props = schema.get("properties") if isinstance(schema, dict) else None
    return props if isinstance(props, dict) else {}


def shell_arguments(tool: ToolSpec, command: str) -> Any:
    """Arguments for running ``command`` through ``tool``."""
    argv = ["bash", "-lc", command]
    if tool.kind == "local_shell":
        return argv
    props = _props(tool.schema)
    args: dict[str, Any] = {}
    key = "cmd" if "cmd" in props else "command"
    wants_array = isinstance(props.get(key), dict) and props[key].get("type") == "array"
    args[key] = argv if wants_array else command
    if "description" in props:
        args["description"] = "Run: " + (command if len(command) <= 60 else command[:57] + "...")
    return args


def find_shell_tool(tools: list[ToolSpec]) -> ToolSpec:
    """The request's shell tool; :class:`ToolMismatch` naming the offered tools if none."""
    by_name = {t.name: t for t in tools}
    for name in SHELL_TOOLS:
        if name in by_name:
            return by_name[name]
    offered = ", ".join(sorted(by_name)) or "none"
    raise ToolMismatch(f"the script asks for a shell call but the request offers no shell tool "
                       f"(known: {', '.join(SHELL_TOOLS)}; offered: {offered})")


def find_tool(tools: list[ToolSpec], name: str) -> ToolSpec:
    """The offered tool called ``name``; :class:`ToolMismatch` if it is not offered."""
    for tool in tools:
        if tool.name == name:
            return tool
    offered = ", ".join(sorted(t.name for t in tools)) or "none"
    raise ToolMismatch(f"the script calls tool {name!r} but the request does not offer it (offered: {offered})")

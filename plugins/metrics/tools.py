"""What each tool call of an ATIF trajectory does: shell, read, write, edit or patch.

The four terminal agents name their tools differently; this module maps them
onto a few roles (function names are compared case-insensitively, after the
last ``.`` or ``__`` of a namespaced name):

=========  ======================================================================
role       tools (arguments read)
=========  ======================================================================
shell      Claude Code ``Bash`` {command}; Codex ``exec_command`` {cmd},
           ``shell``/``local_shell`` {command: str | argv list}; Gemini CLI
           ``run_shell_command`` {command}; OpenCode ``bash`` {command}; and any
           tool whose arguments carry ``command``/``cmd`` with a shell string
read       ``Read`` {file_path}; ``read_file`` {absolute_path | file_path | path};
           ``read_many_files`` {paths}; ``view_image`` {path}; OpenCode ``read``
           {filePath}; ``str_replace_based_edit_tool`` with command ``view``
write      ``Write``/``write_file``/``write``/``create_file`` {path + content};
           ``str_replace_based_edit_tool`` with command ``create`` {file_text}
edit       ``Edit`` {file_path, old_string, new_string, replace_all};
           ``MultiEdit`` {file_path, edits[]}; Gemini ``replace``; OpenCode
           ``edit`` {filePath, oldString, newString, replaceAll};
           ``str_replace_based_edit_tool`` ``str_replace``/``insert``
patch      Codex ``apply_patch`` {input} (or a raw patch string)
=========  ======================================================================

A tool result is an error when its ``extra`` says so (``is_error``/``error``
true, or ``status`` in error/failed/failure), or -- for reads, whose success
decides whether a plot was inspected -- when its text is an error message
(``<tool_use_error>``, ``Error...``, "does not exist", "No such file",
"not found", "unable to", "failed to", "cannot").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from harness.atif import Exchange
from tsagent_plugins.metrics.shell import argv_command, normalize_path

SHELL = {"bash", "shell", "exec_command", "run_shell_command", "local_shell", "execute_command", "run_command",
         "terminal", "shell_command", "run_terminal_cmd", "execute_bash", "exec"}
READ = {"read", "read_file", "read_many_files", "view_image", "view", "open_file", "readfile", "read_image",
        "image_view"}
WRITE = {"write", "write_file", "create_file", "writefile", "save_file"}
EDIT = {"edit", "multiedit", "replace", "edit_file", "str_replace", "str_replace_editor", "search_replace"}
PATCH = {"apply_patch"}
EDITOR = {"str_replace_based_edit_tool", "text_editor"}

_PATH_KEYS = ("file_path", "filePath", "absolute_path", "path", "filename", "file", "target_file", "notebook_path")
_CONTENT_KEYS = ("content", "contents", "file_text", "text", "data")
_ERROR_TEXT = re.compile(
    r"^\s*(<tool_use_error>|error\b|\[error\])|does not exist|no such file|not found|unable to|failed to|cannot (open|read)",
    re.IGNORECASE)


@dataclass
class ToolUse:
    """The role of one tool call and the arguments that matter for it."""

    role: str  # shell | read | write | edit | patch | other
    command: str | None = None
    paths: tuple[str, ...] = ()
    content: str | None = None
    edits: tuple[tuple[str, str, bool], ...] = ()  # (old, new, replace_all)
    patch: str | None = None


def base_name(function_name: str) -> str:
    name = function_name.strip().lower()
    for sep in ("__", "."):
        if sep in name:
            name = name.rsplit(sep, 1)[-1]
    return name


def _first_str(args: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str):
            return value
    return None


def _shell_command(args: dict) -> str | None:
    for key in ("command", "cmd", "script"):
        value = args.get(key)
        if isinstance(value, str):
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return argv_command(value)
    return None


def classify(exchange: Exchange) -> ToolUse:
    """The role of ``exchange``'s tool call (``other`` for unknown or malformed calls)."""
    name = base_name(exchange.function_name)
    args = exchange.arguments
    if name in PATCH:
        raw = exchange.raw_arguments
        text = raw if isinstance(raw, str) else _first_str(args or {}, ("input", "patch", "content"))
        return ToolUse("patch", patch=text)
    if args is None:
        return ToolUse("other")
    if name in EDITOR:
        sub = args.get("command")
        path = _first_str(args, _PATH_KEYS)
        paths = (normalize_path(path),) if path else ()
        if sub == "view":
            return ToolUse("read", paths=paths)
        if sub == "create":
            return ToolUse("write", paths=paths, content=_first_str(args, _CONTENT_KEYS))
        if sub == "str_replace":
            return ToolUse("edit", paths=paths, edits=((str(args.get("old_str", "")), str(args.get("new_str", "")), False),))
        return ToolUse("edit", paths=paths)  # insert / undo: new version not shown in full
    if name in SHELL or (name not in READ | WRITE | EDIT and _shell_command(args) is not None):
        command = _shell_command(args)
        if command is not None:
            return ToolUse("shell", command=command)
    if name in READ:
        paths = [p for p in args.get("paths", []) if isinstance(p, str)] if isinstance(args.get("paths"), list) else []
        single = _first_str(args, _PATH_KEYS)
        if single:
            paths.insert(0, single)
        return ToolUse("read", paths=tuple(normalize_path(p) for p in paths))
    if name in WRITE:
        path = _first_str(args, _PATH_KEYS)
        return ToolUse("write", paths=(normalize_path(path),) if path else (), content=_first_str(args, _CONTENT_KEYS))
    if name in EDIT:
        path = _first_str(args, _PATH_KEYS)
        edits: list[tuple[str, str, bool]] = []
        items = args.get("edits") if isinstance(args.get("edits"), list) else [args]
        for item in items:
            if not isinstance(item, dict):
                continue
            old = _first_str(item, ("old_string", "oldString", "old_str", "old_text"))
            new = _first_str(item, ("new_string", "newString", "new_str", "new_text"))
            if old is not None and new is not None:
                edits.append((old, new, bool(item.get("replace_all") or item.get("replaceAll"))))
        return ToolUse("edit", paths=(normalize_path(path),) if path else (), edits=tuple(edits))
    return ToolUse("other")


def is_error(result: dict[str, Any] | None, text: str | None = None, check_text: bool = False) -> bool:
    """Whether a tool result reports a failure (see the module docstring)."""
    if not result:
        return True
    extra = result.get("extra")
    if isinstance(extra, dict):
        if extra.get("is_error") or extra.get("error"):
            return True
        status = extra.get("status")
        if isinstance(status, str) and status.lower() in ("error", "failed", "failure", "errored"):
            return True
    if result.get("is_error"):
        return True
    if check_text and text is not None and _ERROR_TEXT.search(text[:400]):
        return True
    return False

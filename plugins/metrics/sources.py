"""Replaying a trajectory's file changes: which Python source versions the agent displayed.

:func:`replay` walks the tool calls of an ATIF trajectory in order and keeps
the content of every workspace file whose content the trajectory shows
(written by a write tool, by the shell -- ``cat > x.py <<EOF``, ``tee``,
``echo ... > x.py`` -- or changed by an edit tool or a Codex patch applied to a
known earlier version).  It collects:

* every Python interpreter invocation (:class:`tsagent_plugins.metrics.shell.PythonRun`);
* the Python source versions first displayed in the trajectory: inline ``-c``
  code, code fed on standard input (here-documents, here-strings, pipes), and
  each version of a file that ends in ``.py`` or is run by ``python`` -- a
  version being the file's full content after a write, an edit or a patch.

A file changed in a way the trajectory does not show in full (``sed -i``, an
edit of a file whose earlier content is unknown, a patch that does not apply)
becomes unknown until it is written again; edits of unknown content add no
version.  Versions are compared after normalizing line endings and trailing
whitespace, so a source shown twice counts once (TraceBench Appendix G.1).
"""

from __future__ import annotations

import ast
import re
import textwrap
from dataclasses import dataclass, field

from harness.atif import exchanges
from tsagent_plugins.metrics.shell import Display, FileUnknown, FileWrite, Patch, PythonRun, analyze, normalize_path
from tsagent_plugins.metrics.tools import classify


@dataclass
class Replay:
    """What :func:`replay` found: interpreter runs, distinct source versions, parser use."""

    runs: list[PythonRun] = field(default_factory=list)
    versions: dict[str, str] = field(default_factory=dict)  # normalized source -> origin
    shell_commands: int = 0
    fallback_parses: int = 0
    displays: dict[int, list[str]] = field(default_factory=dict)  # exchange index -> displayed paths
    runs_at: dict[int, int] = field(default_factory=dict)  # exchange index -> interpreter runs

    @property
    def statements(self) -> int:
        return sum(count_statements(source) for source in self.versions)


def _normalized(source: str) -> str:
    lines = source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def count_statements(source: str) -> int:
    """Number of ``ast.stmt`` nodes (``ast.walk``) of ``source``; 0 when it does not parse.

    Indented code (a here-document written with leading spaces) is dedented first.
    """
    for text in (source, textwrap.dedent(source)):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue
        return sum(isinstance(node, ast.stmt) for node in ast.walk(tree))
    return 0


class _Files:
    def __init__(self) -> None:
        self.content: dict[str, str | None] = {}
        self.history: list[tuple[str, str]] = []  # (path, version) in order

    def get(self, path: str) -> str | None:
        return self.content.get(path)

    def set(self, path: str, text: str | None) -> None:
        self.content[path] = text
        if text is not None:
            self.history.append((path, text))


def apply_edits(text: str, edits: tuple[tuple[str, str, bool], ...]) -> str | None:
    """``text`` after exact-string replacements; None when an old string is absent."""
    for old, new, replace_all in edits:
        if old == "":
            if text:
                return None
            text = new
            continue
        if old not in text:
            return None
        text = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return text


_PATCH_FILE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$")


def apply_patch(patch: str, files: _Files) -> None:
    """Apply a Codex ``*** Begin Patch`` document to the known files."""
    lines = patch.replace("\r\n", "\n").split("\n")
    i = 0
    while i < len(lines):
        m = _PATCH_FILE.match(lines[i])
        if not m:
            i += 1
            continue
        action, path = m.group(1), normalize_path(m.group(2))
        i += 1
        body: list[str] = []
        while i < len(lines) and (not lines[i].startswith("*** ") or lines[i].startswith("*** Move to:")
                                  or lines[i] == "*** End of File"):
            body.append(lines[i])
            i += 1
        move = next((b[len("*** Move to:"):].strip() for b in body if b.startswith("*** Move to:")), None)
        body = [b for b in body if not b.startswith("*** Move to:")]
        if action == "Delete":
            files.content.pop(path, None)
        elif action == "Add":
            files.set(path, "".join(b[1:] + "\n" for b in body if b.startswith("+")))
        else:
            new = _apply_hunks(files.get(path), body)
            target = normalize_path(move) if move else path
            if move:
                files.content.pop(path, None)
            files.set(target, new)


def _apply_hunks(text: str | None, body: list[str]) -> str | None:
    if text is None:
        return None
    lines = text.split("\n")
    hunks: list[list[str]] = []
    for line in body:
        if line.startswith("@@") or not hunks:
            hunks.append([])
            if line.startswith("@@"):
                continue
        hunks[-1].append(line)
    position = 0
    for hunk in hunks:
        hunk = [h for h in hunk if h != "*** End of File"]
        old = [h[1:] for h in hunk if h[:1] in (" ", "-") or h == ""]
        new = [h[1:] for h in hunk if h[:1] in (" ", "+") or h == ""]
        if not old and not new:
            continue
        found = _find(lines, old, position)
        if found is None:
            return None
        lines[found:found + len(old)] = new
        position = found + len(new)
    return "\n".join(lines)


def _find(lines: list[str], block: list[str], start: int) -> int | None:
    if not block:
        return len(lines)
    for strip in (False, True):
        for i in range(start, len(lines) - len(block) + 1):
            window = lines[i:i + len(block)]
            if (window == block) if not strip else [w.strip() for w in window] == [b.strip() for b in block]:
                return i
    return None


def replay(trajectory: dict | None) -> Replay:
    """Walk the tool calls of ``trajectory`` (an ATIF dict) in order (see the module docstring)."""
    out = Replay()
    files = _Files()
    executed: set[str] = set()

    def add_version(source: str | None, origin: str) -> None:
        if source is None:
            return
        key = _normalized(source)
        if key and key not in out.versions:
            out.versions[key] = origin

    for index, exchange in enumerate(exchanges(trajectory)):
        use = classify(exchange)
        if use.role == "shell" and use.command:
            out.shell_commands += 1
            analysis = analyze(use.command, read_file=files.get)
            if analysis.parser == "fallback":
                out.fallback_parses += 1
            for event in analysis.events:
                if isinstance(event, PythonRun):
                    out.runs.append(event)
                    out.runs_at[index] = out.runs_at.get(index, 0) + 1
                    if event.source is not None:
                        add_version(event.source, event.kind)
                    if event.path:
                        executed.add(event.path)
                elif isinstance(event, FileWrite):
                    previous = files.content.get(event.path, "") if event.append else ""
                    files.set(event.path, None if previous is None else previous + event.content)
                elif isinstance(event, FileUnknown):
                    files.set(event.path, None)
                elif isinstance(event, Patch):
                    apply_patch(event.text, files)
                elif isinstance(event, Display):
                    out.displays.setdefault(index, []).append(event.path)
        elif use.role == "write" and use.paths and use.content is not None:
            files.set(use.paths[0], use.content)
        elif use.role == "edit" and use.paths:
            current = files.get(use.paths[0])
            files.set(use.paths[0], apply_edits(current, use.edits) if current is not None and use.edits else None)
        elif use.role == "patch" and use.patch:
            apply_patch(use.patch, files)
    for path, version in files.history:
        if path.endswith(".py") or path in executed:
            add_version(version, f"file:{path}")
    return out

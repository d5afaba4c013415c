"""Numeric literals exposed to the agent through tool output (TraceBench Appendix G.2).

:func:`count_numbers` counts the numeric literals of one tool output after
removing what the metric excludes:

1. tool-wrapper metadata lines (``Exit code: 0``, ``Wall time: 0.3 seconds``,
   ``Process exited with code 0``, ``Chunk ID``, ``Original token count``,
   Gemini CLI's ``Command:``/``Directory:``/``Error:``/``Exit Code:``/``Signal:``/
   ``Background PIDs:``/``Process Group PGID:`` lines; the ``Output:`` prefix is
   dropped and the output kept) -- the ``Command:`` line is also the echo of
   the command's source;
2. tracebacks (from ``Traceback (most recent call last):`` through the
   exception line, chained tracebacks included), ``File "...", line N``
   error blocks (syntax errors), warnings (``file.py:12: UserWarning: ...``
   and the source line under it; lines starting with ``Warning``/``WARNING``/
   ``...Warning:``) and shell diagnostics (``bash: line 3: ...``);
3. process ids (``pid 123``, ``PID: 123``, ``[1] 12345`` job lines);
4. file-reader line numbers (``    12→`` and ``12\\t`` prefixes of Read tools,
   OpenCode's ``00012| ``) -- only for outputs of file-reading tools;
5. identifiers: UUIDs, ``0x`` addresses, hex ids (6+ hex digits with at least
   one letter and one digit), paths (a ``/`` with a letter in the match) and
   file names with an extension;
6. image payloads: ``data:`` URIs and base64 runs of 64+ characters.

What remains is scanned for integers, decimals and scientific notation
(optionally signed: ``-1.5e-3``) that are not part of an identifier
(``col1``, ``float64``, ``x2`` do not count; ``3s`` is a unit and does not
count either), and for ``nan`` / ``inf`` / ``infinity`` (any case, signed).
Every entry of a printed array or table counts separately.

Whole outputs are skipped by the extractor (not here) when they echo source
code: outputs of write/edit/patch tools, reads of source files, and shell
commands that only display source files (``cat x.py``).
"""

from __future__ import annotations

import re

_WRAPPER_LINE = re.compile(
    r"^\s*(?:exit code|process exited with code|wall time|chunk id|original token count|total output lines"
    r"|command|directory|signal|background pids|process group pgid|error: \(none\)|stdout: \(empty\)"
    r"|stderr: \(empty\)|\[process exited|command running in background|shell cwd was reset)\b.*$",
    re.IGNORECASE)
_OUTPUT_PREFIX = re.compile(r"^\s*(?:output|stdout|stderr):\s?", re.IGNORECASE)
_TRACEBACK = re.compile(r"^\s*Traceback \(most recent call last\):")
_CHAIN = re.compile(r"^\s*(During handling of the above exception|The above exception was the direct cause)")
_FILE_LINE = re.compile(r'^\s*File "[^"]*", line \d+')
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\b.*$|^[A-Za-z_][\w.]*:\s")
_WARNING = re.compile(r"^\S.*:\d+: \w*Warning\b|^\s*(?:\w*Warning|WARNING|Warning|warning)\b[:\s]")
_SHELL_DIAG = re.compile(r"^(?:/?[\w/.-]*/)?(?:bash|sh|zsh|dash)(?:: line \d+)?: ")
_PID = re.compile(r"\b(?:pid|ppid|pgid|process id)\b\s*[:=#]?\s*\d+", re.IGNORECASE)
_JOB = re.compile(r"^\s*\[\d+\][+-]?\s+\d+\s*$")
_READER_PREFIX = re.compile(r"^\s*\d+(?:→|\t|\| )")
_DATA_URI = re.compile(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{64,}={0,2}")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_ADDRESS = re.compile(r"\b0[xX][0-9a-fA-F]+\b")
_HEX_ID = re.compile(r"\b(?=[0-9a-fA-F]*[a-fA-F])(?=[0-9a-fA-F]*\d)[0-9a-fA-F]{6,}\b")
_PATH = re.compile(r"(?<![\w.])(?:~|\.{1,2})?/?(?:[\w.+-]+/)+[\w.+-]*")
_FILE_NAME = re.compile(r"\b[\w+-]+(?:\.[\w+-]+)*\.[A-Za-z][A-Za-z0-9]{0,7}\b")
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w])")
_NONFINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf|infinity)(?![\w])", re.IGNORECASE)


def strip_excluded(text: str, reader: bool = False) -> str:
    """``text`` without the excluded parts (steps 1-4 of the module docstring)."""
    kept: list[str] = []
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if reader:
            line = _READER_PREFIX.sub("", line, count=1)
        if _TRACEBACK.match(line) or _FILE_LINE.match(line):
            i = _skip_error_block(lines, i + 1)
            continue
        if _CHAIN.match(line):
            i += 1
            continue
        if _WARNING.match(line):
            i += 1
            if i < n and lines[i].startswith((" ", "\t")):
                i += 1  # the source line printed under a warning
            continue
        if _SHELL_DIAG.match(line) or _JOB.match(line) or _WRAPPER_LINE.match(line):
            i += 1
            continue
        kept.append(_OUTPUT_PREFIX.sub("", line, count=1))
        i += 1
    return "\n".join(kept)


def _skip_error_block(lines: list[str], i: int) -> int:
    """Index past an error block: indented frame lines, then the exception line."""
    n = len(lines)
    while i < n:
        line = lines[i]
        if not line.strip() or line.startswith((" ", "\t")) or _FILE_LINE.match(line):
            i += 1
            continue
        if _EXC_LINE.match(line):
            return i + 1
        return i
    return i


def mask_identifiers(text: str) -> str:
    """``text`` with identifiers, paths, file names, pids and image payloads blanked (steps 3, 5, 6)."""
    # (a pattern is skipped when the text lacks a character sequence every match of it has: same result)
    if "data:" in text:
        text = _DATA_URI.sub(" ", text)
    text = _BASE64.sub(" ", text)
    if "-" in text:
        text = _UUID.sub(" ", text)
    if "0x" in text or "0X" in text:
        text = _ADDRESS.sub(" ", text)
    text = _PID.sub(" ", text)
    if "/" in text:
        text = _PATH.sub(lambda m: " " if re.search(r"[A-Za-z_]", m.group(0)) else m.group(0), text)
    text = _FILE_NAME.sub(" ", text)
    text = _HEX_ID.sub(" ", text)
    return text


def find_numbers(text: str, reader: bool = False) -> list[str]:
    """The numeric literals of one tool output, in order (see the module docstring)."""
    cleaned = mask_identifiers(strip_excluded(text, reader))
    found = [(m.start(), m.group(0)) for m in _NUMBER.finditer(cleaned)]
    found += [(m.start(), m.group(0)) for m in _NONFINITE.finditer(cleaned)]
    return [value for _, value in sorted(found)]


def count_numbers(text: str, reader: bool = False) -> int:
    """Number of numeric literals in one tool output (``reader``: a file-reading tool's output): the length of
    :func:`find_numbers`, without keeping the literals."""
    cleaned = mask_identifiers(strip_excluded(text, reader))
    return len(_NUMBER.findall(cleaned)) + len(_NONFINITE.findall(cleaned))

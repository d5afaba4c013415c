# Over 500 lines: one shell-command analyser (tokenising, redirections, interpreters, heredocs) and its tables.
"""Static analysis of shell tool commands: Python interpreter invocations and file writes.

Used for the Python-use metrics of TraceBench Appendix G.1.  :func:`analyze`
turns one command string into an ordered list of events:

* :class:`PythonRun` -- one Python interpreter invocation: ``python``/``python3``
  with any version suffix and any directory (``/usr/bin/python3.13``) running
  inline code (``-c``), a module (``-m``), a script (``x.py``; also ``./x.py``
  run directly) or code on standard input (a here-document, a here-string, a
  pipe from ``cat``/``echo``/``printf``, or ``< file``);
* :class:`FileWrite` -- a file whose content is visible in the command
  (``cat > x.py <<EOF``, ``tee``, ``echo``/``printf`` redirected to a file);
* :class:`FileUnknown` -- a file changed in a way the command does not show
  (``sed -i``, ``cp``, ``mv``);
* :class:`Patch` -- an ``apply_patch`` body (Codex's patch format);
* :class:`Display` -- a file shown without being run (``cat x.py``, ``head``...).

Wrappers are looked through: ``env``, ``timeout``, ``nice``, ``nohup``,
``time``, ``exec``, ``command``, ``stdbuf``, ``sudo``, ``xargs``, ``uv run``,
``poetry``/``pipenv``/``pdm``/``hatch``/``rye run``, ``conda``/``mamba run``.
``bash``/``sh``/``zsh``/``dash``/``ksh -c '...'`` and ``eval`` are analysed
recursively, as are shell scripts fed on standard input or written earlier in
the trajectory.  Control operators (``&&``, ``;``, ``||``, ``|``, ``&``,
newlines), subshells, brace groups, ``if``/``for``/``while``/``case`` bodies,
command substitution (``$(...)``, backquotes) and process substitution are all
walked.  The count is static: a call inside a loop counts once per command
issued, and every command issued counts again (repeated runs are separate calls).
Showing Python source (``cat x.py``, ``echo "python -c 1"``, ``grep python``)
is not a call, and here-document bodies are data, never shell.

Which commands count as a Python call (each row is a test in
``tests/plugins/metrics/test_shell.py::test_python_call_leniency``):

=====================================  =====  ===========================================
command                                calls  why
=====================================  =====  ===========================================
``python x.py``, ``python3 -c ...``    1      the interpreter runs code
``python3.13 x.py``, ``/usr/bin/python3.13``  1  any version suffix, any directory
``ipython -c ...``, ``ipython3 x.py``  1      IPython is a Python interpreter
``pypy3 x.py``                         1      so is PyPy
``python3 --version``                  1      an interpreter invocation (no code is
                                              told apart from code)
``command -v python3``, ``which``      0      a lookup: nothing runs
``jupyter nbconvert --execute``        0      a notebook tool, not an interpreter name
``./x.py``                             1      a script run directly
=====================================  =====  ===========================================

Parsing: here-documents are cut out first (quote-aware; ``<<EOF``, ``<<'EOF'``,
``<<"EOF"``, ``<<-EOF``) and replaced by ``< __HEREDOC_<k>__`` redirections.
The rest is parsed with ``bashlex`` (a port of bash's own grammar).  When
bashlex rejects the text (it does not implement ``[[ ]]``, arithmetic
``$(( ))``, ``case`` patterns or the ``time`` keyword), a fallback lexer
(quote-, escape- and substitution-aware) splits it into simple commands at the
control operators; reserved words at a command's start are skipped.  The
analysis records which parser was used (``parser``: ``"bashlex"`` or
``"fallback"``).
"""

from __future__ import annotations

import codecs
import functools
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Callable

WORKSPACE_PREFIXES = ("/workspace/",)
PYTHON_RE = re.compile(r"^(?:python|ipython|pypy)(?:\d+(?:\.\d+)*[a-z]?)?$")
SHELLS = {"bash", "sh", "zsh", "dash", "ksh"}
DISPLAYERS = {"cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "sed", "awk", "view", "tac"}
HEREDOC_TOKEN = "__HEREDOC_{}__"
_HEREDOC_RE = re.compile(r"^__HEREDOC_(\d+)__$")
_MAX_DEPTH = 8


@dataclass(frozen=True)
class PythonRun:
    """One interpreter invocation.  ``kind``: inline | module | script | stdin | interactive."""

    kind: str
    source: str | None = None
    path: str | None = None
    module: str | None = None


@dataclass(frozen=True)
class FileWrite:
    path: str
    content: str
    append: bool = False


@dataclass(frozen=True)
class FileUnknown:
    path: str


@dataclass(frozen=True)
class Patch:
    text: str


@dataclass(frozen=True)
class Display:
    path: str


@dataclass
class Analysis:
    """Events of one command, in execution order, and the parser(s) that read it."""

    events: list = field(default_factory=list)
    parser: str = "bashlex"

    @property
    def runs(self) -> list[PythonRun]:
        return [e for e in self.events if isinstance(e, PythonRun)]


def normalize_path(path: str, cwd: str = "") -> str:
    """A path relative to the workspace when it lies inside it: ``/workspace/a/./b.py`` -> ``a/b.py``."""
    path = path.strip()
    if cwd and not path.startswith(("/", "~")):
        path = posixpath.join(cwd, path)
    for prefix in WORKSPACE_PREFIXES:
        if path.startswith(prefix) or path == prefix.rstrip("/"):
            path = path[len(prefix):]
    path = posixpath.normpath(path) if path else path
    return "" if path == "." else path


# -- here-documents ---------------------------------------------------------------------------

_DELIM_RE = re.compile(r"<<(-?)[ \t]*((?:'[^'\n]*'|\"[^\"\n]*\"|\\?[^\s;&|<>()'\"])+)")


def extract_heredocs(text: str) -> tuple[str, list[str]]:
    """Cut here-document bodies out of ``text``.

    Returns the text with each ``<<[-]DELIM`` replaced by ``< __HEREDOC_<k>__``
    and the body lines removed, and the bodies (each ending with a newline).
    A body without its terminator runs to the end of the text, as in bash.
    """
    out: list[str] = []
    bodies: list[str] = []
    pending: list[tuple[int, str, bool]] = []  # (index in bodies, delimiter, strip tabs)
    i, n = 0, len(text)
    quote = None
    while i < n:
        c = text[i]
        if quote == "'":
            out.append(c)
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\" and i + 1 < n:
            out.append(text[i:i + 2])
            i += 2
            continue
        if quote == '"':
            out.append(c)
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
            out.append(c)
            i += 1
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i:end])
            i = end
            continue
        if text.startswith("<<<", i):
            out.append("<<<")
            i += 3
            continue
        if text.startswith("<<", i):
            m = _DELIM_RE.match(text, i)
            if m and not m.group(2).isdigit():
                delim = re.sub(r"['\"\\]", "", m.group(2))
                pending.append((len(bodies), delim, m.group(1) == "-"))
                out.append(f"< {HEREDOC_TOKEN.format(len(bodies))}")
                bodies.append("")
                i = m.end()
                continue
        if c == "\n" and pending:
            out.append("\n")
            i += 1
            for index, delim, strip in pending:
                lines = []
                while i < n:
                    end = text.find("\n", i)
                    line = text[i:] if end < 0 else text[i:end]
                    i = n if end < 0 else end + 1
                    check = line.lstrip("\t") if strip else line
                    if check == delim or check.rstrip() == delim:
                        break
                    lines.append(line.lstrip("\t") if strip else line)
                bodies[index] = "".join(line + "\n" for line in lines)
            pending = []
            continue
        out.append(c)
        i += 1
    return "".join(out), bodies


# -- simple commands ----------------------------------------------------------------------------

@dataclass
class Simple:
    """A simple command: its words (quotes removed) and redirections ``(operator, target)``."""

    words: list[str]
    redirects: list[tuple[str, str]] = field(default_factory=list)


Pipeline = list  # list[Simple | None] (None: a compound command inside a pipeline)


class _Unparsable(Exception):
    pass


@functools.lru_cache(maxsize=1024)
def _bashlex_pipelines(text: str) -> list[Pipeline]:
    """The pipelines of ``text`` by bashlex (``_Unparsable`` when it rejects it).  Kept by text (an agent
    reruns the same commands; a parse costs milliseconds): the result is shared, read-only by its callers."""
    import bashlex  # imported on use: its grammar tables are slow to build

    try:
        trees = bashlex.parse(text)
    except Exception as exc:  # noqa: BLE001 - bashlex raises several kinds
        raise _Unparsable(str(exc)) from None
    out: list[Pipeline] = []
    for tree in trees:
        _walk(tree, out)
    return out


def _walk(node, out: list[Pipeline]) -> None:
    kind = node.kind
    if kind == "pipeline":
        pipeline: Pipeline = []
        for part in node.parts:
            if part.kind == "command":
                pipeline.append(_simple(part, out))
            elif part.kind not in ("pipe", "reservedword"):
                pipeline.append(None)
                _walk(part, out)
        out.append(pipeline)
        return
    if kind == "command":
        out.append([_simple(node, out)])
        return
    if kind in ("commandsubstitution", "processsubstitution"):
        _walk(node.command, out)
        return
    for child in list(getattr(node, "parts", None) or []) + list(getattr(node, "list", None) or []):
        _walk(child, out)


def _substitutions(node, out: list[Pipeline]) -> None:
    for part in getattr(node, "parts", None) or []:
        if part.kind in ("commandsubstitution", "processsubstitution"):
            _walk(part.command, out)
        else:
            _substitutions(part, out)


def _simple(node, out: list[Pipeline]) -> Simple:
    cmd = Simple([])
    for part in node.parts:
        if part.kind == "word":
            _substitutions(part, out)
            cmd.words.append(part.word)
        elif part.kind == "assignment":
            _substitutions(part, out)
            if not cmd.words:
                continue
            cmd.words.append(part.word)
        elif part.kind == "redirect":
            target = part.output
            if hasattr(target, "kind"):
                _substitutions(target, out)
                cmd.redirects.append((part.type, target.word))
            else:
                cmd.redirects.append((part.type, str(target)))
    return cmd


# -- fallback lexer -----------------------------------------------------------------------------

_OPERATORS = ("&&", "||", ";;", "|&", "|", ";", "&", "(", ")", "\n")
_REDIR_RE = re.compile(r"(\d*)(<<<|&>>|&>|>>|>&|<&|<>|>\||>|<)")
_RESERVED = {"if", "then", "else", "elif", "fi", "do", "done", "while", "until", "!", "{", "}", "time",
             "esac", "function", "[[", "]]", "in"}
_SKIP_LINE = {"for", "select", "case"}


def _matching(text: str, i: int, open_: str, close: str) -> int:
    """Index just past the ``close`` that balances the ``open_`` before ``i`` (quote-aware)."""
    depth, quote, n = 1, None, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _read_word(text: str, i: int, subs: list[str]) -> tuple[str, int]:
    buf: list[str] = []
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\n;&|()<>":
            break
        if c == "\\":
            if i + 1 < n and text[i + 1] != "\n":
                buf.append(text[i + 1])
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            buf.append(text[i + 1:end])
            i = end + 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`\n':
                    buf.append(text[i + 1])
                    i += 2
                elif text.startswith("$(", i) and not text.startswith("$((", i):
                    end = _matching(text, i + 2, "(", ")")
                    subs.append(text[i + 2:end - 1])
                    buf.append(text[i:end])
                    i = end
                elif text[i] == "`":
                    end = text.find("`", i + 1)
                    end = n if end < 0 else end
                    subs.append(text[i + 1:end])
                    buf.append(text[i:end + 1])
                    i = end + 1
                else:
                    buf.append(text[i])
                    i += 1
            i += 1
        elif text.startswith("$((", i):
            end = _matching(text, i + 3, "(", ")")
            end = _matching(text, end, "(", ")") if end < n and text[end - 1] == ")" and text[end:end + 1] == ")" else end
            buf.append(text[i:end])
            i = end
        elif text.startswith("$(", i):
            end = _matching(text, i + 2, "(", ")")
            subs.append(text[i + 2:end - 1])
            buf.append(text[i:end])
            i = end
        elif text.startswith("${", i):
            end = _matching(text, i + 2, "{", "}")
            buf.append(text[i:end])
            i = end
        elif c == "`":
            end = text.find("`", i + 1)
            end = n if end < 0 else end
            subs.append(text[i + 1:end])
            buf.append(text[i:end + 1])
            i = end + 1
        else:
            buf.append(c)
            i += 1
    return "".join(buf), i


def _fallback_pipelines(text: str) -> tuple[list[Pipeline], list[str]]:
    """Split ``text`` into pipelines of simple commands; also returns substitution bodies."""
    subs: list[str] = []
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t":
            i += 1
            continue
        if c == "\\" and text[i + 1:i + 2] == "\n":
            i += 2
            continue
        if c == "#" and (not tokens or tokens[-1][0] == "op"):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if text.startswith(("<(", ">("), i):
            end = _matching(text, i + 2, "(", ")")
            subs.append(text[i + 2:end - 1])
            tokens.append(("w", "/dev/fd/63"))
            i = end
            continue
        m = _REDIR_RE.match(text, i)
        if m and (not m.group(1) or i == 0 or text[i - 1] in " \t"):
            tokens.append(("redir", m.group(2)))
            i = m.end()
            continue
        op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
        if op:
            tokens.append(("op", op))
            i += len(op)
            continue
        word, i = _read_word(text, i, subs)
        tokens.append(("w", word))
    pipelines: list[Pipeline] = []
    pipeline: Pipeline = []
    cmd = Simple([])
    skipping = False
    expect_target: str | None = None

    def end_command() -> None:
        nonlocal cmd, skipping
        if cmd.words or cmd.redirects:
            pipeline.append(cmd)
        cmd, skipping = Simple([]), False

    for kind, value in tokens:
        if kind == "redir":
            expect_target = value
        elif kind == "w":
            if expect_target is not None:
                cmd.redirects.append((expect_target, value))
                expect_target = None
            elif skipping:
                continue
            elif not cmd.words and value in _SKIP_LINE:
                skipping = True
            elif not cmd.words and (value in _RESERVED or (re.match(r"^[A-Za-z_]\w*=", value))):
                continue
            else:
                cmd.words.append(value)
        else:
            expect_target = None
            end_command()
            if value not in ("|", "|&"):
                if pipeline:
                    pipelines.append(pipeline)
                pipeline = []
    end_command()
    if pipeline:
        pipelines.append(pipeline)
    return pipelines, subs


# -- analysis -----------------------------------------------------------------------------------

@dataclass
class _Stream:
    """What flows on a standard stream: known text, a file, or nothing known."""

    text: str | None = None
    path: str | None = None


class _Analyzer:
    def __init__(self, read_file: Callable[[str], str | None] | None, parser: str = "auto"):
        self.read_file = read_file or (lambda _p: None)
        self.force_fallback = parser == "fallback"
        self.files: dict[str, str | None] = {}
        self.events: list = []
        self.parser = "bashlex"
        self.cwd = ""

    def lookup(self, path: str) -> str | None:
        if path in self.files:
            return self.files[path]
        return self.read_file(path)

    def write(self, path: str, content: str | None, append: bool = False) -> None:
        if content is None:
            self.files[path] = None
            self.events.append(FileUnknown(path))
            return
        if append:
            self.files[path] = (self.lookup(path) or "") + content
        else:
            self.files[path] = content
        self.events.append(FileWrite(path, content, append))

    # -- scripts
    def script(self, text: str, depth: int = 0) -> None:
        if depth > _MAX_DEPTH or not text.strip():
            return
        body, heredocs = extract_heredocs(text)
        try:
            if self.force_fallback:
                raise _Unparsable("fallback requested")
            pipelines = _bashlex_pipelines(body)
        except _Unparsable:
            self.parser = "fallback"
            pipelines, subs = _fallback_pipelines(body)
            for sub in subs:
                self.script(sub, depth + 1)
        for pipeline in pipelines:
            self.pipeline(pipeline, heredocs, depth)

    def pipeline(self, pipeline: Pipeline, heredocs: list[str], depth: int) -> None:
        stream = _Stream()
        last = len(pipeline) - 1
        for position, cmd in enumerate(pipeline):
            if cmd is None:
                stream = _Stream()
                continue
            stream = self.simple(cmd, stream, heredocs, depth, piped=position < last)

    # -- one simple command
    def simple(self, cmd: Simple, stdin: _Stream, heredocs: list[str], depth: int, piped: bool = False) -> _Stream:
        outputs: list[tuple[str, bool]] = []  # (path, append)
        for op, target in cmd.redirects:
            m = _HEREDOC_RE.match(target)
            if op == "<" and m:
                index = int(m.group(1))
                stdin = _Stream(text=heredocs[index] if index < len(heredocs) else "")
            elif op == "<<<":
                stdin = _Stream(text=target + "\n")
            elif op in ("<", "<>"):
                stdin = _Stream(path=normalize_path(target, self.cwd))
            elif op in (">", ">|", "&>"):
                outputs.append((target, False))
            elif op in (">>", "&>>"):
                outputs.append((target, True))
        outputs = [(normalize_path(p, self.cwd), a) for p, a in outputs
                   if p not in ("/dev/null", "/dev/stderr", "/dev/stdout", "/dev/tty")]
        first_event = len(self.events)
        stdout = self.words(cmd.words, stdin, depth)
        if outputs or piped:
            # what ``cat`` shows goes into a file or a pipe: it is not displayed
            self.events[first_event:] = [e for e in self.events[first_event:] if not isinstance(e, Display)]
        if outputs:
            text = self.stream_text(stdout)
            for path, append in outputs:
                self.write(path, text, append)
            return _Stream()
        return stdout

    def words(self, words: list[str], stdin: _Stream, depth: int) -> _Stream:
        words = list(words)
        while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
            words.pop(0)
        words = _strip_wrappers(words)
        if not words:
            return _Stream()
        name = posixpath.basename(words[0])
        args = words[1:]
        if PYTHON_RE.match(name):
            self.python(args, stdin)
            return _Stream()
        if words[0].endswith(".py") and "=" not in words[0]:
            self.events.append(PythonRun("script", path=normalize_path(words[0], self.cwd)))
            return _Stream()
        if name in SHELLS:
            self.shell(args, stdin, depth)
            return _Stream()
        if name == "eval":
            self.script(" ".join(args), depth + 1)
            return _Stream()
        if name == "cd":
            target = args[0] if args else ""
            if target and target != "-":
                self.cwd = normalize_path(target, self.cwd)
            return _Stream()
        if name == "apply_patch":
            text = " ".join(args) if args else self.stream_text(stdin)
            if text:
                self.events.append(Patch(text))
            return _Stream()
        if name == "cat":
            files = [a for a in args if not a.startswith("-") or a == "-"]
            files = [normalize_path(f, self.cwd) for f in files if f != "-"]
            if not files:
                return stdin
            for f in files:
                self.events.append(Display(f))
            if len(files) == 1:
                return _Stream(path=files[0])
            texts = [self.lookup(f) for f in files]
            return _Stream(text="".join(texts)) if all(t is not None for t in texts) else _Stream()
        if name == "echo":
            return _Stream(text=_echo(args))
        if name == "printf":
            return _Stream(text=_printf(args))
        if name == "tee":
            append = any(a in ("-a", "--append") for a in args)
            text = self.stream_text(stdin)
            for f in (a for a in args if not a.startswith("-")):
                self.write(normalize_path(f, self.cwd), text, append)
            return stdin
        if name in DISPLAYERS:
            files = _sed_files(args) if name in ("sed", "awk") else _file_args(args)
            if name == "sed" and any(a.startswith("-i") or a == "--in-place" for a in args):
                for f in files:
                    self.write(normalize_path(f, self.cwd), None)
                return _Stream()
            for f in files:
                self.events.append(Display(normalize_path(f, self.cwd)))
            return _Stream()
        if name in ("cp", "mv", "install", "ln"):
            targets = [a for a in args if not a.startswith("-")]
            if len(targets) >= 2:
                source = self.lookup(normalize_path(targets[0], self.cwd))
                dest = normalize_path(targets[-1], self.cwd)
                if source is not None and len(targets) == 2 and not dest.endswith("/"):
                    self.write(dest, source)
                else:
                    self.write(dest, None)
            return _Stream()
        return _Stream()

    def stream_text(self, stream: _Stream) -> str | None:
        if stream.text is not None:
            return stream.text
        return self.lookup(stream.path) if stream.path else None

    def shell(self, args: list[str], stdin: _Stream, depth: int) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "-c" or (arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]):
                if i + 1 < len(args):
                    self.script(args[i + 1], depth + 1)
                return
            if arg in ("-o", "+o", "--rcfile", "--init-file"):
                i += 2
                continue
            if arg.startswith(("-", "+")):
                i += 1
                continue
            text = self.lookup(normalize_path(arg, self.cwd))
            if text is not None:
                self.script(text, depth + 1)
            return
        text = self.stream_text(stdin)
        if text:
            self.script(text, depth + 1)

    def python(self, args: list[str], stdin: _Stream) -> None:
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                i += 1
                break
            if arg.startswith("--"):
                if arg in ("--check-hash-based-pycs",):
                    i += 1
                i += 1
                continue
            if arg == "-":
                break
            if arg.startswith("-") and len(arg) > 1:
                flags = arg[1:]
                for j, flag in enumerate(flags):
                    if flag in "cmWX":
                        rest = flags[j + 1:]
                        value = rest if rest else (args[i + 1] if i + 1 < len(args) else "")
                        if flag == "c":
                            self.events.append(PythonRun("inline", source=value))
                            return
                        if flag == "m":
                            self.events.append(PythonRun("module", module=value))
                            return
                        if not rest:
                            i += 1
                        break
                i += 1
                continue
            break
        rest = args[i:]
        if rest and rest[0] != "-":
            self.events.append(PythonRun("script", path=normalize_path(rest[0], self.cwd)))
            return
        if stdin.text is not None:
            self.events.append(PythonRun("stdin", source=stdin.text))
        elif stdin.path is not None:
            self.events.append(PythonRun("script", path=stdin.path))
        else:
            self.events.append(PythonRun("interactive"))


def _file_args(args: list[str]) -> list[str]:
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-n", "-c", "-e", "-f", "--lines", "--bytes"):
            skip = True
            continue
        if a.startswith("-") or a.startswith("+"):
            continue
        if "." in posixpath.basename(a) or "/" in a:
            out.append(a)
    return out


def _sed_files(args: list[str]) -> list[str]:
    """File operands of ``sed``/``awk``: the first operand is the program unless ``-e``/``-f`` gave it."""
    operands, program_given, skip = [], False, False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-e", "-f", "--expression", "--file"):
            program_given, skip = True, True
            continue
        if a.startswith("-") and len(a) > 1:
            continue
        operands.append(a)
    return operands if program_given else operands[1:]


_WRAPPER_OPTS_WITH_VALUE = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "nice": {"-n", "--adjustment"},
    "stdbuf": {"-i", "-o", "-e"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-U"},
    "xargs": {"-n", "-I", "-P", "-L", "-s", "-d", "-E", "-a"},
    "ionice": {"-c", "-n", "-p"},
    "uv": {"--with", "--python", "-p", "--with-requirements", "--project", "--directory", "--group", "--extra",
           "--env-file", "--index", "--index-url"},
    "conda": {"-n", "--name", "-p", "--prefix", "--cwd"},
}
_SIMPLE_WRAPPERS = {"nohup", "time", "exec", "command", "builtin", "noglob", "unbuffer"}
_RUNNERS = {"poetry", "pipenv", "pdm", "hatch", "rye", "uv", "conda", "mamba", "micromamba", "pixi"}


def _strip_wrappers(words: list[str]) -> list[str]:
    """Drop leading wrapper commands (and their options) until the real command."""
    for _ in range(16):
        if not words:
            return words
        name = posixpath.basename(words[0])
        if name in ("command", "builtin") and len(words) > 1 and words[1] in ("-v", "-V"):
            return []  # a lookup (``command -v python3``): nothing runs
        if name in _SIMPLE_WRAPPERS:
            words = words[1:]
            while words and words[0].startswith("-") and len(words[0]) > 1:
                words = words[1:]
            continue
        if name in _RUNNERS and len(words) > 1 and words[1] in ("run", "exec"):
            words = _skip_options(words[2:], _WRAPPER_OPTS_WITH_VALUE.get(
                "uv" if name == "uv" else "conda" if name in ("conda", "mamba", "micromamba") else "", set()))
            continue
        if name in ("env", "timeout", "nice", "stdbuf", "sudo", "xargs", "ionice"):
            words = _skip_options(words[1:], _WRAPPER_OPTS_WITH_VALUE[name])
            if name == "env":
                while words and re.match(r"^[A-Za-z_]\w*=", words[0]):
                    words = words[1:]
            if name == "timeout" and words:
                words = words[1:]  # the duration
            continue
        return words
    return words


def _skip_options(words: list[str], with_value: set[str]) -> list[str]:
    i = 0
    while i < len(words):
        w = words[i]
        if w == "--":
            return words[i + 1:]
        if not w.startswith("-") or w == "-":
            break
        if w in with_value and "=" not in w:
            i += 2
        else:
            i += 1
    return words[i:]


def _echo(args: list[str]) -> str:
    newline, escapes = True, False
    while args and re.match(r"^-[neE]+$", args[0]):
        newline = newline and "n" not in args[0]
        escapes = escapes or "e" in args[0]
        args = args[1:]
    text = " ".join(args)
    if escapes:
        text = _unescape(text)
    return text + ("\n" if newline else "")


def _printf(args: list[str]) -> str | None:
    if not args:
        return None
    fmt, values = args[0], args[1:]
    if not values:
        return _unescape(fmt.replace("%%", "%"))
    if re.fullmatch(r"(%s)*(\\n)?", fmt.replace("%s\\n", "%s")) or fmt in ("%s\\n", "%s", "%b\\n", "%b"):
        sep = "\n" if fmt.endswith("\\n") else ""
        return "".join(_unescape(v) + sep for v in values)
    try:
        return _unescape(fmt.replace("%b", "%s") % tuple(values))
    except (TypeError, ValueError):
        return None


def _unescape(text: str) -> str:
    try:
        return codecs.decode(text, "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def analyze(command: str, read_file: Callable[[str], str | None] | None = None,
            parser: str = "auto") -> Analysis:
    """Events of one shell command (see the module docstring).

    ``read_file(path)`` returns the content of a workspace file known from
    earlier in the trajectory (or None); it lets ``cat x.py | python`` and
    ``bash run.sh`` be resolved.  ``parser="fallback"`` skips bashlex (tests
    check that both parsers agree).
    """
    if parser not in ("auto", "fallback"):
        raise ValueError(f"parser must be 'auto' or 'fallback', got {parser!r}")
    analyzer = _Analyzer(read_file, parser)
    analyzer.script(command)
    return Analysis(analyzer.events, analyzer.parser)


def python_calls(command: str) -> int:
    """Number of Python interpreter invocations in ``command``."""
    return len(analyze(command).runs)


def argv_command(argv: list[str]) -> str:
    """A shell command string for an argv list (``["bash", "-lc", script]`` -> ``script``)."""
    if len(argv) >= 3 and posixpath.basename(argv[0]) in SHELLS and argv[1].startswith("-") and "c" in argv[1]:
        return argv[2]
    return shlex.join(argv)

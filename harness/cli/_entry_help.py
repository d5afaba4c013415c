"""The one-line help of a plugin command, read from its module's source without importing the plugin.

``harness --help`` lists the commands of the entry-point group ``harness.commands`` without importing
them (start-up stays cheap and a broken plugin cannot break ``--help``).  Their one-line help is read
from the module's source file: the command's ``short_help=`` or ``help=`` (a string literal) in its
``@click.command``/``@click.group`` decorator (or a ``click.Command(...)`` call), else its function's
docstring, shortened as click shortens help for a listing.  The file is located with the import
system's finders, which execute no module.  What cannot be read this way (a command built at import
time, help computed from variables) gives ``None`` and the caller shows a pointer to the command's
own ``--help``.
"""

from __future__ import annotations

import ast
import importlib.machinery
import importlib.util
from pathlib import Path

import click

#: longest one-line help shown for a plugin command (click cuts a longer first sentence with "...")
LIMIT = 100


def module_file(module: str) -> Path | None:
    """The ``.py`` file of ``module`` (dotted), found without executing it or its packages; None if not found."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name: no parent package is imported
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                return None
            spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]),
                                                            list(spec.submodule_search_locations))
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.has_location or not str(spec.origin or "").endswith(".py"):
        return None
    return Path(spec.origin)


def _keywords(call: ast.Call) -> dict[str, str]:
    """The string-literal ``help=`` and ``short_help=`` of a call."""
    return {k.arg: k.value.value for k in call.keywords if k.arg in ("help", "short_help")
            and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str)}


def _help_texts(tree: ast.Module, name: str) -> dict[str, str] | None:
    """``help`` and ``short_help`` of the top-level command ``name`` in ``tree`` (aliases ``a = b`` followed),
    as click's decorators would set them; None when ``name`` is not such a command."""
    top: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            top[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            top[node.targets[0].id] = node.value
    node = top.get(name)
    for _ in range(5):
        if not isinstance(node, ast.Name):
            break
        node = top.get(node.id)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith(("command", "group")):
                texts = _keywords(decorator)
                docstring = ast.get_docstring(node, clean=False)
                if "help" not in texts and docstring:
                    texts["help"] = docstring
                return texts
    elif isinstance(node, ast.Call) and ast.unparse(node.func).endswith(("Command", "Group")):
        return _keywords(node)
    return None


def short_help(value: str) -> str | None:
    """The one-line help of the command an entry point's ``value`` (``"module:attribute"``) names, as
    click's ``Command.get_short_help_str(LIMIT)`` gives it; None when it cannot be read from source."""
    module, _, attr = value.partition(":")
    attr = attr.split("[", 1)[0].strip()  # an entry point may name extras: "module:obj [extra]"
    path = module_file(module.strip())
    if path is None or not attr or "." in attr:
        return None
    try:
        texts = _help_texts(ast.parse(path.read_text(encoding="utf-8")), attr)
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    if not texts:
        return None
    # a stand-in command shortens the texts exactly as click shortens the real one's
    return click.Command(None, help=texts.get("help"), short_help=texts.get("short_help")).get_short_help_str(
        LIMIT) or None

"""Bounds on reading spec files and on quoting their values in error messages.

A spec is user input that may be hostile or simply wrong: a YAML alias bomb (a few lines whose aliases
expand to billions of values), a megabyte-long value, deep nesting.  :func:`yaml_bounds_problem` checks a
loaded document without expanding it; :func:`show_value` quotes a value as a short prefix, in bounded time
whatever its size.  Used by :mod:`harness.config`.
"""

from __future__ import annotations

import reprlib
from typing import Any

#: characters of an invalid value an error message quotes (a prefix, then "...")
SHOWN_CHARS = 40
#: problems one error message lists (then "and N more")
SHOWN_PROBLEMS = 5

_REPR = reprlib.Repr()
_REPR.maxlevel, _REPR.maxdict, _REPR.maxlist, _REPR.maxtuple, _REPR.maxset = 2, 3, 3, 3, 3
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = SHOWN_CHARS


def shorten(text: str, limit: int = SHOWN_CHARS) -> str:
    """``text`` on one line, cut to at most ``limit`` characters (ending ``...`` when cut)."""
    text = " ".join(text.split()) if len(text) <= 100 * limit else " ".join(text[:100 * limit].split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def show_value(value: Any, limit: int = SHOWN_CHARS) -> str:
    """A short prefix of ``value``'s repr: bounded in time and length whatever the value's size or nesting
    (a value built from YAML aliases is never expanded)."""
    try:
        text = _REPR.repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails is shown by its type
        text = f"<{type(value).__name__}>"
    return shorten(text, limit)


#: Bounds on a YAML file read by :func:`load_yaml`: its bytes, the values it holds once aliases are
#: expanded (a file of a few lines can alias its way to billions: the "billion laughs"), and its nesting.
MAX_YAML_BYTES = 8 * 1024 * 1024
MAX_YAML_VALUES = 200_000
MAX_YAML_DEPTH = 64


def yaml_bounds_problem(data: Any) -> str | None:
    """Why ``data`` (a loaded YAML document) is over a bound: more than :data:`MAX_YAML_VALUES` values
    counting every alias's expansion, or nesting deeper than :data:`MAX_YAML_DEPTH`; None when within them.
    Iterative; stops at the first bound passed (an alias bomb is never expanded)."""
    stack = [(data, 1)]
    count = 0
    while stack:
        value, depth = stack.pop()
        count += 1
        if count > MAX_YAML_VALUES:
            return f"more than {MAX_YAML_VALUES:,} values once its aliases are expanded (an alias bomb?)"
        if depth > MAX_YAML_DEPTH:
            return f"nested deeper than {MAX_YAML_DEPTH} levels"
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
            count += len(value)  # the keys
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return None

"""A small TOML writer for Codex's ``config.toml`` (the standard library only reads TOML).

Supports what a Codex configuration holds: strings, booleans, integers,
finite floats, arrays of those, and nested tables.  Keys that are not bare
(``A-Za-z0-9_-``) are quoted.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(key: str) -> str:
    if not isinstance(key, str) or not key:
        raise ValueError(f"TOML keys must be non-empty strings, got {key!r}")
    return key if _BARE.match(key) else json.dumps(key)


def _value(value: Any, where: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{where}: TOML has no representation for {value!r} here")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v, f"{where}[{i}]") for i, v in enumerate(value)) + "]"
    raise ValueError(f"{where}: cannot write a {type(value).__name__} to TOML")


def dumps(data: dict[str, Any]) -> str:
    """TOML text for ``data``; raises ValueError naming the key path of an unsupported value."""
    lines: list[str] = []

    def table(obj: dict[str, Any], path: list[str]) -> None:
        scalars = [(k, v) for k, v in obj.items() if not isinstance(v, dict)]
        tables = [(k, v) for k, v in obj.items() if isinstance(v, dict)]
        if path and (scalars or not tables):
            if lines:
                lines.append("")
            lines.append("[" + ".".join(_key(p) for p in path) + "]")
        for key, value in scalars:
            if value is None:
                continue
            lines.append(f"{_key(key)} = {_value(value, '.'.join(path + [key]))}")
        for key, value in tables:
            table(value, path + [key])

    table(data, [])
    return "\n".join(lines) + "\n"

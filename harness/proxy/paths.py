"""Request paths at the proxy: dot segments removed before a request is forwarded with the real key.

An upstream's base URL may carry a path prefix (a gateway's ``https://host/api/v1``); a request path with
``..`` segments, raw or percent-encoded (``%2e%2e``), could otherwise climb out of it.  The proxy removes
dot segments (RFC 3986 section 5.2.4, with ``%2e`` read as the ``.`` it stands for, section 6.2.2.2) and
refuses with 400 a path that would leave its root -- which, joined to the base URL, is the base URL's path
-- or that hides a dot segment behind an encoded separator (``..%2f``, ``..%5c``, a backslash), which some
servers decode into a path step.
"""

from __future__ import annotations

import re

_DOT = re.compile(r"%2e", re.IGNORECASE)
_HIDDEN_SEPARATOR = re.compile(r"%2f|%5c|\\", re.IGNORECASE)


class PathOutsideBase(ValueError):
    """A request path that leaves the base URL's path (the message says how)."""


def normal_path(raw_path: str) -> str:
    """``raw_path`` (percent-encoded, from the request line) with its dot segments removed, its other bytes
    as they came; :class:`PathOutsideBase` when a ``..`` would climb above ``/`` or a segment holding an
    encoded separator reads as a dot segment once decoded."""
    segments = raw_path.split("/")
    out: list[str] = []
    for index, segment in enumerate(segments[1:] if raw_path.startswith("/") else segments, start=1):
        plain = _DOT.sub(".", segment)
        if _HIDDEN_SEPARATOR.search(segment):
            parts = _HIDDEN_SEPARATOR.split(plain)
            if any(part in (".", "..") for part in parts):
                raise PathOutsideBase(f"path segment {segment!r} hides a dot segment behind an encoded separator")
        last = index == len(segments) - (1 if raw_path.startswith("/") else 0)
        if plain == ".":
            if last:
                out.append("")
        elif plain == "..":
            if not out or out == [""]:
                raise PathOutsideBase(f"path {raw_path!r} leaves the base URL's path")
            out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)

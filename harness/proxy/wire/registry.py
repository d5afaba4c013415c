"""The registered wire formats, and detection across them.

The core registers the four provider formats its proxy speaks (Anthropic Messages, OpenAI Chat Completions,
OpenAI Responses, Gemini) the first time the registry is used; a plugin adds another with
:func:`register_wire_format` (from its module, which the plugin manager imports when plugins load, or from a
hook), and from then on the proxy, the metrics and the trajectory converters decode it.  Registration order is
detection order for ties (see :class:`~harness.proxy.wire.base.WireFormat`).
"""

from __future__ import annotations

from typing import Any

from harness.proxy.wire.base import WireFormat, default_error_body

#: A wire format's name (a registered format's ``name``, or ``"unknown"``).
Wire = str

UNKNOWN: Wire = "unknown"

_formats: dict[str, WireFormat] | None = None


def _registry() -> dict[str, WireFormat]:
    """The registered formats by name; the core's own four are registered (like any other) on first use."""
    global _formats
    if _formats is None:
        from harness.proxy.wire.anthropic import AnthropicMessages
        from harness.proxy.wire.chat import OpenAIChat
        from harness.proxy.wire.gemini import Gemini
        from harness.proxy.wire.responses import OpenAIResponses

        _formats = {}
        for fmt in (AnthropicMessages(), OpenAIChat(), OpenAIResponses(), Gemini()):
            register_wire_format(fmt)
    return _formats


def register_wire_format(fmt: WireFormat) -> WireFormat:
    """Register ``fmt`` (a :class:`WireFormat` instance); returns it.

    ValueError when ``fmt`` is not a :class:`WireFormat` instance, its ``name`` is empty or ``"unknown"``, or
    a format of another class already has that name (naming both classes); the same class registering again
    (its module imported anew) replaces its earlier instance.
    """
    if not isinstance(fmt, WireFormat):
        raise ValueError(f"register_wire_format: {fmt!r} is not a WireFormat instance")
    if not isinstance(fmt.name, str) or not fmt.name or fmt.name == UNKNOWN:
        raise ValueError(f"register_wire_format: {type(fmt).__name__} has no usable name ({fmt.name!r})")
    formats = _registry()
    if fmt.name in formats and _origin(formats[fmt.name]) != _origin(fmt):
        raise ValueError(f"wire format {fmt.name!r} is registered twice: by {type(formats[fmt.name]).__name__} "
                         f"and by {type(fmt).__name__}")
    formats[fmt.name] = fmt
    return fmt


def _origin(fmt: WireFormat) -> tuple[str, str]:
    return type(fmt).__module__, type(fmt).__qualname__


def unregister_wire_format(name: str) -> None:
    """Forget the format called ``name`` (nothing when there is none)."""
    _registry().pop(name, None)


def wire_formats() -> tuple[WireFormat, ...]:
    """Every registered format, in registration order."""
    return tuple(_registry().values())


def wire_format(name: Any) -> WireFormat | None:
    """The format called ``name``, or None (``"unknown"``, None, an unregistered name)."""
    return _registry().get(name) if isinstance(name, str) else None


def detect_wire(path: str) -> Wire:
    """The wire format of a request path (query string excluded), or ``"unknown"``."""
    path = path.rstrip("/")
    for fmt in _registry().values():
        if fmt.matches_path(path):
            return fmt.name
    return UNKNOWN


def _best(rank: str, obj: Any) -> WireFormat | None:
    best, best_rank = None, None
    for fmt in _registry().values():
        r = getattr(fmt, rank)(obj)
        if r is not None and (best_rank is None or r < best_rank):
            best, best_rank = fmt, r
    return best


def detect_response(obj: Any) -> WireFormat | None:
    """The format of one response body or stream event (parsed JSON) by its shape, or None."""
    return _best("response_rank", obj)


def wire_of_record(record: dict, body: Any = None) -> Wire:
    """The wire format of a ``proxy.jsonl`` request record: its recorded ``wire`` when a registered format has
    that name, else its ``path``'s, else its (parsed) ``body``'s shape, else ``"unknown"``."""
    if wire_format(record.get("wire")) is not None:
        return record["wire"]
    wire = detect_wire(str(record.get("path") or ""))
    if wire != UNKNOWN:
        return wire
    fmt = _best("request_rank", body)
    return fmt.name if fmt is not None else UNKNOWN


def is_completion(method: Any, path: Any, body: Any) -> bool:
    """A request that asks a model for a completion: a POST whose body holds a conversation (a registered
    format's ``completion_keys``), on a path that is no format's side endpoint (token counting)."""
    path = str(path or "")
    if str(method or "POST").upper() != "POST" or not isinstance(body, dict):
        return False
    formats = _registry().values()
    if any(path.endswith(suffix) for fmt in formats for suffix in fmt.side_paths):
        return False
    return any(key in body for fmt in formats for key in fmt.completion_keys)


def error_body(wire: Wire, status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The JSON error body a provider of ``wire`` sends with HTTP ``status`` (``code``: a machine-readable
    reason, e.g. ``budget_exceeded``, where the format has a slot for it); OpenAI-style for an unknown wire."""
    fmt = wire_format(wire)
    return fmt.error_body(status, message, code) if fmt is not None else default_error_body(status, message, code)

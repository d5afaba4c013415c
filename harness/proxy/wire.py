"""Wire formats the proxy recognises, and each one's error body.

A request's wire format is read from its path:

===================  ==================================================
``anthropic``        ``/v1/messages`` (``?beta=true`` too)
``openai-chat``      ``/v1/chat/completions`` (also OpenRouter)
``openai-responses`` ``/v1/responses``
``gemini``           ``/v1beta/models/{model}:generateContent`` and
                     ``:streamGenerateContent``
``unknown``          anything else (forwarded, usage read from the body's shape)
===================  ==================================================

Errors the proxy itself answers (budget refusals, unreachable upstream) use the
format of the request's provider so the CLI shows them as an API error.
"""

from __future__ import annotations

import re
from typing import Any, Literal

Wire = Literal["anthropic", "openai-chat", "openai-responses", "gemini", "unknown"]

WIRES: tuple[Wire, ...] = ("anthropic", "openai-chat", "openai-responses", "gemini", "unknown")

_GEMINI = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>generateContent|streamGenerateContent)$")

_GOOGLE_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                  404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 502: "UNAVAILABLE",
                  503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
_ANTHROPIC_TYPE = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                   404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                   500: "api_error", 502: "api_error", 503: "api_error", 529: "overloaded_error"}


def detect_wire(path: str) -> Wire:
    """The wire format of a request path (query string excluded)."""
    path = path.rstrip("/")
    if path.endswith("/messages") and "/models/" not in path:
        return "anthropic"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if _GEMINI.search(path):
        return "gemini"
    return "unknown"


def gemini_target(path: str) -> tuple[str, bool] | None:
    """``(model, streaming)`` of a Gemini generate path, or None."""
    m = _GEMINI.search(path.rstrip("/"))
    if not m:
        return None
    return m.group("model"), m.group("method") == "streamGenerateContent"


def error_body(wire: Wire, status: int, message: str, code: str | None = None) -> dict[str, Any]:
    """The JSON error body a provider of ``wire`` sends with HTTP ``status``.

    ``code`` is a machine-readable reason (e.g. ``budget_exceeded``) where the
    format has a slot for it.
    """
    if wire == "anthropic":
        return {"type": "error", "error": {"type": _ANTHROPIC_TYPE.get(status, "api_error"), "message": message}}
    if wire == "gemini":
        return {"error": {"code": status, "message": message, "status": _GOOGLE_STATUS.get(status, "UNKNOWN")}}
    kind = "invalid_request_error" if 400 <= status < 500 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}

"""Wire formats: one module per provider API format owns its detection, request and response parsing
(streamed too), usage and error body; everyone else (the proxy's usage accounting, the metric extractors, the
trajectory converters, the model backends that answer offline) calls it through this package.

A request's wire format is read from its path:

===================  ==================================================  ===================================
``anthropic``        ``/v1/messages`` (``?beta=true`` too)                :mod:`harness.proxy.wire.anthropic`
``openai-chat``      ``/v1/chat/completions`` (also OpenRouter)           :mod:`harness.proxy.wire.chat`
``openai-responses`` ``/v1/responses``                                    :mod:`harness.proxy.wire.responses`
``gemini``           ``/v1beta/models/{model}:generateContent`` and       :mod:`harness.proxy.wire.gemini`
                     ``:streamGenerateContent``
``unknown``          anything else (forwarded, usage read from the body's shape)
===================  ==================================================  ===================================

A new format is a :class:`WireFormat` subclass registered once with :func:`register_wire_format`.  Errors the
proxy itself answers (budget refusals, unreachable upstream) use the format of the request's provider
(:func:`error_body`) so the CLI shows them as an API error.
"""

from harness.proxy.wire.base import Block, ToolSpec, UsageStream, WireFormat, string_leaves
from harness.proxy.wire.decode import StreamUsage, usage_from_body, usage_from_sse, usage_from_text
from harness.proxy.wire.registry import (UNKNOWN, Wire, detect_response, detect_wire, error_body, is_completion,
                                         register_wire_format, unregister_wire_format, wire_format, wire_formats,
                                         wire_of_record)

__all__ = ["Block", "StreamUsage", "ToolSpec", "UNKNOWN", "UsageStream", "Wire", "WireFormat", "detect_response",
           "detect_wire", "error_body", "is_completion", "register_wire_format", "string_leaves",
           "unregister_wire_format", "usage_from_body", "usage_from_sse", "usage_from_text", "wire_format",
           "wire_formats", "wire_of_record"]

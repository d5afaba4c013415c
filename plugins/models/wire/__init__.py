"""The four wire formats the scripted model backend speaks, by :func:`harness.proxy.detect_wire` name."""

from plugins.models.wire.anthropic import AnthropicWire
from plugins.models.wire.base import Call, Reply, ToolSpec, WireFormat, string_leaves
from plugins.models.wire.chat import ChatWire
from plugins.models.wire.gemini import GeminiWire
from plugins.models.wire.responses import ResponsesWire

FORMATS: dict[str, WireFormat] = {w.name: w for w in (AnthropicWire(), ChatWire(), ResponsesWire(), GeminiWire())}

__all__ = ["FORMATS", "AnthropicWire", "ChatWire", "GeminiWire", "ResponsesWire", "Call", "Reply", "ToolSpec",
           "WireFormat", "string_leaves"]

"""The four wire formats the scripted model backend speaks, by :func:`harness.proxy.detect_wire` name."""

from tsagent_plugins.models.wire.anthropic import AnthropicWire
from tsagent_plugins.models.wire.base import Call, Reply, ToolSpec, WireFormat, string_leaves
from tsagent_plugins.models.wire.chat import ChatWire
from tsagent_plugins.models.wire.gemini import GeminiWire
from tsagent_plugins.models.wire.responses import ResponsesWire

FORMATS: dict[str, WireFormat] = {w.name: w for w in (AnthropicWire(), ChatWire(), ResponsesWire(), GeminiWire())}

__all__ = ["FORMATS", "AnthropicWire", "ChatWire", "GeminiWire", "ResponsesWire", "Call", "Reply", "ToolSpec",
           "WireFormat", "string_leaves"]

"""The four wire formats the scripted model backend writes replies in, by :func:`harness.proxy.detect_wire` name
(what a request says is read by the wire format itself, :mod:`harness.proxy.wire`)."""

from tsagent_plugins.models.wire.anthropic import AnthropicWire
from tsagent_plugins.models.wire.base import Call, Reply, ToolSpec, ReplyFormat, string_leaves
from tsagent_plugins.models.wire.chat import ChatWire
from tsagent_plugins.models.wire.gemini import GeminiWire
from tsagent_plugins.models.wire.responses import ResponsesWire

FORMATS: dict[str, ReplyFormat] = {w.name: w for w in (AnthropicWire(), ChatWire(), ResponsesWire(), GeminiWire())}

__all__ = ["FORMATS", "AnthropicWire", "ChatWire", "GeminiWire", "ResponsesWire", "Call", "Reply", "ToolSpec",
           "ReplyFormat", "string_leaves"]

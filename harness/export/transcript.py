"""An episode's ATIF trajectory as an Inspect AI transcript: chat messages and model/tool events.

The mapping (ATIF v1.0-1.7, :mod:`harness.trajectory`, to Inspect AI 0.3's log types):

===============================================  ==============================================================
ATIF                                             Inspect AI
===============================================  ==============================================================
step ``source: system`` / ``user``               ``ChatMessageSystem`` / ``ChatMessageUser``
step ``source: agent``                           ``ChatMessageAssistant`` (text, ``reasoning_content`` as a
                                                 reasoning part, ``tool_calls``) and, when the step called
                                                 the model (``llm_call_count`` not 0), a ``ModelEvent`` whose
                                                 input is every message before it and whose usage is the
                                                 step's ``metrics`` (prompt tokens include cached ones in
                                                 ATIF, exclude them in Inspect: ``input_tokens`` = prompt -
                                                 cached, ``input_tokens_cache_read`` = cached)
tool call + its ``observation`` result           ``ToolEvent`` (arguments, result text; ``extra.is_error``:
                                                 an error of type ``unknown``) and a ``ChatMessageTool``
observation result with no ``source_call_id``    a ``ChatMessageUser`` (what the harness told the agent)
===============================================  ==============================================================

Images in content parts are named by their path, as text (the export carries no image files).  The
trajectory is read leniently (:func:`harness.trajectory.steps`): a step that is not an object is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from harness.trajectory import tool_arguments as json_arguments
from harness.trajectory import content_images, content_text, parse_timestamp, steps as trajectory_steps


@dataclass
class Transcript:
    """``messages`` (Inspect chat messages) and ``events`` (model and tool events) of one trajectory;
    ``started``/``completed``: its first and last step timestamps (UTC), or None."""

    messages: list = field(default_factory=list)
    events: list = field(default_factory=list)
    started: datetime | None = None
    completed: datetime | None = None

    def last_answer(self) -> str:
        """The text of the last assistant message ("" when there is none)."""
        from inspect_ai.model import ChatMessageAssistant

        for message in reversed(self.messages):
            if isinstance(message, ChatMessageAssistant) and message.text:
                return message.text
        return ""


def _text(content: Any) -> str:
    text = content_text(content)
    images = content_images(content)
    return "\n".join([text, *(f"[image: {path}]" for path in images)]) if images else text


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        stamp = parse_timestamp(value)
    except ValueError:
        return None
    return stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def usage(metrics: Any):
    """An ATIF step's ``metrics`` as an Inspect ``ModelUsage`` (None when the step has none)."""
    from inspect_ai.model import ModelUsage

    if not isinstance(metrics, dict):
        return None
    prompt, cached = _int(metrics.get("prompt_tokens")), _int(metrics.get("cached_tokens"))
    completion = _int(metrics.get("completion_tokens"))
    cost = metrics.get("cost_usd")
    return ModelUsage(input_tokens=max(prompt - cached, 0), output_tokens=completion,
                      total_tokens=prompt + completion, input_tokens_cache_read=cached or None,
                      total_cost=float(cost) if isinstance(cost, (int, float)) else None)


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as an object (:func:`harness.trajectory.exchanges`' reading); a value that is
    none is kept under ``"input"``."""
    value = json_arguments(raw)
    if value is not None:
        return value
    return {} if raw is None else {"input": raw}


def to_transcript(trajectory: dict | None, model: str) -> Transcript:
    """The Inspect transcript of an ATIF ``trajectory`` (a dict, or None: an empty transcript); ``model``
    names the model of steps that do not name one."""
    from inspect_ai.event import ModelEvent, ToolEvent
    from inspect_ai.model import (ChatCompletionChoice, ChatMessageAssistant, ChatMessageSystem, ChatMessageTool,
                                  ChatMessageUser, ContentReasoning, ContentText, GenerateConfig, ModelOutput)
    from inspect_ai.tool import ToolCall, ToolCallError

    out = Transcript()
    for step in trajectory_steps(trajectory):
        stamp = _time(step.get("timestamp"))
        if stamp is not None:
            out.started = out.started or stamp
            out.completed = stamp
        when = {"timestamp": stamp} if stamp is not None else {}
        source = step.get("source")
        text = _text(step.get("message"))
        if source == "system":
            out.messages.append(ChatMessageSystem(content=text))
            continue
        if source != "agent":
            out.messages.append(ChatMessageUser(content=text))
            continue
        step_model = step.get("model_name") if isinstance(step.get("model_name"), str) else model
        calls = [c for c in step.get("tool_calls") or [] if isinstance(c, dict)]
        tool_calls = [ToolCall(id=str(c.get("tool_call_id") or f"call-{step.get('step_id')}-{i}"),
                               function=str(c.get("function_name") or "?"), arguments=_arguments(c.get("arguments")))
                      for i, c in enumerate(calls)]
        reasoning = step.get("reasoning_content")
        content: Any = text
        if isinstance(reasoning, str) and reasoning:
            content = [ContentReasoning(reasoning=reasoning), ContentText(text=text)]
        assistant = ChatMessageAssistant(content=content, tool_calls=tool_calls or None, model=step_model)
        if step.get("llm_call_count") != 0:
            output = ModelOutput(model=step_model, choices=[ChatCompletionChoice(
                message=assistant, stop_reason="tool_calls" if tool_calls else "stop")],
                usage=usage(step.get("metrics")))
            out.events.append(ModelEvent(model=step_model, input=list(out.messages), tools=[], tool_choice="auto",
                                         config=GenerateConfig(), output=output, **when))
        out.messages.append(assistant)
        results = [r for r in (step.get("observation") or {}).get("results") or [] if isinstance(r, dict)]
        answered = {r.get("source_call_id"): r for r in results if r.get("source_call_id") is not None}
        for call in tool_calls:
            result = answered.get(call.id)
            result_text = _text(result.get("content")) if result else ""
            failed = bool(result and isinstance(result.get("extra"), dict) and result["extra"].get("is_error"))
            error = ToolCallError(type="unknown", message=result_text) if failed else None
            out.events.append(ToolEvent(id=call.id, function=call.function, arguments=call.arguments,
                                        result=result_text, error=error, completed=stamp, **when))
            out.messages.append(ChatMessageTool(content=result_text, tool_call_id=call.id, function=call.function,
                                                error=error))
        for result in results:
            if result.get("source_call_id") is None:
                out.messages.append(ChatMessageUser(content=_text(result.get("content"))))
    return out

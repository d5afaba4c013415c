"""The pydantic models of ATIF trajectories (the format and its rules: :mod:`harness.trajectory`).

Imported when a trajectory is first validated (:func:`harness.trajectory.validate_trajectory`), not when the
lenient readers of :mod:`harness.trajectory` are: building these models costs pydantic's import and a
validator per model, which loading the plugins does not pay.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.trajectory_base import SUPPORTED_VERSIONS, parse_timestamp


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageSource(_Model):
    """Where an image of a content part is stored (file path or URL)."""

    media_type: str
    path: str


class ContentPart(_Model):
    """One part of a multimodal message or observation (ATIF v1.6): text or image."""

    type: Literal["text", "image"]
    text: str | None = None
    source: ImageSource | None = None

    @model_validator(mode="after")
    def _fields_match_type(self) -> "ContentPart":
        if self.type == "text" and (self.text is None or self.source is not None):
            raise ValueError("a text part needs 'text' and no 'source'")
        if self.type == "image" and (self.source is None or self.text is not None):
            raise ValueError("an image part needs 'source' and no 'text'")
        return self


Content = str | list[ContentPart]


class ToolCall(_Model):
    """One structured tool invocation of an agent step."""

    tool_call_id: str
    function_name: str = Field(min_length=1)
    arguments: dict[str, Any]


class SubagentTrajectoryRef(_Model):
    session_id: str
    trajectory_path: str | None = None
    extra: dict[str, Any] | None = None


class ObservationResult(_Model):
    """The result of one tool call (``source_call_id``) or of an action without one."""

    source_call_id: str | None = None
    content: Content | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Model):
    results: list[ObservationResult]


class Metrics(_Model):
    """Per-step LLM usage: ``prompt_tokens`` includes ``cached_tokens``; ``cost_usd`` in USD."""

    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)
    cached_tokens: int | None = Field(None, ge=0)
    cost_usd: float | None = Field(None, ge=0)
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Model):
    total_prompt_tokens: int | None = Field(None, ge=0)
    total_completion_tokens: int | None = Field(None, ge=0)
    total_cached_tokens: int | None = Field(None, ge=0)
    total_cost_usd: float | None = Field(None, ge=0)
    total_steps: int | None = Field(None, ge=0)
    extra: dict[str, Any] | None = None


class AgentInfo(_Model):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


_AGENT_ONLY = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")
#: Fields of a model call, absent on an agent step with ``llm_call_count`` 0 (a deterministic dispatch: Harbor's
#: ATIF models enforce this rule on every version they read).
_LLM_ONLY = ("metrics", "reasoning_content")


class Step(_Model):
    """One turn: a system prompt, a user message, or an agent turn (LLM call + tools + results)."""

    step_id: int = Field(ge=1)
    timestamp: str | None = None
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: Content
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    is_copied_context: bool | None = None
    llm_call_count: int | None = Field(None, ge=0)
    extra: dict[str, Any] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso8601(cls, value: str | None) -> str | None:
        if value is not None:
            parse_timestamp(value)
        return value

    @model_validator(mode="after")
    def _agent_only_fields(self) -> "Step":
        if self.source != "agent":
            for name in _AGENT_ONLY:
                if getattr(self, name) is not None:
                    raise ValueError(f"'{name}' is only allowed on agent steps (source is {self.source!r})")
        elif self.llm_call_count == 0:
            for name in _LLM_ONLY:
                if getattr(self, name) is not None:
                    raise ValueError(f"Field '{name}' must be absent when llm_call_count is 0 "
                                     "(deterministic dispatch on a 'source: agent' step)")
        return self


class Trajectory(_Model):
    """A whole episode's interaction history."""

    schema_version: str
    session_id: str
    agent: AgentInfo
    steps: list[Step]
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    extra: dict[str, Any] | None = None

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: str) -> str:
        if value not in SUPPORTED_VERSIONS:
            raise ValueError(f"unsupported ATIF version {value!r} (supported: {', '.join(SUPPORTED_VERSIONS)})")
        return value

    @model_validator(mode="after")
    def _sequential_ids(self) -> "Trajectory":
        for index, step in enumerate(self.steps, 1):
            if step.step_id != index:
                raise ValueError(f"steps[{index - 1}].step_id is {step.step_id}; step ids must be 1, 2, 3, ...")
        calls: set[str] = set()
        for step in self.steps:
            for call in step.tool_calls or []:
                if call.tool_call_id in calls:
                    raise ValueError(f"duplicate tool_call_id {call.tool_call_id!r} (step {step.step_id})")
                calls.add(call.tool_call_id)
        return self

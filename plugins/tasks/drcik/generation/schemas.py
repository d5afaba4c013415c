"""Pydantic schemas of the answers to the Appendix L prompts (the JSON each prompt asks for).

Fields the prompts ask for are required; extra fields a model adds are dropped.  Timestamps are
``YYYY-MM-DD HH:MM:SS`` or null (the evidence prompt's ``"null"`` string is read as null).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator


class _Loose(BaseModel):
    model_config = {"extra": "ignore"}


# -- Phase 1 ------------------------------------------------------------------------------------
class Entity(_Loose):
    entity_name: str = Field(min_length=1)
    time_series_variable: list[str]
    source_tasks: list[str]
    source_tasks_as_primary_entity: list[str]


class ContainRelation(_Loose):
    parent_entity: str
    child_entity: str
    evidence: str = ""


class EntityExtraction(_Loose):
    entities: list[Entity] = Field(min_length=1)
    contain_relations: list[ContainRelation]


class Profile(_Loose):
    profile_id: str
    name: str = Field(min_length=1)
    details: dict[str, Any]


class ProfileSet(_Loose):
    entity_name: str
    profiles: list[Profile] = Field(min_length=1)


class AppliedProfile(_Loose):
    entity_name: str
    profile_id: str


class AppliedProfiles(_Loose):
    primary_entity: AppliedProfile
    ancestor_entities: list[AppliedProfile]


class ProfileAssignment(_Loose):
    source_task_id: str
    rewritten_context: str = Field(min_length=1)
    background_rewritten_context: str = Field(min_length=1)
    applied_profiles: AppliedProfiles


# -- Phase 2 ------------------------------------------------------------------------------------
def _stamp(value: Any) -> str | None:
    if value in (None, "null", "", "None"):
        return None
    datetime.strptime(str(value), "%Y-%m-%d %H:%M:%S")
    return str(value)


class Event(_Loose):
    event_id: str = Field(pattern=r"^E\d+$")
    event: str = Field(min_length=1)
    time_start: str | None = None
    time_end: str | None = None

    @field_validator("time_start", "time_end", mode="before")
    @classmethod
    def _time(cls, value: Any) -> str | None:
        return _stamp(value)


class CausalEdge(_Loose):
    cause_event_id: str
    effect_event_id: str
    relation: str = "cause"


class EvidenceDecomposition(_Loose):
    extracted_events: list[Event] = Field(min_length=1)
    causal_graph: list[CausalEdge]
    causal_context: list[str]


class ChainContext(_Loose):
    context_id: str = Field(pattern=r"^R\d+$")
    context: str = Field(min_length=1)
    origin: Literal["new", "original_preserved", "original_refactored"]
    type_count: str = ""
    source_context_id: str | None = None
    contains_source_grounded_details: bool = False
    grounded_detail_ids: list[str] = []


class ChainEdge(_Loose):
    source_context_id: str
    target_context_id: str
    relational_context: str = Field(min_length=1)
    relation: str = "cause"
    contains_source_grounded_details: bool = False
    grounded_detail_ids: list[str] = []


class ChainExpansion(_Loose):
    source_detail_inventory: list[dict[str, Any]] = []
    contexts: list[ChainContext] = Field(min_length=2)
    relation_graph: list[ChainEdge] = Field(min_length=1)
    detail_coverage: list[dict[str, Any]] = []


# -- Phase 3 ------------------------------------------------------------------------------------
class SourceMetadata(_Loose):
    name: str = Field(min_length=1)
    type: str = Field(min_length=1)
    issuer: str = Field(min_length=1)
    provides: list[str] = Field(min_length=1)
    notes: str = ""
    source_content_length: str = ""


class DistractorItem(_Loose):
    provides: list[str] = Field(min_length=1)
    distractor_type: str
    reason: str = ""
    time_series_scope: str | None = None
    time_series_feature_type: str | None = None


class DistractorSet(_Loose):
    distractors: list[DistractorItem] = Field(min_length=1)


class CounterfactualSpec(_Loose):
    reasoning: str = ""
    scope: Literal["point", "segment", "global"]
    feature_type: Literal["value", "trend", "periodicity"]
    gt_history_description: str
    gt_future_pattern: str
    distractor_history_description: str = Field(min_length=1)
    distractor_future_pattern: str = Field(min_length=1)


class DocumentContent(_Loose):
    content: str = Field(min_length=1)


# -- Appendix L.2 judges ------------------------------------------------------------------------
class JudgeVerdict(_Loose):
    judge: Literal["correct", "needs_correction", "uncertain"]
    confidence: str = ""
    summary: str = ""
    findings: list[dict[str, Any]] = []
    correction_hint: str = ""

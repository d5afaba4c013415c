"""Task-difficulty labels of Dr-CiK (Appendix L.3, stratified in Table 15).

Each causal step of a task is labelled on four dimensions, each an ordered scale (easiest first):

* ``certainty``: certain < likely < uncertain
* ``domain_knowledge``: general < specialist
* ``explicitness``: explicit < implied < implicit
* ``temporal_complexity``: straightforward < predictable < variable

The *task level* on a dimension is the level of its hardest step (the highest on the scale).  The paper labels
steps but does not say how a task gets one level; we take the hardest step because a chain is only traversed if
every one of its links is, so the hardest link bounds the task (the Domain Knowledge prompt asks for each link
to be judged "regardless of how easy the surrounding steps are").

Stored in a task file as ``annotations.difficulty`` = ``{dimension: level}`` (lower-case level names) and the
per-step labels as ``annotations.difficulty_steps`` = ``{dimension: {step_id: level}}``.
"""

from __future__ import annotations

from typing import Any, Mapping

#: dimension -> its levels, easiest first
LEVELS: dict[str, tuple[str, ...]] = {
    "certainty": ("certain", "likely", "uncertain"),
    "domain_knowledge": ("general", "specialist"),
    "explicitness": ("explicit", "implied", "implicit"),
    "temporal_complexity": ("straightforward", "predictable", "variable"),
}
DIMENSIONS = tuple(LEVELS)


def task_level(dimension: str, step_levels: list[str]) -> str:
    """The task's level on ``dimension``: its hardest step's (module docstring).  ValueError for an unknown
    dimension or level, or no step."""
    if dimension not in LEVELS:
        raise ValueError(f"unknown difficulty dimension {dimension!r} (known: {', '.join(DIMENSIONS)})")
    if not step_levels:
        raise ValueError(f"{dimension}: no labelled step")
    scale = LEVELS[dimension]
    for level in step_levels:
        if level not in scale:
            raise ValueError(f"{dimension}: unknown level {level!r} (known: {', '.join(scale)})")
    return max(step_levels, key=scale.index)


def check_difficulty(value: Any) -> list[str]:
    """Problems of an ``annotations.difficulty`` value (empty when it is a mapping of known dimensions to their
    levels); each names the field."""
    if not isinstance(value, Mapping):
        return [f"annotations.difficulty: expected a mapping, got {type(value).__name__}"]
    problems = []
    for dim, level in value.items():
        if dim not in LEVELS:
            problems.append(f"annotations.difficulty.{dim}: unknown dimension (known: {', '.join(DIMENSIONS)})")
        elif level not in LEVELS[dim]:
            problems.append(f"annotations.difficulty.{dim}: unknown level {level!r} "
                            f"(known: {', '.join(LEVELS[dim])})")
    return problems

"""Label each causal step of each task with the four Appendix L.3 prompts, and store the task levels.

Units of the stage ``qc_difficulty`` (under ``generation/``, resumable like every engine stage) are
``<task>__<dimension>``; each asks the dimension's L.3 prompt with the task's steps appended as JSON::

    {"forecasting_target": "...", "steps": [{"step_id": "E1", "text": "..."}, ...]}

The steps are the task's ``annotations.gt_evidence`` items in order (the "causal context" the paper labels).
The paper's prompts say only "Output only valid JSON"; the answer we read is :class:`StepLabels`, and an
answer that misses a step, labels one twice or uses a level not of the dimension is a failed attempt
(``check_failed``), asked again up to the engine's rounds.  Task levels follow
:func:`tsagent_plugins.tasks.drcik.dataset.difficulty.task_level` (the hardest step) and are written into the task
file's ``annotations.difficulty``; a task some dimension of which could not be labelled is left unlabelled on
that dimension and listed in the returned summary.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tsagent_plugins.tasks.drcik.dataset.difficulty import DIMENSIONS, LEVELS, task_level
from tsagent_plugins.tasks.drcik.generation.engine import Engine, Stage, Unit
from tsagent_plugins.tasks.drcik.quality.common import save_task, task_files

STAGE = "qc_difficulty"


class StepLabel(BaseModel):
    model_config = {"extra": "ignore"}
    step_id: str
    level: str


class StepLabels(BaseModel):
    model_config = {"extra": "ignore"}
    steps: list[StepLabel] = Field(min_length=1)


def steps_of(raw: dict[str, Any]) -> list[dict[str, str]]:
    return [{"step_id": str(e["id"]), "text": e["evidence"]}
            for e in (raw.get("annotations") or {}).get("gt_evidence") or []]


def stage() -> Stage:
    def generate(unit: Unit, attempt: Any) -> Any:
        answer = attempt.ask_input(f"difficulty_{unit.data['dimension']}", json.dumps(
            {"forecasting_target": unit.data["target"], "steps": unit.data["steps"]}, ensure_ascii=False),
            StepLabels)
        return [[s["step_id"], s["level"].strip().lower()] for s in answer["steps"]]

    def checks(unit: Unit, output: Any) -> list[str]:
        ids = [step_id for step_id, _ in output]
        wanted = [s["step_id"] for s in unit.data["steps"]]
        scale = LEVELS[unit.data["dimension"]]
        problems = []
        if sorted(ids) != sorted(wanted):
            problems.append(f"labelled steps {ids} are not the task's steps {wanted} (each exactly once)")
        problems += [f"step {k}: level {v!r} is not one of {', '.join(scale)}" for k, v in output
                     if v not in scale]
        return problems

    return Stage(STAGE, 0, generate, checks=checks)


def label(root: Path, engine: Engine) -> dict[str, Any]:
    """Label every task of the release folder ``root`` (module docstring); returns ``{"labelled": {task:
    {dimension: level}}, "unlabelled": {task: [dimension, ...]}}``."""
    tasks = [(path, raw) for path, raw in task_files(root) if steps_of(raw)]
    units = []
    for path, raw in tasks:
        target = (raw.get("task_metadata") or {}).get("target_description") or \
            ((raw.get("showcase") or {}).get("time_series_variable") or {}).get("name") or ""
        for dim in DIMENSIONS:
            units.append(Unit(f"{raw['benchmark_id']}__{dim}", {"dimension": dim, "steps": steps_of(raw),
                                                                "target": target}))
    results = engine.run(stage(), units)
    summary: dict[str, Any] = {"labelled": {}, "unlabelled": {}}
    for path, raw in tasks:
        tid = raw["benchmark_id"]
        levels, per_step, missing = {}, {}, []
        for dim in DIMENSIONS:
            result = results[f"{tid}__{dim}"]
            if not result.accepted:
                missing.append(dim)
                continue
            per_step[dim] = dict(result.output)
            levels[dim] = task_level(dim, list(per_step[dim].values()))
        annotations = raw.setdefault("annotations", {})
        annotations["difficulty"] = levels
        annotations["difficulty_steps"] = per_step
        save_task(path, raw)
        summary["labelled"][tid] = levels
        if missing:
            summary["unlabelled"][tid] = missing
    return summary

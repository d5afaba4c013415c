"""Human calibration of the generation judges (Dr-CiK Appendix D.2, Figure 11).

Review records.  ``GEN_DIR/generation/calibration/reviews.jsonl``, one JSON object a line
(:class:`ReviewRecord`)::

    {"task": "t1", "stage": "evidence", "unit": "t1", "reviewer": "r1", "verdict": "acceptable",
     "note": "", "entry": null}

``stage`` is one of :data:`STAGES` (the four stages the paper's reviewers labelled); ``unit`` the engine unit
of that stage (the folder ``generation/<step folder>/<unit>/``); ``entry`` null for a stage-level judgment, or
the id of one entry (an evidence event, a document) for a per-entry judgment; ``verdict`` ``acceptable`` or
``not_acceptable``; ``note`` free text (the failure mode).  A later record of the same reviewer, unit and
entry replaces an earlier one (a reviewer changing their mind); nothing is deleted from the file.

A reviewer's verdict on a unit: their stage-level record when they gave one, else ``not_acceptable`` when
any of their per-entry records is, else ``acceptable``.  The *human majority* of a unit is the verdict of
more than half of its reviewers; a tie has no majority and the unit is *not comparable* (counted apart: the
paper reports "nearly all comparable cases").

The judge's verdict on a unit: the stage's judge (prompt of :data:`STAGES`) asked again, with the current
prompt file, on the values of the unit's last judged attempt (recorded in ``attempts.jsonl``); ``correct``
accepts, ``needs_correction``, ``uncertain`` and a malformed answer reject, as in generation.  Calls run as the
engine stage ``calibrate_<stage>`` (resumable, budgeted by the clients).

Per stage (Figure 11): units, comparable, agree, judge stricter (rejects what the majority accepts), judge
more permissive (accepts what the majority rejects), and ``at_least_as_strict`` = no more-permissive unit.

Calibration tasks are not benchmark tasks (D.2: they are discarded and the benchmark regenerated):
:func:`reused_units` names the tasks of a generation that appear in a calibration file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from tsagent_plugins.tasks.drcik.generation.engine import Engine, Stage, Unit
from tsagent_plugins.tasks.drcik.generation.output import write_json
from tsagent_plugins.tasks.drcik.generation.schemas import JudgeVerdict

#: stage -> (step folder under generation/, judge prompt, unit filter on the unit id)
STAGES = {
    "evidence": ("step4_evidence_decomposition", "judge_evidence"),
    "chain": ("step5_chain_expansion", "judge_chain"),
    "supporting": ("step8_meta2doc", "judge_supporting"),
    "distractor": ("step8_meta2doc", "judge_distractor"),
}
ACCEPTABLE, NOT_ACCEPTABLE = "acceptable", "not_acceptable"
REVIEWS = Path("generation") / "calibration" / "reviews.jsonl"


class ReviewRecord(BaseModel):
    model_config = {"extra": "forbid"}
    task: str = Field(min_length=1)
    stage: Literal["evidence", "chain", "supporting", "distractor"]
    unit: str = Field(min_length=1)
    reviewer: str = Field(min_length=1)
    verdict: Literal["acceptable", "not_acceptable"]
    note: str = ""
    entry: str | None = None


def read_reviews(path: Path) -> list[ReviewRecord]:
    """The records of a reviews file (empty when it does not exist); ValueError naming the file, line and
    field of a bad record."""
    path = Path(path)
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append(ReviewRecord.model_validate(json.loads(line)))
        except ValueError as exc:
            if isinstance(exc, ValidationError):
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "<record>"
                raise ValueError(f"{path}:{n}: {where}: {first['msg']}") from None
            raise ValueError(f"{path}:{n}: not JSON ({exc})") from None
    return out


def append_review(path: Path, record: dict[str, Any]) -> ReviewRecord:
    """Validate ``record`` and append it to the reviews file ``path`` (one line, flushed)."""
    rec = ReviewRecord.model_validate(record)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(rec.model_dump_json() + "\n")
    return rec


def human_majority(records: list[ReviewRecord]) -> dict[tuple[str, str], str | None]:
    """``(stage, unit) -> majority verdict`` (None for a tie), from the latest record per reviewer and entry."""
    latest: dict[tuple, ReviewRecord] = {}
    for r in records:
        latest[(r.stage, r.unit, r.reviewer, r.entry)] = r
    per_reviewer: dict[tuple, dict[str, str]] = {}
    for (stage, unit, reviewer, entry), r in latest.items():
        votes = per_reviewer.setdefault((stage, unit), {})
        if entry is None:
            votes[reviewer] = "stage:" + r.verdict
        elif not votes.get(reviewer, "").startswith("stage:"):
            if votes.get(reviewer) != NOT_ACCEPTABLE:
                votes[reviewer] = r.verdict
    out = {}
    for key, votes in per_reviewer.items():
        values = [v.removeprefix("stage:") for v in votes.values()]
        yes, no = values.count(ACCEPTABLE), values.count(NOT_ACCEPTABLE)
        out[key] = ACCEPTABLE if yes > no else NOT_ACCEPTABLE if no > yes else None
    return out


def last_judge_values(gen_dir: Path, stage: str, unit: str) -> dict[str, str] | None:
    """The judge prompt's values of the unit's last judged attempt for ``stage`` (None when never judged)."""
    folder, prompt = STAGES[stage]
    log = Path(gen_dir) / "generation" / folder / unit / "attempts.jsonl"
    if not log.is_file():
        return None
    found = None
    for line in log.read_text(encoding="utf-8").splitlines():
        for call in json.loads(line).get("judge") or []:
            if call.get("prompt") == prompt and "values" in call:
                found = call["values"]
    return found


def judge_stage(stage: str) -> Stage:
    prompt = STAGES[stage][1]

    def generate(unit: Unit, attempt: Any) -> Any:
        return attempt.ask(prompt, unit.data, JudgeVerdict, role=prompt)

    return Stage(f"calibrate_{stage}", 0, generate)


def judge_verdicts(gen_dir: Path, engine: Engine, units: dict[str, list[str]]) -> dict[tuple[str, str], str]:
    """``(stage, unit) -> acceptable | not_acceptable`` of the stage's judge asked on each unit (module
    docstring); a unit never judged in the generation is left out."""
    out = {}
    for stage, ids in units.items():
        todo = []
        for uid in ids:
            values = last_judge_values(gen_dir, stage, uid)
            if values is not None:
                todo.append(Unit(uid, values))
        if not todo:
            continue
        for uid, result in engine.run(judge_stage(stage), todo).items():
            ok = result.output is not None and result.output.get("judge") == "correct"
            out[(stage, uid)] = ACCEPTABLE if ok else NOT_ACCEPTABLE
    return out


COLUMNS = ("stage", "units", "comparable", "agree", "judge_stricter", "judge_more_permissive", "at_least_as_strict")


def agreement(majority: dict[tuple[str, str], str | None], judge: dict[tuple[str, str], str]) -> list[dict]:
    """Figure 11: one row per stage of :data:`STAGES` that has reviewed units (module docstring)."""
    rows = []
    for stage in STAGES:
        keys = [k for k in majority if k[0] == stage]
        if not keys:
            continue
        row = {"stage": stage, "units": len(keys), "comparable": 0, "agree": 0, "judge_stricter": 0,
               "judge_more_permissive": 0}
        for k in keys:
            human, machine = majority[k], judge.get(k)
            if human is None or machine is None:
                continue
            row["comparable"] += 1
            if human == machine:
                row["agree"] += 1
            elif machine == NOT_ACCEPTABLE:
                row["judge_stricter"] += 1
            else:
                row["judge_more_permissive"] += 1
        row["at_least_as_strict"] = row["judge_more_permissive"] == 0
        rows.append(row)
    return rows


def calibrate(gen_dir: Path, engine: Engine, reviews: Path | None = None) -> dict[str, Any]:
    """Run the judges on the reviewed units of ``gen_dir`` and write ``generation/calibration/agreement.json``
    (``{"rows": [...], "records", "stage_level", "per_entry"}``); returns it."""
    gen_dir = Path(gen_dir)
    records = read_reviews(reviews or gen_dir / REVIEWS)
    if not records:
        raise ValueError(f"{reviews or gen_dir / REVIEWS}: no review record")
    majority = human_majority(records)
    units: dict[str, list[str]] = {}
    for stage, unit in majority:
        units.setdefault(stage, []).append(unit)
    judged = judge_verdicts(gen_dir, engine, units)
    result = {"rows": agreement(majority, judged), "records": len(records),
              "stage_level": sum(r.entry is None for r in records),
              "per_entry": sum(r.entry is not None for r in records),
              "tasks": sorted({r.task for r in records})}
    write_json(gen_dir / "generation" / "calibration" / "agreement.json", result)
    return result


def reused_units(gen_dir: Path, reviews: Path) -> list[str]:
    """The task ids of the generation ``gen_dir`` (its ``tasks/*.json`` and generation units) that are
    calibration tasks of the reviews file ``reviews``: a generation reusing them must be regenerated."""
    calibration = {r.task for r in read_reviews(reviews)}
    generated = {p.stem for p in (Path(gen_dir) / "tasks").glob("*.json")}
    for folder, _ in STAGES.values():
        root = Path(gen_dir) / "generation" / folder
        if root.is_dir():
            generated |= {p.name.split("__")[0] for p in root.iterdir() if p.is_dir()}
    return sorted(generated & calibration)

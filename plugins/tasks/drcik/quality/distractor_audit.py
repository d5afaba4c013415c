"""Distractor distinguishability audit (Dr-CiK Appendix D.1, Table 9).

For each distractor of a release-layout folder: can an agent that sees only the task's test-time inputs (the
history series, the forecasting objective) and the candidate document find an explicit cue to reject it?

0. **Defects** (no model call): a distractor is ``defective`` (counted apart, never rejectable) when

   * its subtype needs the correct entity (:data:`NEEDS_ENTITY`: irrelevant ``noisy``, off-variable
     ``confounder``, off-window ``temporal``: each is about *this* entity, wrong in another way) but it names
     no entity an agent is given (the objective's profile, ``showcase.entity.name``): such a document is
     rejectable only by leaning on a name it lacks, not by the cue its type was built on (issue 37);
   * the generation flagged its unit for human repair (``generation.flagged`` of a task exported with
     ``--include-flagged``): an unrepaired unit is not certified.

1. **Rule passes** (deterministic, no model call), in this order; the first that finds a cue decides
   ``rejectable`` (``by: rule``, with the rule's name and the cue):

   * ``out_of_window``: the document gives at least one date (``YYYY-MM-DD``, ``Month D, YYYY`` or
     ``Month YYYY``) and every date it gives lies outside the task window, from the first history timestamp
     to the last forecast timestamp (a month counts as inside when it overlaps the window);
   * ``entity_mismatch``: the objective's entity (the task's ``showcase.entity.name``) is not named in the
     document;
   * ``disqualifier``: the document uses disqualifying language (:data:`DISQUALIFIERS`: hypothetical,
     counterfactual, simulated, retracted, "had ... not", "unrelated to", ...);
   * subtype markers (:data:`SUBTYPE_MARKERS`): ``noisy`` (irrelevant) and ``confounder`` (off-variable)
     distractors that never name the target variable (``showcase.time_series_variable.name``).

   The paper lists these passes without their exact rules; these are ours.  A rule may reject a distractor
   for another cue than the one its subtype was built on (a ``noisy`` memo dated years before the window is
   rejectable by its date): the audit asks whether *a* cue exists.
2. **LLM check** (prompt ``audit_distractor``) on what the rules leave: ``yes`` = rejectable (``by: llm``),
   ``unsure`` = ambiguous, ``no`` = failing.  A distractor whose check gives no answer after the engine's
   rounds is ambiguous (nothing is silently passed).

Result per subtype: distractors, rejectable by rule, rejectable by the LLM, explicitly rejectable (both),
ambiguous, failing, defective (:func:`table9`).  The LLM stage is ``qc_distractor`` under ``generation/`` (resumable).
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tsagent_plugins.tasks.drcik.generation.engine import Engine, Stage, Unit
from tsagent_plugins.tasks.drcik.quality.common import task_files

STAGE = "qc_distractor"
REJECTABLE, AMBIGUOUS, FAILING, DEFECTIVE = "rejectable", "ambiguous", "failing", "defective"
#: subtypes whose distractors are about the task's own entity (release names: irrelevant, off-variable, off-window)
NEEDS_ENTITY = ("noisy", "confounder", "temporal")
DISQUALIFIERS = re.compile(
    r"\b(hypothetical(ly)?|counterfactual|simulated|simulation exercise|fictional|retracted|superseded|"
    r"withdrawn|had\s+\w+(\s+\w+)?\s+not|unrelated to|no (bearing|impact|effect) on|does not (affect|apply))\b",
    re.IGNORECASE)
SUBTYPE_MARKERS = {"noisy": "variable_absent", "confounder": "variable_absent"}
MONTHS = ("january february march april may june july august september october november december").split()
_MONTH = r"(" + "|".join(MONTHS) + r"|" + "|".join(m[:3] for m in MONTHS) + r")\.?"
ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
LONG = re.compile(_MONTH + r"\s+(\d{1,2}),?\s+(\d{4})\b", re.IGNORECASE)
MONTH_YEAR = re.compile(_MONTH + r"\s+(\d{4})\b", re.IGNORECASE)


class CheckAnswer(BaseModel):
    model_config = {"extra": "ignore"}
    rejectable: str
    cue: str = ""


def _month(name: str) -> int:
    name = name.lower().rstrip(".")
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name[:3]))


def dates_in(text: str) -> list[tuple[datetime, datetime]]:
    """The dates a text gives, each as an interval ``(start, end)`` (a day, or a whole month for "Month YYYY")."""
    out, taken = [], []
    for m in ISO.finditer(text):
        try:
            d = datetime(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            continue
        out.append((d, d.replace(hour=23, minute=59)))
        taken.append(m.span())
    for m in LONG.finditer(text):
        try:
            d = datetime(int(m[3]), _month(m[1]), int(m[2]))
        except ValueError:
            continue
        out.append((d, d.replace(hour=23, minute=59)))
        taken.append(m.span())
    for m in MONTH_YEAR.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        start = datetime(int(m[2]), _month(m[1]), 1)
        end = datetime(start.year + (start.month == 12), start.month % 12 + 1, 1)
        out.append((start, end))
    return out


def window(raw: dict) -> tuple[datetime, datetime]:
    s = raw["series"]
    fmt = "%Y-%m-%d %H:%M:%S"
    return datetime.strptime(s["history_timestamps"][0], fmt), datetime.strptime(s["future_timestamps"][-1], fmt)


def rule_pass(raw: dict, document: dict) -> tuple[str, str] | None:
    """``(rule, cue)`` of the first rule pass that finds a cue to reject ``document`` (module docstring), or
    None when the rules leave it ambiguous."""
    text = document["content"]
    lower = text.lower()
    start, end = window(raw)
    dates = dates_in(text)
    if dates and all(b < start or a > end for a, b in dates):
        return "out_of_window", f"every date outside {start:%Y-%m-%d}..{end:%Y-%m-%d}"
    entity = (((raw.get("showcase") or {}).get("entity") or {}).get("name") or "").strip()
    if entity and entity.lower() not in lower:
        return "entity_mismatch", f"{entity!r} not named"
    m = DISQUALIFIERS.search(text)
    if m:
        return "disqualifier", m.group(0)
    variable = (((raw.get("showcase") or {}).get("time_series_variable") or {}).get("name") or "").strip()
    if SUBTYPE_MARKERS.get(document.get("subtype")) == "variable_absent" and variable \
            and variable.lower() not in lower:
        return "variable_absent", f"target variable {variable!r} not named"
    return None


def defect(raw: dict, document: dict) -> tuple[str, str] | None:
    """``(rule, cue)`` when ``document`` is defective (module docstring, step 0), else None."""
    subtype = document.get("subtype")
    flagged = [f for f in ((raw.get("generation") or {}).get("flagged") or [])
               if f.get("stage") in ("step7_distractor_metadata", "step8_meta2doc")
               and f"__{subtype}" in str(f.get("unit"))]
    if flagged:
        return "flagged_for_repair", f"unit {flagged[0]['unit']} flagged: {flagged[0].get('reason')}"
    entity = (((raw.get("showcase") or {}).get("entity") or {}).get("name") or "").strip()
    if subtype in NEEDS_ENTITY and entity and entity.lower() not in document["content"].lower():
        return "entity_missing", f"a {subtype} distractor names no entity ({entity!r} absent)"
    return None


def objective(raw: dict) -> str:
    return (raw.get("task_metadata") or {}).get("target_description") or ""


def stage() -> Stage:
    def generate(unit: Unit, attempt: Any) -> Any:
        raw, document = unit.data
        s = raw["series"]
        history = "\n".join(f"({t}, {v})" for t, v in zip(s["history_timestamps"], s["history_values"]))
        answer = attempt.ask("audit_distractor", {
            "objective": objective(raw), "history": history, "document": document["content"],
            "forecast_window": f"{s['future_timestamps'][0]} to {s['future_timestamps'][-1]}"}, CheckAnswer)
        return answer

    def checks(unit: Unit, output: Any) -> list[str]:
        value = output["rejectable"].strip().lower()
        return [] if value in ("yes", "no", "unsure") else [f"rejectable={value!r} is not yes, no or unsure"]

    return Stage(STAGE, 0, generate, checks=checks)


def audit(root: Path, engine: Engine) -> list[dict[str, Any]]:
    """One record per distractor of ``root``: ``task``, ``document_id``, ``subtype``, ``status`` (rejectable,
    ambiguous, failing), ``by`` (rule, llm or None), ``rule``, ``cue``."""
    records, pending = [], []
    for _, raw in task_files(root):
        for document in raw.get("documents") or []:
            if document.get("role") != "distractor":
                continue
            rec = {"task": raw["benchmark_id"], "document_id": document["document_id"],
                   "subtype": document.get("subtype"), "status": None, "by": None, "rule": None, "cue": None}
            bad, hit = defect(raw, document), rule_pass(raw, document)
            if bad:
                rec.update(status=DEFECTIVE, by="rule", rule=bad[0], cue=bad[1])
            elif hit:
                rec.update(status=REJECTABLE, by="rule", rule=hit[0], cue=hit[1])
            else:
                pending.append((rec, Unit(f"{raw['benchmark_id']}__{document['document_id']}", (raw, document))))
            records.append(rec)
    if pending:
        results = engine.run(stage(), [u for _, u in pending])
        for rec, unit in pending:
            result = results[unit.id]
            answer = (result.output or {}).get("rejectable", "").strip().lower() if result.accepted else "unsure"
            rec.update(status={"yes": REJECTABLE, "no": FAILING}.get(answer, AMBIGUOUS),
                       by="llm" if answer == "yes" else None, cue=(result.output or {}).get("cue") or None)
    return records


COLUMNS = ("subtype", "distractors", "rejectable_by_rule", "rejectable_by_llm", "explicitly_rejectable",
           "ambiguous", "failing", "defective")


def table9(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Table 9: one row per subtype (sorted) and a ``total`` row, columns :data:`COLUMNS`."""
    rows = []
    subtypes = sorted({str(r["subtype"]) for r in records})
    for name in subtypes + ["total"]:
        rs = [r for r in records if name == "total" or str(r["subtype"]) == name]
        rows.append({"subtype": name, "distractors": len(rs),
                     "rejectable_by_rule": sum(r["by"] == "rule" and r["status"] == REJECTABLE for r in rs),
                     "rejectable_by_llm": sum(r["by"] == "llm" for r in rs),
                     "explicitly_rejectable": sum(r["status"] == REJECTABLE for r in rs),
                     "ambiguous": sum(r["status"] == AMBIGUOUS for r in rs),
                     "failing": sum(r["status"] == FAILING for r in rs),
                     "defective": sum(r["status"] == DEFECTIVE for r in rs)})
    return rows

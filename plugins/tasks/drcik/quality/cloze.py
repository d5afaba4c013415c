"""Cloze audit of supporting documents (Dr-CiK Appendix D.1, Table 8).

Blanks.  In each ground-truth evidence item (``annotations.gt_evidence``) of a task, every occurrence of the task's
entity name (``showcase.entity.name``), every ISO date (``YYYY-MM-DD``, optionally with a time) and every other
standalone number (not part of a word such as ``m3``; thousands separators kept) is masked as ``[BLANK_n]``
(numbered over the task, in evidence order then text order).  A blank is a *fact*, not a fragment: a date-time
(``2025-01-02 12:00``), a clock time (``09:00``, ``9:30 pm``) and a range of either (``09:00 to 15:00``,
``2025-01-02 to 2025-01-04``, ``09:00-15:00``, ``between 09:00 and 15:00``) are one blank each, never split into
their numbers (issue 37: "09:00 to 15:00" as four number blanks made a one-hour misread a partial answer).  A model, seeing only the task's supporting documents
and the masked evidence (prompt ``audit_cloze``), fills each blank.

Score of a blank in [0, 1] (the paper says correct / partial / wrong, not how partial is graded; this rule is
ours):

* a number: 1 when the answer's first number equals the truth (thousands separators ignored, relative tolerance
  1e-9); else ``1 - |answer - truth| / |truth|`` when that is > 0 (a near miss); else 0 (no number, or off by
  100 % or more; a truth of 0 answered otherwise scores 0);
* a date, a date-time or a clock time: 1 when the answer's first one of that kind is the same (times compared on
  the 24-hour clock, seconds ``:00`` when not written), else 0: a clock reading is right or wrong;
* a range: 1 when the answer's first two dates/times are both ends, 0.5 when one end is, else 0;
* a name: 1 when equal after case folding and whitespace collapsing; else the token F1 of answer and truth
  (shared words), 0 when no word is shared.

A blank is *correct* at 1, *wrong* at 0, *partial* in between.  The paper's figures fix the mean of its partial
blanks, not the rule: (0.9372 × 908 − 769) / 131 = 0.626 (:func:`implied_partial_mean`); graded scores of this
kind (a number off by about a third, a name with two of three words) give such values.

Documents to repair: for each blank scoring below 1, the supporting document sharing most words with the blank's
unmasked evidence item (the one meant to carry it; ties: first in file order).

Rounds.  :func:`audit` writes ``generation/qc_cloze/round_<n>.json`` (every blank: task, blank id, evidence id,
truth, answer, score, document to repair).  With ``repair=True`` (after a person edited the listed documents)
it re-asks only the blanks that scored below 1 in the latest round, masking only those, and carries the other
blanks over; each round's model stage is ``qc_cloze_r<n>`` under ``generation/`` (resumable).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tsagent_plugins.tasks.drcik.generation.engine import Engine, Stage, Unit
from tsagent_plugins.tasks.drcik.generation.output import write_json
from tsagent_plugins.tasks.drcik.quality.common import task_files

NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_DAY = r"\d{4}-\d{2}-\d{2}"
_CLOCK = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\b\.?)?"
DATETIME = re.compile(rf"\b{_DAY}[ T]{_CLOCK}")
DATE = re.compile(rf"\b{_DAY}\b(?![ T]\d{{1,2}}:)")
TIME = re.compile(rf"(?<![\d:-]){_CLOCK}(?![\d:])", re.IGNORECASE)
_POINT = rf"(?:{_DAY}(?:[ T]{_CLOCK})?|{_CLOCK})"
POINT = re.compile(rf"(?<![\d:-]){_POINT}(?![\d:])", re.IGNORECASE)
_END = rf"(?<![\d:-]){_POINT}(?![\d:])"
RANGE = re.compile(rf"(?<=between\s){_END}\s+and\s+{_END}|"
                   rf"{_END}(?:\s*[-\u2013\u2014]\s*|\s+(?:to|until|till|through)\s+){_END}", re.IGNORECASE)
#: the fact patterns, first match wins (a range before its ends, a date-time before its date)
FACTS = ((RANGE, "range"), (DATETIME, "datetime"), (DATE, "date"), (TIME, "time"), (NUMBER, "number"))
WORD = re.compile(r"[a-z0-9]+")
PAPER = {"blanks": 908, "correct": 769, "partial": 131, "wrong": 8, "mean": 0.9372}


class Answer(BaseModel):
    model_config = {"extra": "ignore"}
    blank: str
    answer: str = ""


class Answers(BaseModel):
    model_config = {"extra": "ignore"}
    answers: list[Answer]


def implied_partial_mean(p: dict = PAPER) -> float:
    """The mean score of the partial blanks that the paper's counts and mean imply."""
    return (p["mean"] * p["blanks"] - p["correct"]) / p["partial"]


def _number(text: str) -> float | None:
    m = NUMBER.search(text or "")
    return float(m.group(0).replace(",", "")) if m else None


def _words(text: str) -> list[str]:
    return WORD.findall((text or "").lower())


def score(kind: str, truth: str, answer: str) -> float:
    """The score of one blank (module docstring); ``kind`` is ``number``, ``date``, ``datetime``, ``time``, ``range`` or ``name``."""
    if kind == "number":
        t, a = _number(truth), _number(answer)
        if a is None or t is None:
            return 0.0
        if abs(a - t) <= 1e-9 * max(abs(t), 1e-300):
            return 1.0
        return max(0.0, 1.0 - abs(a - t) / abs(t)) if t != 0 else 0.0
    if kind in ("date", "datetime", "time"):
        found = [p for p in _points(answer) if _kind_of(p) == kind]
        return 1.0 if found and found[0] == _points(truth)[0] else 0.0
    if kind == "range":
        ends, got = _points(truth)[:2], _points(answer)[:2]
        return sum(a == b for a, b in zip(ends, got)) / 2 if len(ends) == 2 else 0.0
    if " ".join(_words(truth)) == " ".join(_words(answer)):
        return 1.0
    tw, aw = _words(truth), _words(answer)
    shared = sum(min(tw.count(w), aw.count(w)) for w in set(tw))
    if not shared:
        return 0.0
    precision, recall = shared / len(aw), shared / len(tw)
    return 2 * precision * recall / (precision + recall)


def _clock(text: str) -> str:
    """``HH:MM:SS`` on the 24-hour clock of a clock reading such as ``9:30 pm``."""
    m = re.match(r"(\d{1,2}):(\d{2})(?::(\d{2}))?\s?([ap])?", text.strip(), re.IGNORECASE)
    hour = int(m[1]) % 12 + (12 if (m[4] or "").lower() == "p" else 0) if m[4] else int(m[1])
    return f"{hour:02d}:{m[2]}:{m[3] or '00'}"


def _points(text: str) -> list[str]:
    """The dates, date-times and clock times of ``text`` in order, normalised (``YYYY-MM-DD``,
    ``YYYY-MM-DD HH:MM:SS``, ``HH:MM:SS``)."""
    out = []
    text = re.sub(r"(\d:\d{2}(?::\d{2})?)\s*[-\u2013\u2014]\s*(?=\d)", r"\1 to ", text or "")  # 09:00-15:00
    for m in POINT.finditer(text):
        day = re.match(_DAY, m.group(0))
        if day and len(m.group(0)) == 10:
            out.append(m.group(0))
        elif day:
            out.append(f"{m.group(0)[:10]} {_clock(m.group(0)[11:])}")
        else:
            out.append(_clock(m.group(0)))
    return out


def _kind_of(point: str) -> str:
    return "datetime" if len(point) > 10 else "date" if "-" in point else "time"


def grade(value: float) -> str:
    return "correct" if value >= 1.0 else "wrong" if value <= 0.0 else "partial"


def blanks_of(raw: dict) -> list[dict[str, Any]]:
    """Every blank of a task (module docstring): ``{blank, evidence_id, kind, truth, start, end}``."""
    entity = (((raw.get("showcase") or {}).get("entity") or {}).get("name") or "").strip()
    out = []
    for item in (raw.get("annotations") or {}).get("gt_evidence") or []:
        text = item["evidence"]
        spans = []
        if entity:
            spans += [(m.start(), m.end(), "name") for m in re.finditer(re.escape(entity), text, re.IGNORECASE)]
        for pattern, kind in FACTS:
            for m in pattern.finditer(text):
                if not any(a < m.end() and m.start() < b for a, b, _ in spans):
                    spans.append((m.start(), m.end(), kind))
        for a, b, kind in sorted(spans):
            out.append({"blank": f"BLANK_{len(out) + 1}", "evidence_id": str(item["id"]), "kind": kind,
                        "truth": text[a:b], "start": a, "end": b})
    return out


def masked(raw: dict, blanks: list[dict]) -> str:
    """The evidence items with ``blanks`` masked, one ``<id>: <text>`` line each."""
    lines = []
    for item in (raw.get("annotations") or {}).get("gt_evidence") or []:
        text = item["evidence"]
        for b in sorted((b for b in blanks if b["evidence_id"] == str(item["id"])), key=lambda b: -b["start"]):
            text = text[:b["start"]] + f"[{b['blank']}]" + text[b["end"]:]
        lines.append(f"{item['id']}: {text}")
    return "\n".join(lines)


def supporting(raw: dict) -> list[dict]:
    return [d for d in raw.get("documents") or [] if d.get("role") == "supporting"]


def repair_document(raw: dict, evidence_id: str) -> str | None:
    item = next(e for e in raw["annotations"]["gt_evidence"] if str(e["id"]) == evidence_id)
    want = set(_words(item["evidence"]))
    best, best_n = None, -1
    for d in supporting(raw):
        n = len(want & set(_words(d["content"])))
        if n > best_n:
            best, best_n = d["document_id"], n
    return best


def stage(name: str) -> Stage:
    def generate(unit: Unit, attempt: Any) -> Any:
        raw, blanks = unit.data
        docs = "\n\n".join(f"[{d['document_id']}]\n{d['content']}" for d in supporting(raw))
        return attempt.ask("audit_cloze", {"documents": docs, "masked_evidence": masked(raw, blanks)}, Answers)

    def checks(unit: Unit, output: Any) -> list[str]:
        wanted = {b["blank"] for b in unit.data[1]}
        got = {a["blank"] for a in output["answers"]}
        return [f"blanks not answered: {', '.join(sorted(wanted - got))}"] if wanted - got else []

    return Stage(name, 0, generate, checks=checks)


def _rounds(root: Path) -> list[Path]:
    return sorted((root / "generation" / "qc_cloze").glob("round_*.json"), key=lambda p: int(p.stem[6:]))


class NothingToRepair(ValueError):
    """A repair round asked for when the last round's blanks are all correct: not an error for the command."""


def audit(root: Path, engine: Engine, repair: bool = False) -> dict[str, Any]:
    """One round of the cloze audit of the release folder ``root`` (module docstring); returns the round's
    record ``{"round", "blanks": [...], "table": table8 row}``.  ``repair`` without a previous round, or with
    no failed blank left (:class:`NothingToRepair`), is a ValueError saying so."""
    root = Path(root)
    previous = _rounds(root)
    carried: list[dict] = []
    todo: dict[str, list[dict]] = {}
    tasks = {raw["benchmark_id"]: raw for _, raw in task_files(root)}
    if repair:
        if not previous:
            raise ValueError(f"{root}: no cloze round to repair (run the audit first)")
        last = json.loads(previous[-1].read_text(encoding="utf-8"))
        for b in last["blanks"]:
            (todo.setdefault(b["task"], []) if b["score"] < 1.0 else carried).append(b)
        if not todo:
            raise NothingToRepair(f"{previous[-1]}: every blank is correct; nothing to re-run")
        for tid, failed in todo.items():  # re-read the blanks from the (possibly edited) task, keep the failed ones
            ids = {b["blank"] for b in failed}
            todo[tid] = [b for b in blanks_of(tasks[tid]) if b["blank"] in ids]
    else:
        todo = {tid: blanks_of(raw) for tid, raw in tasks.items() if blanks_of(raw)}
    n = len(previous) + 1 if repair else 1
    units = [Unit(tid, (tasks[tid], blanks)) for tid, blanks in sorted(todo.items())]
    results = engine.run(stage(f"qc_cloze_r{n}"), units)
    scored = []
    for unit in units:
        raw, blanks = unit.data
        result = results[unit.id]
        answers = {a["blank"]: a["answer"] for a in (result.output or {}).get("answers", [])} \
            if result.output else {}
        for b in blanks:
            value = score(b["kind"], b["truth"], answers.get(b["blank"], ""))
            scored.append({"task": unit.id, "blank": b["blank"], "evidence_id": b["evidence_id"], "kind": b["kind"],
                           "truth": b["truth"], "answer": answers.get(b["blank"], ""), "score": round(value, 6),
                           "grade": grade(value),
                           "repair_document": None if value >= 1.0 else repair_document(raw, b["evidence_id"])})
    blanks = sorted(carried + scored, key=lambda b: (b["task"], int(b["blank"][6:])))
    record = {"round": n, "repair": repair, "asked": len(scored), "blanks": blanks, "table": table8_row(blanks)}
    write_json(root / "generation" / "qc_cloze" / f"round_{n}.json", record)
    return record


TABLE8_COLUMNS = ("blanks", "tasks", "correct", "partial", "wrong", "mean_score")


def table8_row(blanks: list[dict]) -> dict[str, Any]:
    """Table 8's figures for a list of scored blanks."""
    grades = [b["grade"] for b in blanks]
    return {"blanks": len(blanks), "tasks": len({b["task"] for b in blanks}), "correct": grades.count("correct"),
            "partial": grades.count("partial"), "wrong": grades.count("wrong"),
            "mean_score": round(sum(b["score"] for b in blanks) / len(blanks), 4) if blanks else None}


def documents_to_repair(blanks: list[dict]) -> list[dict[str, Any]]:
    """``[{task, document_id, blanks: [...]}]``, one per document holding a blank below 1."""
    out: dict[tuple, list] = {}
    for b in blanks:
        if b["score"] < 1.0:
            out.setdefault((b["task"], b["repair_document"]), []).append(b["blank"])
    return [{"task": t, "document_id": d, "blanks": bl} for (t, d), bl in sorted(out.items(), key=str)]


def rounds(root: Path) -> list[dict[str, Any]]:
    """Every cloze round of ``root`` in order (empty when none ran)."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in _rounds(Path(root))]

"""The output of ``harness dr-generate``: a folder in the release layout, and ``generation/summary.json``.

Release layout (as the public sample has it; the ``drcik`` template runs it with ``--set tasks=DIR``)::

    benchmark_manifest.json
    tasks/<task_id>.json      benchmark_id, split, origin, reasoning_hops, showcase, task_metadata, series,
                              documents [{document_id, content, role, subtype, path}],
                              annotations.gt_evidence [{id, evidence, role}], source_generation_hops,
                              labels_public, and ``generation`` (below)
    documents/doc_<n>.md

``generation`` in a task file holds what agents never see (research episodes are given the documents,
not the task file): the window shift, the rewritten context of step 3, and the task's units flagged for
human repair (only with ``--include-flagged``: otherwise such a task is held back in
``generation/repair_queue.json``, :func:`write_release`).  The original context, which names the real
entity, stays under ``generation/anonymisation/`` (:mod:`.anonymity`).  Document ids are ``doc_<n>``
numbered over the exported tasks in id order, so a re-run gives the same ids.  A task that lacks an output of some stage (every attempt of a unit it
needs was malformed) is not written; the summary names it and the stage.

``generation/summary.json``: per stage the units, attempts, accepted units, first-pass rate (accepted at
the first attempt over units, as Appendix D.2 reports it), flagged units, tokens and cost (generator and
judge); per judge its calls, verdicts and the first-pass rate of the stages it guards; totals.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from tsagent_plugins.tasks.drcik.generation import anonymity
from tsagent_plugins.tasks.drcik.generation.caf import TIMESTAMP_FORMAT
from tsagent_plugins.tasks.drcik.generation.checks import evidence_role
from tsagent_plugins.tasks.drcik.generation.pipeline import SUBTYPES, TaskState

SCHEMA_VERSION = "public_benchmark_v1"
REPAIR_QUEUE = Path("generation") / "repair_queue.json"


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def task_record(st: TaskState, hops: int, split: str, documents: list[dict]) -> dict:
    caf, shifted = st.caf, st.shifted
    first_future = datetime.strptime(shifted.series.future_timestamps[0], TIMESTAMP_FORMAT)
    return {
        "benchmark_id": caf.task_id,
        "split": split,
        "origin": caf.origin,
        "reasoning_hops": hops,
        "showcase": {"entity": {"name": st.profile["name"], "type": st.entity},
                     "profile": {"id": st.profile["profile_id"], "name": st.profile["name"],
                                 "details": st.profile["details"]},
                     "time_series_variable": {"name": st.variable}},
        "task_metadata": {"frequency": caf.frequency, "prediction_length": caf.prediction_length,
                          "seasonal_period": caf.seasonal_period,
                          "target_description": st.rewrite["target_description"]},
        "series": shifted.series.model_dump(mode="json"),
        "documents": documents,
        "annotations": {"gt_evidence": [{"id": e["event_id"], "evidence": e["event"],
                                         "role": evidence_role(e.get("time_start"), first_future)}
                                        for e in st.evidence["extracted_events"]]},
        "source_generation_hops": hops,
        "labels_public": True,
        "generation": {"shift_weeks": (shifted.series.datetimes()[0] - caf.series.datetimes()[0]).days // 7,
                       "rewritten_context": st.rewrite["rewritten_context"],
                       "background_rewritten_context": st.rewrite["background_rewritten_context"],
                       "flagged": st.flags, "flagged_for_repair": bool(st.flags)},
    }


def _documents(st: TaskState, first: int) -> list[dict]:
    """The task's documents (supporting, then each subtype), numbered ``doc_<first>``, ``doc_<first + 1>``..."""
    documents = []
    for group in ("supporting", *SUBTYPES):
        for content in st.documents.get(group, []):
            doc_id = f"doc_{first + len(documents)}"
            documents.append({"document_id": doc_id, "content": content,
                              "role": "supporting" if group == "supporting" else "distractor",
                              "subtype": None if group == "supporting" else group,
                              "path": f"documents/{doc_id}.md"})
    return documents


def _unit_output(out: Path, flag: dict) -> Any:
    path = out / "generation" / flag["stage"] / flag["unit"] / "result.json"
    return json.loads(path.read_text(encoding="utf-8")).get("output") if path.is_file() else None


def write_release(out: Path, states: dict[str, TaskState], hops: int, split: str, per_subtype: int,
                  name: str, include_flagged: bool = False) -> dict[str, Any]:
    """Write ``tasks/``, ``documents/``, ``benchmark_manifest.json`` and ``generation/repair_queue.json``;
    returns ``{"written": [...], "incomplete": {task_id: stage}, "held_back": {task_id: [failing checks]}}``.

    A task with a unit flagged for human repair (Appendix D.2), or naming a real name of Phase 1
    (:mod:`.anonymity`), is *held back*: not exported, but queued in ``generation/repair_queue.json`` with each
    flagged unit's failing checks and last output (and the task record it would have had), until it is
    repaired and re-checked (``--resume`` regenerates a unit whose folder was removed).  ``include_flagged``
    exports flagged tasks anyway, marked ``generation.flagged_for_repair`` (and in the manifest); a real-name
    leak is never exported."""
    out = Path(out)
    counter = 0
    entries, incomplete, held, queue = [], {}, {}, []
    for tid in sorted(states):
        st = states[tid]
        if st.missing is not None or "supporting" not in st.documents:
            incomplete[tid] = st.missing or "step8_meta2doc"
            continue
        documents = _documents(st, counter + 1)
        record = task_record(st, hops, split, documents)
        write_json(Path(out) / anonymity.FOLDER / f"{tid}.json", {"task": tid, "real_names": st.real_names,
                                         "original_context": st.caf.context.model_dump(mode="json"),
                                         "original_target_description": st.caf.target_description,
                                         "shifted_context": st.shifted.context.text()})
        leaks = anonymity.record_leaks(record, st.real_names, [f"{tid}.json"])
        problems = [f"{f['stage']} {f['unit']}: {f['reason']}" for f in st.flags] + \
            [f"anonymisation: real name in {leak}" for leak in leaks]
        if leaks or (st.flags and not include_flagged):
            held[tid] = problems
            queue.append({"task": tid, "problems": problems,
                          "units": [{**f, "last_output": _unit_output(out, f)} for f in st.flags],
                          "record": record})
            continue
        counter += len(documents)
        (out / "documents").mkdir(parents=True, exist_ok=True)
        for d in documents:
            (out / d["path"]).write_text(d["content"].rstrip() + "\n", encoding="utf-8")
        write_json(out / "tasks" / f"{tid}.json", record)
        entries.append({"benchmark_id": tid, "path": f"tasks/{tid}.json",
                        "prediction_length": st.caf.prediction_length, "frequency": st.caf.frequency,
                        "document_count": len(documents), "origin": st.caf.origin, "reasoning_hops": hops,
                        "labels_public": True, **({"flagged_for_repair": True} if st.flags else {})})
    write_json(out / "benchmark_manifest.json", {
        "dataset_name": "Dr-CiK", "dataset_version": name, "schema_version": SCHEMA_VERSION,
        "note": "Generated by harness dr-generate (Dr-CiK Section 4.1).", "split": split,
        "reasoning_hops": hops, "distractor_count": per_subtype, "task_count": len(entries),
        "document_count": counter, "held_back_for_repair": len(held), "tasks": entries})
    write_json(out / REPAIR_QUEUE, {"held_back": len(queue), "include_flagged": include_flagged, "tasks": queue})
    return {"written": [e["benchmark_id"] for e in entries], "incomplete": incomplete, "held_back": held}


def repair_queue(out: Path) -> dict[str, Any]:
    """``generation/repair_queue.json`` of a generation (``{"held_back": 0, "tasks": []}`` when absent)."""
    path = Path(out) / REPAIR_QUEUE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"held_back": 0, "tasks": []}


def summarise(generation: Path) -> dict[str, Any]:
    """``summary.json``'s content, read back from the attempts under ``generation/`` (so a resumed run
    counts the attempts of the run it continues)."""
    stages: dict[str, Any] = {}
    judges: dict[str, dict[str, Any]] = {}
    for folder in sorted(p for p in generation.glob("step*") if p.is_dir()):
        s = {"units": 0, "attempts": 0, "accepted": 0, "first_pass": 0, "flagged": [], "malformed": 0,
             "check_failed": 0, "rejected": 0, "tokens": {"generator": 0, "judge": 0},
             "cost_usd": {"generator": 0.0, "judge": 0.0}}
        for unit in sorted(p for p in folder.iterdir() if p.is_dir()):
            result_path = unit / "result.json"
            if not result_path.is_file():
                continue
            result = json.loads(result_path.read_text(encoding="utf-8"))
            s["units"] += 1
            s["accepted"] += bool(result["accepted"])
            s["first_pass"] += bool(result["first_pass"])
            if result["flagged"]:
                s["flagged"].append({"unit": result["unit"], "reason": result["reason"]})
            for line in (unit / "attempts.jsonl").read_text(encoding="utf-8").splitlines():
                attempt = json.loads(line)
                s["attempts"] += 1
                if attempt["status"] in ("malformed", "check_failed", "rejected"):
                    s[attempt["status"]] += 1
                for call in attempt["generator"]:
                    s["tokens"]["generator"] += call.get("tokens", 0)
                    s["cost_usd"]["generator"] += call.get("cost_usd", 0.0)
                for call in attempt["judge"]:
                    s["tokens"]["judge"] += call.get("tokens", 0)
                    s["cost_usd"]["judge"] += call.get("cost_usd", 0.0)
                    j = judges.setdefault(call["prompt"], {"calls": 0, "verdicts": {}, "model": call["model"],
                                                           "stages": []})
                    j["calls"] += 1
                    j["verdicts"][call.get("verdict")] = j["verdicts"].get(call.get("verdict"), 0) + 1
                    if folder.name not in j["stages"]:
                        j["stages"].append(folder.name)
        s["first_pass_rate"] = round(s["first_pass"] / s["units"], 4) if s["units"] else None
        s["cost_usd"] = {k: round(v, 6) for k, v in s["cost_usd"].items()}
        stages[folder.name] = s
    for j in judges.values():
        j["verdicts"] = dict(sorted(j["verdicts"].items(), key=lambda kv: str(kv[0])))
    total_cost = sum(sum(s["cost_usd"].values()) for s in stages.values())
    return {"stages": stages, "judges": dict(sorted(judges.items())),
            "totals": {"units": sum(s["units"] for s in stages.values()),
                       "attempts": sum(s["attempts"] for s in stages.values()),
                       "flagged": sum(len(s["flagged"]) for s in stages.values()),
                       "tokens": sum(sum(s["tokens"].values()) for s in stages.values()),
                       "cost_usd": round(total_cost, 6)}}

"""A research episode as the input of the DR context conditions (Dr-CiK Level-1 pipeline, Section 5.4).

A forecasting stage with ``evidence_from`` (or ``params.evidence``) names a research run
directory and the DR agent (profile) whose episodes produced the evidence; this module reads
those episodes into :class:`~tsagent_plugins.tasks.drcik.dataset.contexts.DrOutput` (claims, report, the agent
and run, the pool's ids) that ``dr-evidence``, ``dr-report`` and ``verified-dr`` read.  It is
the one reader of research outputs for forecasting: :class:`tsagent_plugins.tasks.drcik.template.DrcikTemplate`
uses it.  An agent's output never raises here (a missing or unreadable output is ``None``: the
episode is scored as failed with "no DR evidence"); the files the harness wrote (results rows, scores, research
keys) are read by their one reader each, whose error names an unreadable file.
"""

from __future__ import annotations

import json
from pathlib import Path

from harness import finished_episodes, read_score
from tsagent_plugins.tasks.drcik.dataset import contexts as ctx
from tsagent_plugins.tasks.drcik.research import outputs as research_out
from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask
from tsagent_plugins.tasks.drcik.research.episodes import REPORT_FILE, read_key


def research_claims(folder: Path) -> list[ctx.EvidenceClaim] | None:
    """The evidence of one research episode folder as claims citing release ids (None: none readable).

    What :func:`tsagent_plugins.tasks.drcik.research.episodes.score_research` writes: ``score.json`` details (one
    ``{"claim", "cited", "resolved", "dropped"}`` per kept item, in the agent's order; the claim there
    is clipped for display) and ``key/deep_research.jsonl`` (the full claims, same items, same order).
    Claims come from the export when it matches the details item for item, else from the details;
    citations are each item's ``resolved`` release ids (hallucinated ids are already dropped).
    Without a score, ``workspace/evidence.json`` is read with the bounded reader and its sandbox ids
    mapped with ``key/research_key.json``; without a key its ids are taken as release ids.
    """
    folder = Path(folder)
    details = (read_score(folder) or {}).get("details")
    if isinstance(details, list) and details and all(isinstance(d, dict) and isinstance(d.get("resolved"), list)
                                                      for d in details):
        claims = [str(d.get("claim", "")) for d in details]
        export = first_json_line(folder / "key" / research_out.DEEP_RESEARCH_FILE)
        evidence = export.get("evidence") if export else None
        if isinstance(evidence, list) and len(evidence) == len(details) and all(
                isinstance(e, str) and e.startswith(c) for e, c in zip(evidence, claims)):
            claims = evidence
        return [ctx.EvidenceClaim(c, tuple(map(str, d["resolved"]))) for c, d in zip(claims, details)]
    written = folder / "workspace" / "evidence.json"
    if not written.is_file():
        return None
    items, _ = research_out.read_evidence(written)
    key = read_key(folder / "key")
    if key is not None and isinstance(key.get("ids"), dict):
        resolved = research_out.resolve(items, key["ids"]).items
        return [ctx.EvidenceClaim(i.claim, tuple(i.resolved)) for i in resolved]
    return [ctx.EvidenceClaim(i.claim, tuple(i.cited)) for i in items]


def research_output(folder: Path | str, agent: str | None = None) -> ctx.DrOutput | None:
    """One research episode folder (``<run>/episodes/<key>/``) as a :class:`DrOutput`: the claims of
    :func:`research_claims`, the agent's ``workspace/report.md`` (bounded reader; None when absent or
    unreadable), ``known_ids`` = the pool's release ids from the key (None without a key), ``run`` =
    the run directory's name and ``run_dir`` its resolved path.  None when no evidence is readable."""
    folder = Path(folder)
    claims = research_claims(folder)
    if claims is None:
        return None
    report, _ = research_out.read_report(folder / "workspace" / REPORT_FILE)
    key = read_key(folder / "key") or {}
    documents = key.get("documents")
    known = frozenset(documents) if isinstance(documents, dict) else None
    run_dir = folder.parent.parent.resolve()
    return ctx.DrOutput(tuple(claims), report, agent, run_dir.name, known, str(run_dir))


def episode_task(folder: Path, row: dict) -> tuple[str | None, str | None]:
    """(benchmark_id, agent profile) of a research episode folder from its results ``row`` (the
    benchmark id falls back to the key's); (None, None) when it is not a research episode."""
    task_id = row.get("benchmark_id") or (read_key(folder / "key") or {}).get("benchmark_id")
    agent = row.get("profile") or row.get("agent")
    return (task_id if isinstance(task_id, str) else None), (str(agent) if agent else None)


def dr_outputs_from_run(run_dir: Path | str, agent: str | None = None) -> dict[str, dict[str, ctx.DrOutput]]:
    """``{agent: {benchmark_id: DrOutput}}`` for the finished research episodes of a run (only ``agent``'s
    when given; the agent is the row's ``profile``, else its ``agent``).  A task researched twice by one
    agent keeps the later episode (folder order).  A failed episode (row ``status`` not ``ok``: the agent
    crashed or timed out, even if it left an empty ``evidence.json``) gives no output: its task is
    forecast as "no DR evidence" (failed, counted apart), never as if the agent had found nothing."""
    outputs: dict[str, dict[str, ctx.DrOutput]] = {}
    for folder, row in finished_episodes(run_dir):
        task_id, who = episode_task(folder, row)
        if task_id is None or who is None or (agent is not None and who != agent):
            continue
        if row.get("status") not in (None, "ok"):
            continue
        out = research_output(folder, who)
        if out is not None:
            outputs.setdefault(who, {})[task_id] = out
    return outputs


def forecasting_contexts(run_dir: Path | str, tasks: list[DrcikTask],
                         conditions: tuple[str, ...] = ctx.DR_CONDITIONS
                         ) -> list[dict]:
    """One record per (DR agent, task, condition): the text a forecaster is given, its status and
    item count, and the evidence source (``evidence_agent``, ``evidence_run``).  A task the agent did
    not research has status ``missing``."""
    records = []
    for agent, by_task in sorted(dr_outputs_from_run(run_dir).items()):
        for task in tasks:
            dr = by_task.get(task.benchmark_id)
            for name in conditions:
                base = {"evidence_agent": agent, "benchmark_id": task.benchmark_id, "context": name,
                        "evidence_run": dr.run_dir if dr else None}
                if dr is None:
                    records.append({**base, "text": None, "context_status": "missing", "context_items": 0})
                    continue
                text = ctx.get(name).text_for(task, dr)
                records.append({**base, "text": text.text, "context_status": text.status,
                                "context_items": text.items})
    return records


def first_json_line(path: Path) -> dict | None:
    """The first JSON object line of a ``.jsonl`` file (None when missing or unreadable)."""
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.loads(fh.readline())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

"""Inputs of the DR metrics (:mod:`.metrics`) and DR context conditions, read from research
episodes: a loaded task, an episode's key folder, or a whole research run directory.

An episode folder (``harness run``, template ``drcik``, ``episode_kind: research``) holds its results row
(``profile``: the DR agent's name in every DR table, since one agent plugin runs under
several profiles; ``agent`` when there is no profile), ``score.json`` (``details``: per item, the resolved
release ids and its ``position`` in the agent's list; ``metrics``: hallucinated ids, distinct and
occurrences) and ``key/`` with ``research_key.json`` (pool documents with task/role/subtype,
S_t, ground-truth evidence), ``deep_research.jsonl`` (the full claims, in the agent's order)
and the agent's ``report.md`` in ``workspace/`` (the ids it cites, resolved with the key's ``ids``, join Q_t).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from harness import ConfigError, finished_episodes, read_score
from tsagent_plugins.tasks.drcik.research.metrics import Claim, DocInfo, ResearchOutput, TaskLabels
from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask
from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE, REPORT_FILE, read_key
from tsagent_plugins.tasks.drcik.research.outputs import DEEP_RESEARCH_FILE, Resolved, report_citations, resolve_id


def labels_from_task(task: DrcikTask) -> TaskLabels:
    """Ground truth of a loaded task (``reasoning_hops`` and ``origin`` from its top-level fields)."""
    hops = task.metadata.get("reasoning_hops")
    return TaskLabels(task.benchmark_id, tuple((e.id, e.text) for e in task.evidence),
                      frozenset(task.supporting_ids), int(hops) if isinstance(hops, (int, float)) else None,
                      task.metadata.get("origin"), tuple((e.id, e.role) for e in task.evidence if e.role),
                      tuple(sorted(task.difficulty.items())))


def documents_from_tasks(tasks: list[DrcikTask]) -> dict[str, DocInfo]:
    """The pooled corpus as release id -> :class:`DocInfo`."""
    return {d.document_id: DocInfo(d.task_id, d.role, d.subtype) for t in tasks for d in t.documents}


def output_from_resolved(agent: str, benchmark_id: str, resolved: Resolved, run: str | None = None) -> ResearchOutput:
    """A :class:`ResearchOutput` from :func:`tsagent_plugins.tasks.drcik.research.outputs.resolve`'s result."""
    return ResearchOutput(agent, benchmark_id, tuple(Claim(i.claim, tuple(i.resolved), i.position)
                                                     for i in resolved.items),
                          resolved.hallucinated, run, tuple(resolved.report_cited), resolved.hallucinated_occurrences)


@dataclass
class ResearchEpisode:
    """One finished research episode: its output, its report text, the documents of its pool."""

    output: ResearchOutput
    report: str | None
    documents: dict[str, DocInfo]
    folder: Path


def _key(folder: Path) -> dict:
    """The episode's research key (:func:`~tsagent_plugins.tasks.drcik.research.episodes.read_key`), which a
    research episode must have: ConfigError naming the file when it is missing."""
    key = read_key(folder / "key")
    if key is None:
        raise ConfigError(folder / "key" / KEY_FILE, ["research key: missing"])
    return key


def read_episode(folder: Path | str, row: dict) -> ResearchEpisode:
    """Read one research episode folder and its results ``row`` (see the module docstring; the pairs of
    :func:`research_episodes`); ConfigError naming file and field, :class:`harness.RowError` naming an
    unreadable ``score.json``."""
    folder = Path(folder)
    key = _key(folder)
    score = read_score(folder)
    if score is None:
        raise ConfigError(folder / "score.json", ["score: cannot read (the episode was not scored)"])
    export_path = folder / "key" / DEEP_RESEARCH_FILE
    try:
        lines = [line for line in export_path.read_text(encoding="utf-8").splitlines() if line.strip()]
        export = json.loads(lines[0])
    except (OSError, IndexError, ValueError) as exc:
        raise ConfigError(export_path, [f"row: unreadable or empty ({type(exc).__name__})"]) from None
    details = score.get("details") or []
    claims = export.get("evidence") or []
    if len(details) != len(claims):
        raise ConfigError(folder / "score.json", [f"details: {len(details)} items but {DEEP_RESEARCH_FILE} "
                                                  f"has {len(claims)} claims"])
    items = tuple(Claim(text, tuple(d.get("resolved") or ()),
                        d["position"] if isinstance(d.get("position"), int) else None)
                  for text, d in zip(claims, details))
    metrics = score.get("metrics") or {}
    report_path = folder / "workspace" / REPORT_FILE
    report = report_path.read_text(encoding="utf-8", errors="replace") if report_path.is_file() else None
    mapping = key.get("ids") or {}
    report_cited = tuple(dict.fromkeys(r for r in (resolve_id(i, mapping) for i in report_citations(report))
                                       if r is not None))
    distinct = int(metrics.get("hallucinated_ids") or 0)
    output = ResearchOutput(str(row.get("profile") or row.get("agent") or "?"), key["benchmark_id"], items,
                            distinct, str(row.get("run_id") or folder.parent.parent.name), report_cited,
                            int(metrics.get("hallucinated_id_occurrences", distinct) or 0))
    documents = {rid: DocInfo(d.get("task"), d.get("role"), d.get("subtype")) for rid, d in key["documents"].items()}
    return ResearchEpisode(output, report, documents, folder)


def research_episodes(run_dir: Path | str) -> list[tuple[Path, dict]]:
    """``(folder, results row)`` of the finished research episodes (a research key beside the row) of a run,
    in folder order (:func:`harness.finished_episodes`)."""
    return [(folder, row) for folder, row in finished_episodes(run_dir) if (folder / "key" / KEY_FILE).is_file()]


def read_research_run(run_dir: Path | str) -> list[ResearchEpisode]:
    """Every finished research episode of a run (:func:`research_episodes`, :func:`read_episode`)."""
    return [read_episode(folder, row) for folder, row in research_episodes(run_dir)]


def labels_from_key(folder: Path | str) -> TaskLabels:
    """Ground truth from an episode's ``key/research_key.json`` (items numbered E1, E2... when the
    key predates ``gt_evidence_ids``; no roles or difficulty when it predates ``gt_evidence_roles`` and
    ``difficulty``)."""
    path = Path(folder) / "key" / KEY_FILE
    key = _key(Path(folder))
    texts = key.get("gt_evidence") or []
    ids = key.get("gt_evidence_ids") or [f"E{i}" for i in range(1, len(texts) + 1)]
    if len(ids) != len(texts):
        raise ConfigError(path, ["gt_evidence_ids: not one id per gt_evidence item"])
    hops = key.get("reasoning_hops")
    roles = key.get("gt_evidence_roles") or [None] * len(ids)
    difficulty = key.get("difficulty") if isinstance(key.get("difficulty"), dict) else {}
    return TaskLabels(key["benchmark_id"], tuple(zip(ids, texts)), frozenset(key.get("supporting") or ()),
                      int(hops) if isinstance(hops, (int, float)) else None, key.get("origin"),
                      tuple((i, str(r)) for i, r in zip(ids, roles) if r), tuple(sorted(difficulty.items())))

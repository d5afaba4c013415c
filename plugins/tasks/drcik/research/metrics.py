"""Deep-research (Level-2) metrics of Dr-CiK (paper Appendix H.1 "Deep Research Metrics",
Section 5.3 / Table 3, Appendix I.1–I.2 / Figure 16, Figure 7).

Pure functions over plain data; no file or model access.  Inputs:

- :class:`TaskLabels`: a task's ground-truth evidence items ``(id, text)`` in release order,
  its supporting documents S_t, ``reasoning_hops`` and ``origin``;
- :class:`ResearchOutput`: one DR agent's output on one task, its evidence items in the
  agent's order with *resolved* release ids (unresolved ids already dropped and counted in
  ``hallucinated``);
- ``documents``: release id -> :class:`DocInfo` (owning task, role, subtype) for the pool;
- judge verdicts: one bool per item of E_t (True: matched within the top K_t).

Definitions (Appendix H.1 notation):

- **E_t** = the task's ground-truth evidence items excluding the initial background item
  E1 (:func:`scored_evidence`; the release numbers items ``E1``, ``E2``...; E1 is the item
  with id ``E1``, or the first item when no id is ``E1``).
- **K_t** = |E_t| + 5; the items at the first K_t *positions of the agent's own list* are judged
  (:func:`judged_claims`).  A malformed item the reader dropped keeps its position (``Claim.position``):
  an item after it does not move up into the top K_t.
- **Evidence recall** of a task = (items of E_t matched within the top K_t) / |E_t|.  Pooled
  recall (the paper's headline, Table 3) = Σ matched / Σ |E_t| over tasks; per-task mean =
  mean of the per-task recalls (tasks with |E_t| = 0 are left out of both).
- **Supporting-document recall** = |Q_t ∩ S_t| / |S_t|, Q_t = "the set of all resolved documents
  cited by the DR report" (H.1): the unique resolved ids of the evidence items *and* of the report
  text (``ResearchOutput.report_cited``: ids cited only in ``report.md`` count).  The paper defines it per evidence item with the
  required documents R_e; the public release gives no R_e, so we use the task's supporting
  set S_t (said wherever it is shown).  Tasks with S_t = ∅ are left out.
- **Distractor avoidance.**  H.1 defines the sets but gives no formula: "For distractor metrics, let
  Q_t denote the set of all resolved documents cited by the DR report, D_t the set of distractor
  documents available for task t, and P_t the full document pool available for task t."  Two
  readings are computed, both named:

  * ``cited_not_distractor`` = 1 − |Q_t \\ S_t| / |Q_t|: the share of cited documents that are not
    distractors, where every cited document outside S_t is one (the task's own distractors and,
    in the shared corpus, any other task's document: Appendix I.1 calls those "cross-task
    distractors"); defined only when |Q_t| ≥ 1, so tasks citing nothing are left out of the mean.
    **Table 3 shows this reading** (``distractor_avoidance``): the release's own scorer defines
    distractor avoidance as "1 − share of cited documents that are distractors, averaged over tasks
    with ≥ 1 citation", and Section 5.3 reads Table 3's number as what the agent's citations let
    in: "Codex also leads in distractor avoidance, yet at 42.3% still admits most distractors"
    (57.7 % of its citations are distractors).
  * ``distractors_uncited`` = 1 − |Q_t ∩ D_t| / |D_t| (D_t = the task's own distractor documents):
    the share of the task's distractors left uncited, the reading of Appendix I.2's per-subtype
    numbers ("Codex cites 78% of the unique counterfactual-history distractor universe"); a task
    citing nothing scores 1 and stays in the mean (tasks with D_t = ∅ have no value).

  Q_t \\ S_t splits into *in-task distractors* (the task's own distractor documents, by subtype)
  and *cross-task* documents (any document of another task, supporting or distractor).
- **C_e**: for each matched item of E_t, the documents cited by the synthesized item(s) the judge
  matched it to (:func:`matched_documents`).
- **Subtype citation share** (Appendix I.2, "Codex cites 78 % of the unique
  counterfactual-history distractor universe"): per subtype, the unique documents of that
  subtype cited in their own task's episodes / all documents of that subtype in the
  evaluated tasks.
- **Hallucinated ids**: unresolved citations.  The paper does not say whether an id cited twice
  counts twice; our headline (``hallucinated``) counts *distinct* unresolved ids per task (summed
  over tasks), as in Appendix I.1's "their two unresolved document IDs are excluded as
  hallucinated"; ``hallucinated_occurrences`` counts every occurrence.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

#: Extra synthesized items judged beyond |E_t| (Appendix H.1: K_t = |E_t| + 5).
K_EXTRA = 5
#: The initial background item, excluded from E_t (Appendix H.1).
BACKGROUND_ID = "E1"
#: The paper's subtype names (Section 4.2), keyed by the names in the data.
SUBTYPES = {"noisy": "irrelevant", "confounder": "off-variable", "profile": "off-entity",
            "temporal": "off-window", "timeseries": "counterfactual history"}


@dataclass(frozen=True)
class DocInfo:
    """A pool document: owning ``task``, ``role`` (``supporting``|``distractor``), data ``subtype``."""

    task: str
    role: str
    subtype: str | None = None


@dataclass(frozen=True)
class TaskLabels:
    """Ground truth of one task: ``evidence`` ((id, text) in release order, E1 included),
    ``supporting`` (S_t, release ids), ``reasoning_hops`` and ``origin`` (None when absent), ``roles``
    ((item id, ``retrospective`` | ``prospective``) for the items the task marks, Appendix K.2) and
    ``difficulty`` ((dimension, level) of the task's Appendix L.3 labels); both empty when absent."""

    benchmark_id: str
    evidence: tuple[tuple[str, str], ...]
    supporting: frozenset[str]
    reasoning_hops: int | None = None
    origin: str | None = None
    roles: tuple[tuple[str, str], ...] = ()
    difficulty: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Claim:
    """One synthesized evidence item: the claim and its resolved release ids."""

    claim: str
    cited: tuple[str, ...] = ()
    position: int | None = None  # index in the agent's own list (malformed items included); None: its index here


@dataclass(frozen=True)
class ResearchOutput:
    """One DR agent's output on one task (items in the agent's order)."""

    agent: str
    benchmark_id: str
    claims: tuple[Claim, ...]
    hallucinated: int = 0
    run: str | None = None
    report_cited: tuple[str, ...] = ()   # resolved ids cited in report.md (part of Q_t)
    hallucinated_occurrences: int | None = None   # None: same as ``hallucinated``


@dataclass
class TaskDR:
    """DR metrics of one (agent, task).  Ratios are in [0, 1]; None where undefined."""

    agent: str
    benchmark_id: str
    n_evidence: int
    matched: int
    evidence_recall: float | None
    supporting_recall: float | None
    distractor_avoidance: float | None
    cited: int
    in_task_distractors: dict[str, int] = field(default_factory=dict)
    cross_task: int = 0
    hallucinated: int = 0
    judge_malformed: int = 0
    reasoning_hops: int | None = None
    origin: str | None = None
    distractors_uncited: float | None = None
    cited_not_distractor: float | None = None
    n_distractors: int = 0
    hallucinated_occurrences: int = 0


def scored_evidence(labels: TaskLabels) -> list[tuple[str, str]]:
    """E_t: the ground-truth items without the background item E1 (see the module docstring)."""
    items = list(labels.evidence)
    if any(i == BACKGROUND_ID for i, _ in items):
        return [(i, t) for i, t in items if i != BACKGROUND_ID]
    return items[1:]


def k_t(labels: TaskLabels) -> int:
    """K_t = |E_t| + 5."""
    return len(scored_evidence(labels)) + K_EXTRA


def _position(claim: Claim, index: int) -> int:
    return index if claim.position is None else claim.position


def judged_items(output: ResearchOutput, labels: TaskLabels) -> list[Claim]:
    """The items at the agent's first K_t positions (its own list, malformed items included), in order."""
    limit = k_t(labels)
    return [c for i, c in enumerate(output.claims) if _position(c, i) < limit]


def judged_claims(output: ResearchOutput, labels: TaskLabels) -> list[str]:
    """The claims the judge sees: those of :func:`judged_items`."""
    return [c.claim for c in judged_items(output, labels)]


def cited_documents(output: ResearchOutput) -> list[str]:
    """Q_t: unique resolved ids cited by the evidence items, then by the report text, first-citation order."""
    seen: dict[str, None] = {}
    for claim in output.claims:
        for rid in claim.cited:
            seen.setdefault(rid, None)
    for rid in output.report_cited:
        seen.setdefault(rid, None)
    return list(seen)


def matched_documents(output: ResearchOutput, labels: TaskLabels, index: int | None) -> list[str]:
    """C_e of one matched item: the documents cited by the judged item at ``index`` (1-based in
    :func:`judged_claims`, as a judge's verdict gives it); [] when ``index`` is None or out of range."""
    items = judged_items(output, labels)
    return list(items[index - 1].cited) if index is not None and 1 <= index <= len(items) else []


def evidence_recall(matches: Sequence[bool]) -> float | None:
    """Share of E_t matched (``matches``: one bool per item of E_t); None when E_t is empty."""
    return sum(bool(m) for m in matches) / len(matches) if matches else None


def supporting_recall(cited: Iterable[str], supporting: Iterable[str]) -> float | None:
    """|Q_t ∩ S_t| / |S_t|; None when S_t is empty."""
    s = set(supporting)
    return len(set(cited) & s) / len(s) if s else None


def cited_not_distractor(cited: Iterable[str], supporting: Iterable[str]) -> float | None:
    """Share of cited documents that are not distractors: 1 − |Q_t \\ S_t| / |Q_t|; None when Q_t is empty.
    Table 3's distractor avoidance (module docstring)."""
    q = set(cited)
    return 1.0 - len(q - set(supporting)) / len(q) if q else None


#: Table 3's reading (module docstring).
distractor_avoidance = cited_not_distractor


def distractors_uncited(cited: Iterable[str], distractors: Iterable[str]) -> float | None:
    """Share of the task's distractors D_t left uncited: 1 − |Q_t ∩ D_t| / |D_t| (1.0 when nothing is
    cited); None when D_t is empty (module docstring)."""
    d = set(distractors)
    return 1.0 - len(set(cited) & d) / len(d) if d else None


def task_distractors(benchmark_id: str, documents: Mapping[str, DocInfo]) -> set[str]:
    """D_t: the distractor documents of ``benchmark_id`` in the pool."""
    return {rid for rid, info in documents.items() if info.task == benchmark_id and info.role == "distractor"}


def split_non_supporting(cited: Iterable[str], benchmark_id: str, supporting: Iterable[str],
                         documents: Mapping[str, DocInfo]) -> tuple[Counter, int]:
    """(in-task distractors by data subtype, cross-task documents) among Q_t \\ S_t.

    A document missing from ``documents`` is counted cross-task (it is not the task's)."""
    in_task: Counter = Counter()
    cross = 0
    for rid in set(cited) - set(supporting):
        info = documents.get(rid)
        if info is not None and info.task == benchmark_id and info.role == "distractor":
            in_task[info.subtype or "unknown"] += 1
        else:
            cross += 1
    return in_task, cross


def score_task(output: ResearchOutput, labels: TaskLabels, documents: Mapping[str, DocInfo],
               matches: Sequence[bool | None]) -> TaskDR:
    """DR metrics of one (agent, task).  ``matches``: one verdict per item of E_t (None: the
    judge's answer was malformed, counted in ``judge_malformed`` and as not matched)."""
    e_t = scored_evidence(labels)
    if len(matches) != len(e_t):
        raise ValueError(f"{labels.benchmark_id}: {len(matches)} judge verdicts for {len(e_t)} evidence items")
    cited = cited_documents(output)
    in_task, cross = split_non_supporting(cited, labels.benchmark_id, labels.supporting, documents)
    hits = [m is True for m in matches]
    d_t = task_distractors(labels.benchmark_id, documents)
    clean = cited_not_distractor(cited, labels.supporting)
    occurrences = output.hallucinated if output.hallucinated_occurrences is None else output.hallucinated_occurrences
    return TaskDR(output.agent, labels.benchmark_id, len(e_t), sum(hits), evidence_recall(hits),
                  supporting_recall(cited, labels.supporting), clean,
                  len(cited), dict(in_task), cross, output.hallucinated, sum(m is None for m in matches),
                  labels.reasoning_hops, labels.origin, distractors_uncited(cited, d_t), clean,
                  len(d_t), occurrences)


@dataclass
class AgentDR:
    """Table 3 row of one agent (ratios in [0, 1]; None where no task defines them)."""

    agent: str
    tasks: int
    evidence_recall_pooled: float | None
    evidence_recall_mean: float | None
    supporting_recall: float | None
    distractor_avoidance: float | None
    avoidance_tasks: int
    in_task_distractors: dict[str, int]
    cross_task: int
    hallucinated: int
    judge_malformed: int
    distractors_uncited: float | None = None
    uncited_tasks: int = 0
    hallucinated_occurrences: int = 0


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def aggregate(scores: Iterable[TaskDR]) -> dict[str, AgentDR]:
    """Per agent: pooled and per-task-mean evidence recall, mean supporting recall, mean distractor
    avoidance (share of cited documents that are not distractors, over tasks with a citation:
    ``avoidance_tasks``), mean share of D_t left uncited (over tasks with D_t ≠ ∅, citing nothing
    included: ``uncited_tasks``), distractor counts, hallucinated ids (distinct per task, and occurrences)."""
    by_agent: dict[str, list[TaskDR]] = {}
    for s in scores:
        by_agent.setdefault(s.agent, []).append(s)
    out = {}
    for agent, rows in by_agent.items():
        with_e = [r for r in rows if r.n_evidence]
        total = sum(r.n_evidence for r in with_e)
        subtypes: Counter = Counter()
        for r in rows:
            subtypes.update(r.in_task_distractors)
        avoid = [r.distractor_avoidance for r in rows if r.distractor_avoidance is not None]
        uncited = [r.distractors_uncited for r in rows if r.distractors_uncited is not None]
        out[agent] = AgentDR(
            agent, len(rows), sum(r.matched for r in with_e) / total if total else None,
            _mean([r.evidence_recall for r in with_e]),
            _mean([r.supporting_recall for r in rows if r.supporting_recall is not None]),
            _mean(avoid), len(avoid), dict(subtypes), sum(r.cross_task for r in rows),
            sum(r.hallucinated for r in rows), sum(r.judge_malformed for r in rows),
            _mean(uncited), len(uncited), sum(r.hallucinated_occurrences for r in rows))
    return out


def subtype_citation_share(outputs: Iterable[ResearchOutput], documents: Mapping[str, DocInfo],
                           task_ids: Iterable[str]) -> dict[str, float | None]:
    """Per data subtype: unique distractors of that subtype cited in their own task's outputs /
    all distractors of that subtype in the evaluated ``task_ids`` (Appendix I.2).  Pass one
    agent's outputs for that agent's share."""
    tasks = set(task_ids)
    universe: Counter = Counter(info.subtype for info in documents.values()
                                if info.role == "distractor" and info.task in tasks)
    cited: set[str] = set()
    for out in outputs:
        for rid in cited_documents(out):
            info = documents.get(rid)
            if info is not None and info.role == "distractor" and info.task == out.benchmark_id \
                    and info.task in tasks:
                cited.add(rid)
    hits = Counter(documents[rid].subtype for rid in cited)
    return {sub: (hits[sub] / n if n else None) for sub, n in sorted(universe.items(), key=lambda kv: str(kv[0]))}


def recall_by(scores: Iterable[TaskDR], attribute: str) -> dict[tuple[str, object], float | None]:
    """Pooled evidence recall per (agent, value of ``attribute``) — e.g. ``reasoning_hops``
    (Figure 7) or ``origin``."""
    groups: dict[tuple[str, object], list[TaskDR]] = {}
    for s in scores:
        groups.setdefault((s.agent, getattr(s, attribute)), []).append(s)
    out = {}
    for key, rows in groups.items():
        total = sum(r.n_evidence for r in rows)
        out[key] = sum(r.matched for r in rows) / total if total else None
    return out

"""Context conditions as data (paper Section 5.4, Appendix F; Appendix G "Context conditions").

Each :class:`ContextCondition` turns a task (and, for the DR conditions, a DR
agent's synthesized evidence) into the text a forecaster is given:

- ``no-context``: nothing;
- ``background``: the task's ``target_description``.  This is a stand-in: the
  public release omits the original context fields (``background``,
  ``instruction``, ``constraints``, ``full_text``), so it is flagged
  ``reproduces_paper = False`` so reports can say so;
- ``original-context`` / ``rewritten-context``: the CAF task's own context and its step-3 rewrite, given
  only where the task carries them (``generation.original_context`` / ``generation.rewritten_context``,
  written by ``harness dr-generate``); the public release omits both (:data:`UNAVAILABLE`), so a run asking
  for them on such tasks is refused before it starts, naming the task and field (:func:`text_problem`);
- ``supporting-evidence``: the ground-truth evidence items;
- ``retrospective-only`` / ``prospective-only`` (Appendix K.2, Table 17): the ground-truth evidence items
  of that role only (``annotations.gt_evidence[i].role``); a task that does not mark every item's role
  cannot be given these conditions (ValueError naming the task and field; the template refuses such a
  run before it starts); a task with no item of the role gets no context (status ``empty``);
- ``supporting-documents``: the raw text of the task's supporting documents;
- ``dr-evidence``: every claim of a DR agent's ``evidence.json`` (the release's
  ``deepresearch_insights`` mode);
- ``dr-report``: the DR agent's full ``report.md`` (the release's ``deepresearch`` mode);
- ``verified-dr``: unresolved ids are dropped first (ids outside the pool, when the
  pool is known); then an item is kept only if it still cites at least one document
  and all its citations are supporting documents of the task; none left gives status
  ``verified_empty`` and the forecaster gets no context (a No Context forecast; reports
  count these tasks).

The DR conditions take either a list of :class:`EvidenceClaim` or a :class:`DrOutput`
(claims + report + which agent and run produced them, see
:func:`tsagent_plugins.tasks.drcik.research.as_context.dr_outputs_from_run`).

Statistical forecasters ignore text (``Forecaster.uses_context`` is False);
results rows record that with :func:`context_used`.

A DR agent's ``evidence.json`` is a list (or ``{"evidence": [...]}``) of items
``{"claim": str, "cited_document_ids": [str, ...]}``, the ids being release
ids (map sandbox ids back with :meth:`SandboxCorpus.export_ids` first).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from harness import ConfigError
from tsagent_plugins.tasks.drcik.dataset.loader import PROSPECTIVE, RETROSPECTIVE, SUPPORTING, DrcikTask

OK = "ok"
EMPTY = "empty"
VERIFIED_EMPTY = "verified_empty"
LABELS_HIDDEN = "labels_hidden"

#: The evidence-role conditions (Appendix K.2, Table 17): only tasks marking each item's role can be given them.
ROLE_CONDITIONS = ("retrospective-only", "prospective-only")

#: Paper conditions given only where the task carries their text (``harness dr-generate`` output writes
#: both under ``generation``): condition -> (the task field, why the public release cannot give it).
UNAVAILABLE: dict[str, tuple[str, str]] = {
    "original-context": ("generation.original_context", "the release omits the original CAF context "
                                                        "(background, instruction, constraints, full_text)"),
    "rewritten-context": ("generation.rewritten_context", "the release omits the rewritten context "
                                                          "(task-generation step 3 output)"),
}


@dataclass(frozen=True)
class EvidenceClaim:
    """One DR-synthesized evidence item: a free-form claim and the release ids it cites."""

    claim: str
    cited_document_ids: tuple[str, ...] = ()


@dataclass(frozen=True)
class DrOutput:
    """A DR agent's output on one task: ``claims`` (release ids), ``report`` (markdown or None),
    the ``agent``, ``run`` and ``run_dir`` that produced it, and ``known_ids`` (the pool's release
    ids, or None when unknown: then no id is treated as unresolved)."""

    claims: tuple[EvidenceClaim, ...]
    report: str | None = None
    agent: str | None = None
    run: str | None = None
    known_ids: frozenset[str] | None = None
    run_dir: str | None = None


def _claims(dr) -> list[EvidenceClaim]:
    return list(dr.claims) if isinstance(dr, DrOutput) else list(dr or [])


@dataclass(frozen=True)
class ContextText:
    """The text given to the forecaster (None: no context) and a status
    (``ok``, ``empty``, ``verified_empty``, ``labels_hidden``)."""

    text: str | None
    status: str = OK
    items: int = 0


@dataclass(frozen=True)
class ContextCondition:
    """A named context condition.  ``needs_dr``: needs a DR agent's evidence.
    ``reproduces_paper``: False when it only stands in for the paper's condition."""

    name: str
    description: str
    build: Callable[[DrcikTask, "list[EvidenceClaim] | DrOutput | None"], ContextText] = field(repr=False)
    needs_dr: bool = False
    reproduces_paper: bool = True

    def text_for(self, task: DrcikTask, dr_evidence: "list[EvidenceClaim] | DrOutput | None" = None) -> ContextText:
        """The context for ``task``; ValueError if a DR condition gets no DR evidence."""
        if self.needs_dr and dr_evidence is None:
            raise ValueError(f"context condition {self.name!r} needs a DR agent's evidence for "
                             f"task {task.benchmark_id}")
        return self.build(task, dr_evidence)


def _bullets(items: list[str]) -> str:
    """One ``- `` bullet per item; continuation lines of multi-line items indented by two spaces."""
    return "\n".join("- " + item.strip().replace("\n", "\n  ") for item in items)


def _no_context(task, _dr):
    return ContextText(None, OK, 0)


def _background(task, _dr):
    text = task.target_description.strip()
    return ContextText(text or None, OK if text else EMPTY, int(bool(text)))


def _supporting_evidence(task, _dr):
    if not task.evidence:
        status = LABELS_HIDDEN if not task.labels_public else EMPTY
        return ContextText(None, status, 0)
    return ContextText(_bullets([e.text for e in task.evidence]), OK, len(task.evidence))


def role_problem(task: DrcikTask) -> str | None:
    """Why ``task`` cannot be given a role condition (None: it marks every evidence item's role)."""
    if task.marks_roles or not task.evidence:
        return None
    first = next(i for i, e in enumerate(task.evidence) if e.role is None)
    return (f"task {task.benchmark_id}: annotations.gt_evidence[{first}].role is not given: the task does not mark "
            "its evidence retrospective or prospective (Appendix K.2), so the conditions retrospective-only and "
            "prospective-only cannot be built")


def _role_only(role: str):
    def build(task, _dr):
        problem = role_problem(task)
        if problem:
            raise ValueError(problem)
        if not task.evidence:
            return ContextText(None, LABELS_HIDDEN if not task.labels_public else EMPTY, 0)
        items = [e.text for e in task.evidence if e.role == role]
        return ContextText(_bullets(items) if items else None, OK if items else EMPTY, len(items))
    return build


def carried_text(task: DrcikTask, condition: str) -> str | None:
    """The text of ``original-context`` / ``rewritten-context`` the task carries (None: it carries none).
    The original context is the CAF task's (``background``, ``scenario``, ``constraints``, one paragraph
    each, as the generation pipeline reads it), the rewritten one the step-3 rewrite (Section 4.1)."""
    generation = task.metadata.get("generation")
    value = generation.get(UNAVAILABLE[condition][0].split(".", 1)[1]) if isinstance(generation, dict) else None
    if isinstance(value, dict):
        value = "\n\n".join(str(value[k]).strip() for k in ("background", "scenario", "constraints")
                             if isinstance(value.get(k), str) and value[k].strip())
    return value.strip() if isinstance(value, str) and value.strip() else None


def text_problem(task: DrcikTask, condition: str) -> str | None:
    """Why ``task`` cannot be given ``condition`` (one of :data:`UNAVAILABLE`; None: it carries the text)."""
    if carried_text(task, condition) is not None:
        return None
    field_name, why = UNAVAILABLE[condition]
    return (f"task {task.benchmark_id}: {field_name} is not given: {why}; tasks written by `harness dr-generate` "
            "carry it")


def _carried(condition: str):
    def build(task, _dr):
        text = carried_text(task, condition)
        if text is None:
            raise ValueError(text_problem(task, condition))
        return ContextText(text, OK, 1)
    return build


def _supporting_documents(task, _dr):
    docs = [d for d in task.documents if d.role == SUPPORTING]
    if not docs:
        return ContextText(None, EMPTY, 0)
    parts = [f"--- document {i} ---\n{d.content.strip()}" for i, d in enumerate(docs, 1)]
    return ContextText("\n\n".join(parts), OK, len(docs))


def _dr_evidence(task, dr):
    claims = _claims(dr)
    if not claims:
        return ContextText(None, EMPTY, 0)
    return ContextText(_bullets([c.claim for c in claims]), OK, len(claims))


def _dr_report(task, dr):
    report = dr.report if isinstance(dr, DrOutput) else None
    if not report or not report.strip():
        return ContextText(None, EMPTY, 0)
    return ContextText(report.strip(), OK, 1)


def verified(task: DrcikTask, dr, known_ids=None) -> list[EvidenceClaim]:
    """The verified DR items: unresolved ids (not in ``known_ids``, default the ``DrOutput``'s)
    dropped; then the items still citing at least one document, all supporting documents of ``task``."""
    known = known_ids if known_ids is not None else (dr.known_ids if isinstance(dr, DrOutput) else None)
    supporting = set(task.supporting_ids)
    kept = []
    for c in _claims(dr):
        ids = [d for d in c.cited_document_ids if known is None or d in known]
        if ids and all(d in supporting for d in ids):
            kept.append(c)
    return kept


def _verified_dr(task, dr):
    kept = verified(task, dr)
    if not kept:
        return ContextText(None, VERIFIED_EMPTY, 0)
    return ContextText(_bullets([c.claim for c in kept]), OK, len(kept))


CONDITIONS: dict[str, ContextCondition] = {
    c.name: c
    for c in (
        ContextCondition("no-context", "No Context: history only", _no_context),
        ContextCondition("background", "Background stand-in: the task's target description "
                         "(the release omits the original background)", _background, reproduces_paper=False),
        ContextCondition("supporting-evidence", "Supporting Evidence: the ground-truth evidence items",
                         _supporting_evidence),
        ContextCondition("retrospective-only", "Retrospective only: the ground-truth evidence items that explain "
                         "the observed history (Appendix K.2)", _role_only(RETROSPECTIVE)),
        ContextCondition("prospective-only", "Prospective only: the ground-truth evidence items that describe the "
                         "forecast window (Appendix K.2)", _role_only(PROSPECTIVE)),
        ContextCondition("original-context", "Original Context: the CAF task's own context (tasks written by "
                         "dr-generate)", _carried("original-context")),
        ContextCondition("rewritten-context", "Rewritten Context: the step-3 rewrite of the original context "
                         "(tasks written by dr-generate)", _carried("rewritten-context")),
        ContextCondition("supporting-documents", "Supp. docs: raw text of the supporting documents",
                         _supporting_documents),
        ContextCondition("dr-evidence", "DR-synthesized Evidence: every item of the DR agent's evidence",
                         _dr_evidence, needs_dr=True),
        ContextCondition("dr-report", "DR report: the DR agent's full research report", _dr_report,
                         needs_dr=True),
        ContextCondition("verified-dr", "Verified DR: DR items citing only supporting documents",
                         _verified_dr, needs_dr=True),
    )
}
#: The DR conditions (those reading a DR agent's output), in table order: the columns of Table 2 given per DR agent.
DR_CONDITIONS = tuple(name for name, c in CONDITIONS.items() if c.needs_dr)


def get(name: str) -> ContextCondition:
    """The condition named ``name``; ValueError naming the known ones (or why it is unavailable)."""
    try:
        return CONDITIONS[name]
    except KeyError:
        raise ValueError(f"unknown context condition {name!r} (known: {', '.join(CONDITIONS)})") from None


def context_used(condition: ContextCondition, uses_context: bool) -> bool:
    """Whether the forecaster actually read the condition's text (False for statistical ones)."""
    return uses_context and condition.name != "no-context"


def parse_dr_evidence(data: object, file: str = "<memory>") -> list[EvidenceClaim]:
    """Validate a DR agent's evidence (see module docstring); ConfigError naming file and field."""
    items = data.get("evidence") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ConfigError(file, ["<root>: expected a list of evidence items or {\"evidence\": [...]}"])
    out = []
    for i, item in enumerate(items):
        where = f"evidence[{i}]"
        if not isinstance(item, dict):
            raise ConfigError(file, [f"{where}: expected an object, got {type(item).__name__}"])
        claim = item.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            raise ConfigError(file, [f"{where}.claim: expected a non-empty string"])
        cited = item.get("cited_document_ids", [])
        if not isinstance(cited, list) or not all(isinstance(c, str) for c in cited):
            raise ConfigError(file, [f"{where}.cited_document_ids: expected a list of document ids"])
        out.append(EvidenceClaim(claim.strip(), tuple(cited)))
    return out


def load_dr_evidence(path: Path | str) -> list[EvidenceClaim]:
    """Read a DR agent's ``evidence.json``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(path, [f"line {exc.lineno}: invalid JSON: {exc.msg}"]) from None
    return parse_dr_evidence(data, str(path))

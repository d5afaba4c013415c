"""What resuming a run directory keeps: the ``resume`` event of :func:`harness.run.execute`.

The rule that keeps or runs again one episode is :func:`harness.store.keeps`; here the episodes of a plan
are counted by it, and the kept rows' code versions compared with the code about to run
(:func:`harness.provenance.code_changes`: a difference is reported, nothing is run again for it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.provenance import code_changes, code_columns
from harness.store import RunStore, keeps, kept_row

if TYPE_CHECKING:
    from harness.episode import EpisodePlan


def resume_summary(plans: list[EpisodePlan], store: RunStore, retry_failed: bool = False) -> dict[str, Any]:
    """What resuming ``store`` with ``plans`` keeps (the ``resume`` event's data): ``finished``, the episodes
    whose rows are kept (:func:`harness.store.keeps`); ``failed``, how many of them have status ``failed``;
    ``retried``, the failed episodes run again (``retry_failed``); ``stale``, the kept rows that code other
    than the code about to run computed, and ``changes``, what differs
    (:func:`harness.provenance.code_changes`; nothing is run again for it)."""
    kept, retried, now = [], 0, {}
    for plan in plans:
        row = kept_row(store.episode(plan.key).row)  # what a resume keeps without retry_failed
        if row is None:
            continue
        if not keeps(row, retry_failed):
            retried += 1
            continue
        which = (id(plan.template), plan.in_harness)
        if which not in now:
            now[which] = code_columns(plan.template, [] if plan.in_harness else plan.extractors)
        kept.append((row, now[which]))
    stale, changes = code_changes(kept)
    return {"finished": len(kept), "failed": sum(row.get("status") == "failed" for row, _ in kept),
            "retried": retried, "stale": stale, "changes": changes}

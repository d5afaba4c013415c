"""Release checks of ``harness dr-audit`` (no model call): what a generation must not export.

* **repair queue** (Dr-CiK Appendix D.2: failures are "flagged for human repair"): the tasks
  ``harness dr-generate`` held back (``generation/repair_queue.json``), and the exported tasks marked
  ``generation.flagged_for_repair`` (exported with ``--include-flagged``);
* **anonymisation** (Section 4.1 Phase 1): every real name of Phase 1 found in the exported release
  (:func:`..generation.anonymity.leaks`: task files, documents, manifest, file names);
* **injection text** (flagged, never rewritten: docs/benchmarks/drcik-own-data.md): a document holding text addressed to a
  model (:data:`..generation.caf.INJECTION`), which research agents will read;
* **evidence roles** (Appendix K.2, behind Tables 16-17): a ground-truth evidence item whose role its own
  dates contradict (:func:`..generation.checks.role_problems`: retrospective but dated inside the forecast
  window, or prospective but dated before it).

:func:`audit` returns the findings and ``harness dr-audit`` writes them to ``generation/qc/release.json``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from tsagent_plugins.tasks.drcik.generation import anonymity
from tsagent_plugins.tasks.drcik.generation.caf import INJECTION
from tsagent_plugins.tasks.drcik.generation.checks import role_problems
from tsagent_plugins.tasks.drcik.generation.output import repair_queue
from tsagent_plugins.tasks.drcik.quality.common import task_files


def audit(gen_dir: Path) -> dict[str, Any]:
    """``{"held_back": [task ids], "exported_flagged": [...], "leaks": [{task, where, name}],
    "roles": [{task, problem}], "injections": [{task, document_id, text}]}`` of the generation ``gen_dir``."""
    gen_dir = Path(gen_dir)
    roles, flagged, injections = [], [], []
    for _, raw in task_files(gen_dir):
        tid = raw["benchmark_id"]
        for d in raw.get("documents") or []:
            m = INJECTION.search(d.get("content") or "")
            if m:
                injections.append({"task": tid, "document_id": d.get("document_id"), "text": m.group(0)})
        if (raw.get("generation") or {}).get("flagged_for_repair"):
            flagged.append(tid)
        first_future = datetime.strptime(raw["series"]["future_timestamps"][0], "%Y-%m-%d %H:%M:%S")
        for item in (raw.get("annotations") or {}).get("gt_evidence") or []:
            roles += [{"task": tid, "problem": p}
                      for p in role_problems(str(item["id"]), item["evidence"], item.get("role", ""), first_future)]
    return {"held_back": [t["task"] for t in repair_queue(gen_dir)["tasks"]], "exported_flagged": flagged,
            "leaks": anonymity.leaks(gen_dir), "roles": roles, "injections": injections}


def summary_line(found: dict[str, Any]) -> str:
    return (f"release: {len(found['held_back'])} task(s) held back in the repair queue, "
            f"{len(found['exported_flagged'])} exported flagged (--include-flagged); "
            f"{len(found['leaks'])} real-name leak(s); {len(found['roles'])} evidence role(s) contradicting "
            f"their dates; {len(found['injections'])} document(s) with text addressed to a model")

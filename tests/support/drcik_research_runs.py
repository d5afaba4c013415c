"""Research run folders as ``harness run`` writes them (template drcik, episode_kind research), built through the
real materialise/score code with hand-written agent outputs (release ids mapped to the episode's ids)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE, materialize_research, score_research

GHOST = "doc_000000000000"          # an id no episode resolves


def write_episode(run: Path, agent: str, tasks, benchmark_id: str, items: list[tuple[str, list[str]]],
                  report: str | None = "# Report\n") -> Path:
    """One episode: ``items`` = (claim, release ids or GHOST); ids are written as the agent sees them."""
    folder = run / "episodes" / f"{agent}-{benchmark_id}"
    ws, key_dir = folder / "workspace", folder / "key"
    materialize_research(tasks, benchmark_id, ws, key_dir, salt=f"{agent}-{benchmark_id}")
    key = json.loads((key_dir / KEY_FILE).read_text())
    visible = {rid: vid for vid, rid in key["ids"].items()}
    evidence = [{"claim": claim, "cited_document_ids": [visible.get(r, r) for r in ids]} for claim, ids in items]
    (ws / "evidence.json").write_text(json.dumps(evidence))
    if report is not None:
        (ws / "report.md").write_text(report)
    score = score_research(ws, key_dir, {"method": agent})
    shutil.rmtree(ws / "corpus")  # as a run leaves it: the corpus kept by reference (harness.inputs)
    (folder / "score.json").write_text(json.dumps({"metrics": score.metrics, "details": score.details,
                                                   "warnings": score.warnings}))
    (folder / "row.json").write_text(json.dumps({"agent": "retrieval", "profile": agent, "episode": benchmark_id, "run_id": run.name,
                                                 "template": "drcik", "episode_kind": "research", "benchmark_id": benchmark_id,
                                                 **score.metrics}))
    return folder

"""Corpus A of Dr-CiK Appendix D.1 (Table 10): the raw CAF contexts before Dr-CiK augmentation.

The ablation runs the same agents over two corpora: (A) the raw task-variant contexts of the input (the paper's
355 CiK contexts) and (B) the generated Dr-CiK corpus.  :func:`export` writes corpus A beside a generation, in
the release layout the ``drcik`` template reads (``--set tasks=GEN_DIR/corpus_a``)::

    GEN_DIR/corpus_a/benchmark_manifest.json
    GEN_DIR/corpus_a/tasks/<caf task id>.json     the raw task: its own series, one document (its context)
    GEN_DIR/corpus_a/documents/raw_<n>.md

Every input CAF task (every variant, target or not) becomes one task with one supporting document, its raw
context (background, scenario, constraints); the pooled corpus of the folder is thus the raw contexts.  A task
that is also a generated target keeps the generated task's id, ``origin`` and ``annotations.gt_evidence`` (so
evidence recall is comparable across corpora); the others get their context as the single evidence item.
Series and contexts are the raw ones (no window shift, no anonymisation): corpus A is what a DR environment
built directly from the source would be.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tsagent_plugins.tasks.drcik.generation import caf
from tsagent_plugins.tasks.drcik.generation.output import SCHEMA_VERSION, write_json

FOLDER = "corpus_a"


def export(gen_dir: Path, tasks: list[caf.CafTask]) -> dict[str, Any]:
    """Write ``gen_dir/corpus_a/`` from the input CAF ``tasks`` (module docstring); returns its manifest."""
    gen_dir, out = Path(gen_dir), Path(gen_dir) / FOLDER
    generated = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((gen_dir / "tasks").glob("*.json"))}
    entries = []
    for n, task in enumerate(sorted(tasks, key=lambda t: t.task_id), 1):
        doc_id = f"raw_{n}"
        content = task.context.text()
        (out / "documents").mkdir(parents=True, exist_ok=True)
        (out / "documents" / f"{doc_id}.md").write_text(content.rstrip() + "\n", encoding="utf-8")
        target = generated.get(task.task_id)
        evidence = (target or {}).get("annotations", {}).get("gt_evidence") or [{"id": "E1", "evidence": content}]
        record = {"benchmark_id": task.task_id, "split": (target or {}).get("split", "open"),
                  "origin": (target or {}).get("origin", task.origin), "corpus": "A",
                  "task_metadata": {"frequency": task.frequency, "prediction_length": task.prediction_length,
                                    "seasonal_period": task.seasonal_period,
                                    "target_description": task.target_description},
                  "series": task.series.model_dump(mode="json"),
                  "documents": [{"document_id": doc_id, "content": content, "role": "supporting", "subtype": None,
                                 "path": f"documents/{doc_id}.md"}],
                  "annotations": {"gt_evidence": evidence}, "labels_public": True}
        write_json(out / "tasks" / f"{task.task_id}.json", record)
        entries.append({"benchmark_id": task.task_id, "path": f"tasks/{task.task_id}.json",
                        "prediction_length": task.prediction_length, "frequency": task.frequency,
                        "document_count": 1, "origin": record["origin"], "labels_public": True,
                        "generated_target": target is not None})
    manifest = {"dataset_name": "Dr-CiK corpus A (raw contexts)", "schema_version": SCHEMA_VERSION,
                "note": "Raw CAF contexts before Dr-CiK augmentation (Dr-CiK Appendix D.1, Table 10).",
                "task_count": len(entries), "document_count": len(entries), "tasks": entries}
    write_json(out / "benchmark_manifest.json", manifest)
    return manifest

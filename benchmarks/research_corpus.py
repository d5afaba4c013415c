"""Cost of a research episode's corpus: writing the workspace and the BM25 retriever, at sample and release scale.

Usage: ``python benchmarks/research_corpus.py [--documents N] [--queries Q]``.

Prints, for the three sample tasks (115 documents) and for a synthetic pooled corpus
of ``N`` documents (default 10,342, the release's count; the sample's documents
repeated with a numbered sentence appended, so sizes and vocabulary stay realistic):
the time to materialize one research workspace (salted ids, padding, fixed
times), the corpus size on disk, the BM25 (bm25s) index time and the mean search
time of ``Q`` queries.  Needs the ``dr`` extra.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from tsagent_plugins.agents.research.tools import Bm25Retriever, Corpus
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.research.episodes import CORPUS_DIR, materialize_research


def scaled(tasks, n: int):
    """The sample tasks with their documents repeated (renamed, varied) until the pool has ``n``."""
    docs = [d for t in tasks for d in t.documents]
    extra = []
    k = 0
    while len(docs) + len(extra) < n:
        d = docs[k % len(docs)]
        extra.append(dataclasses.replace(d, document_id=f"{d.document_id}_x{k}",
                                         content=f"{d.content}\nRecord {k} of the archive."))
        k += 1
    first = dataclasses.replace(tasks[0], documents=list(tasks[0].documents) + extra)
    return [first, *tasks[1:]]


def measure(tasks, queries: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="research-bench-"))
    try:
        started = time.perf_counter()
        materialize_research(tasks, tasks[0].benchmark_id, root / "ws", root / "key")
        write_s = time.perf_counter() - started
        folder = root / "ws" / CORPUS_DIR
        size = sum(p.stat().st_size for p in folder.iterdir())
        raw = sum(len(d.content.encode()) for t in tasks for d in t.documents)
        corpus = Corpus(folder)
        started = time.perf_counter()
        retriever = Bm25Retriever(corpus)
        index_s = time.perf_counter() - started
        texts = [t.target_description for t in tasks] * (queries // len(tasks) + 1)
        started = time.perf_counter()
        for q in texts[:queries]:
            retriever.rank(q, 10)
        search_ms = 1000 * (time.perf_counter() - started) / queries
        return {"documents": len(corpus.ids), "write_s": write_s, "disk_mb": size / 1e6, "raw_mb": raw / 1e6,
                "index_s": index_s, "search_ms": search_ms}
    finally:
        shutil.rmtree(root, ignore_errors=True)


@click.command()
@click.option("--documents", default=10342, show_default=True, help="pooled corpus size of the scaled run")
@click.option("--queries", default=20, show_default=True)
def main(documents: int, queries: int) -> None:
    tasks = load_tasks()
    table = Table(title="research workspace and BM25 retriever")
    for col in ("corpus", "documents", "write (s)", "on disk (MB)", "unpadded (MB)", "BM25 index (s)",
                "search (ms)"):
        table.add_column(col)
    for name, pool in (("sample", tasks), ("scaled", scaled(tasks, documents))):
        m = measure(pool, queries)
        table.add_row(name, str(m["documents"]), f"{m['write_s']:.2f}", f"{m['disk_mb']:.1f}", f"{m['raw_mb']:.1f}",
                      f"{m['index_s']:.2f}", f"{m['search_ms']:.1f}")
    Console().print(table)


if __name__ == "__main__":
    main()

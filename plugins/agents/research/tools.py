"""The corpus tools every deep-research agent uses: list, read, search (paper Appendix G "Common
interface": agents differ only in how they search, read and synthesise).

Runs INSIDE the sandbox over the read-only corpus folder (``<workspace>/corpus``,
one ``<id>.md`` per document); never imported by the harness process.

Retrievers (``search``):

- ``embeddings`` — the paper's retrieval pass: documents and query are embedded
  through the model proxy (OpenAI-compatible ``POST /v1/embeddings``) and ranked by
  cosine similarity;
- ``bm25`` — bm25s (Lucene BM25, English stop words), fully offline.  A *deviation*
  from the paper: every search result made with it carries :data:`BM25_DEVIATION`.

Every call goes through :class:`Budget`: a call past ``max_tool_calls`` raises
:class:`CapReached` (the caller keeps what it has and records the reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

BM25_DEVIATION = "deviation: BM25 (bm25s) retrieval instead of the paper's embedding retrieval"
MAX_READ_CHARS = 20_000


class CapReached(Exception):
    """A profile cap (tool calls or tokens) was reached; ``str(exc)`` is the recorded reason."""


@dataclass
class Budget:
    """Caps of one episode: tool calls (list/read/search) and model tokens (prompt + completion)."""

    max_tool_calls: int | None = None
    max_tokens: int | None = None
    tool_calls: int = 0
    tokens: int = 0

    def tool(self, name: str) -> None:
        if self.max_tool_calls is not None and self.tool_calls >= self.max_tool_calls:
            raise CapReached(f"tool-call cap reached ({self.max_tool_calls}) before {name}")
        self.tool_calls += 1

    def add_tokens(self, n: int) -> None:
        self.tokens += int(n)

    def check_tokens(self, what: str) -> None:
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            raise CapReached(f"token cap reached ({self.tokens} >= {self.max_tokens}) before {what}")

    def tokens_left(self) -> int | None:
        return None if self.max_tokens is None else max(0, self.max_tokens - self.tokens)


@dataclass
class Hit:
    id: str
    score: float
    text: str


class Corpus:
    """The documents of ``folder`` (id = file name without ``.md``), sorted by id (ids are salted:
    the order carries nothing).  Trailing blank padding is stripped."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.ids = sorted(p.name[:-3] for p in self.folder.iterdir() if p.name.endswith(".md"))
        self._texts: dict[str, str] = {}

    def text(self, doc_id: str) -> str:
        if doc_id not in self._texts:
            raw = (self.folder / f"{doc_id}.md").read_text(encoding="utf-8", errors="replace")
            self._texts[doc_id] = raw.rstrip()
        return self._texts[doc_id]

    def texts(self) -> list[str]:
        return [self.text(i) for i in self.ids]


class Bm25Retriever:
    """bm25s over the corpus (offline)."""

    name = "bm25"
    label = BM25_DEVIATION

    def __init__(self, corpus: Corpus):
        import bm25s

        self._bm25s = bm25s
        self.corpus = corpus
        self.index = bm25s.BM25()
        self.index.index(bm25s.tokenize(corpus.texts(), stopwords="en", show_progress=False), show_progress=False)

    def rank(self, query: str, k: int) -> list[tuple[str, float]]:
        k = min(k, len(self.corpus.ids))
        tokens = self._bm25s.tokenize([query], stopwords="en", show_progress=False)
        if not tokens.vocab:  # a query of stop words only
            return []
        docs, scores = self.index.retrieve(tokens, k=k, show_progress=False)
        return [(self.corpus.ids[int(d)], float(s)) for d, s in zip(docs[0], scores[0])]


class EmbeddingRetriever:
    """Cosine similarity of proxy embeddings (``embed(texts) -> list of vectors``)."""

    name = "embeddings"
    label = None

    def __init__(self, corpus: Corpus, embed: Callable[[list[str]], list[list[float]]], batch: int = 64):
        self.corpus = corpus
        self.embed = embed
        vectors: list[list[float]] = []
        texts = corpus.texts()
        for start in range(0, len(texts), batch):
            vectors.extend(embed(texts[start:start + batch]))
        self.matrix = _normalise(np.asarray(vectors, dtype=float))

    def rank(self, query: str, k: int) -> list[tuple[str, float]]:
        q = _normalise(np.asarray(self.embed([query]), dtype=float))[0]
        scores = self.matrix @ q
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.corpus.ids[int(i)], float(scores[i])) for i in order]


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.where(norms == 0, 1.0, norms)


class CorpusTools:
    """``list_documents``, ``read_document``, ``search``: the one tool layer of every DR agent.

    ``log(name, arguments, result)`` is called after each tool call (for the trajectory).
    """

    def __init__(self, corpus: Corpus, retriever, budget: Budget | None = None,
                 log: Callable[[str, dict, str], None] | None = None):
        self.corpus = corpus
        self.retriever = retriever
        self.budget = budget or Budget()
        self.log = log or (lambda name, args, result: None)

    def list_documents(self) -> list[str]:
        self.budget.tool("list_documents")
        ids = list(self.corpus.ids)
        self.log("list_documents", {}, "\n".join(ids))
        return ids

    def read_document(self, doc_id: str) -> str | None:
        """The document's text (clipped to :data:`MAX_READ_CHARS`), or None for an unknown id."""
        self.budget.tool("read_document")
        key = str(doc_id).strip().rsplit("/", 1)[-1]
        key = key[:-3] if key.endswith(".md") else key
        text = self.corpus.text(key)[:MAX_READ_CHARS] if key in self.corpus.ids else None
        self.log("read_document", {"document_id": key}, text if text is not None else f"unknown document id {key!r}")
        return text

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top ``k`` documents for ``query`` (ids, scores, text)."""
        self.budget.tool("search")
        hits = [Hit(i, s, self.corpus.text(i)) for i, s in self.retriever.rank(query, k)]
        self.log("search", {"query": query, "k": k, "retriever": self.retriever.name}, format_hits(hits, self.retriever))
        return hits


def format_hits(hits: list[Hit], retriever, max_chars: int = 4000) -> str:
    """Search results as the model sees them: one ``[id] (score)`` header and text per hit;
    the retriever's deviation label first when it has one."""
    lines = [f"# {retriever.label}"] if getattr(retriever, "label", None) else []
    for hit in hits:
        lines.append(f"[{hit.id}] (score {hit.score:.4f})\n{hit.text[:max_chars]}")
    return "\n\n".join(lines) if lines else "no documents found"

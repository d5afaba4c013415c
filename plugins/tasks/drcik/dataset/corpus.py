"""The shared document corpus as agents see it (paper Section 4.1, Phase 1; Appendix G "Common interface").

Documents of all loaded tasks form one shared corpus.  In the release the
document ids and the file order leak the role (supporting documents come first
and have consecutive ids), so inside a sandbox every document gets a per-run
salted random identifier and the corpus is listed in shuffled order; nothing
visible carries the role or distractor subtype.  :meth:`SandboxCorpus.export_ids`
maps the identifiers an agent cites back to the release ids.
"""

from __future__ import annotations

import hashlib
import hmac
import random
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from tsagent_plugins.tasks.drcik.dataset.loader import Document, DrcikTask


class CorpusError(ValueError):
    """Conflicting documents (one id, two contents) or an unusable corpus."""


class Corpus:
    """All documents of ``tasks``, by release id (each document belongs to one task)."""

    def __init__(self, tasks: Iterable[DrcikTask]):
        self.documents: dict[str, Document] = {}
        for task in tasks:
            for doc in task.documents:
                old = self.documents.get(doc.document_id)
                if old is not None and old.content != doc.content:
                    raise CorpusError(f"document {doc.document_id!r} differs between tasks "
                                      f"{old.task_id!r} and {doc.task_id!r}")
                self.documents.setdefault(doc.document_id, doc)
        if not self.documents:
            raise CorpusError("the corpus is empty: the loaded tasks have no documents")

    def __len__(self) -> int:
        return len(self.documents)

    def for_sandbox(self, salt: str | None = None) -> "SandboxCorpus":
        """The agent-visible view.  ``salt``: per-run secret (default: fresh random);
        the same salt gives the same identifiers and order."""
        return SandboxCorpus(self, salt if salt is not None else secrets.token_hex(16))


@dataclass(frozen=True)
class VisibleDocument:
    """What an agent sees of one document: an opaque id and the text."""

    id: str
    content: str

    @property
    def filename(self) -> str:
        return f"{self.id}.md"


class SandboxCorpus:
    """Salted identifiers (``doc_`` + 12 hex digits of HMAC-SHA256(salt, release id))
    in an order shuffled by a generator seeded from the salt."""

    ID_HEX = 12

    def __init__(self, corpus: Corpus, salt: str):
        if not salt:
            raise CorpusError("the salt must be a non-empty string")
        self._to_release: dict[str, str] = {}
        self._to_visible: dict[str, str] = {}
        for release_id in corpus.documents:
            digest = hmac.new(salt.encode(), release_id.encode(), hashlib.sha256).hexdigest()
            visible = "doc_" + digest[: self.ID_HEX]
            if visible in self._to_release:  # 48-bit collision: astronomically unlikely
                raise CorpusError(f"salted id collision for {release_id!r}; use another salt")
            self._to_release[visible] = release_id
            self._to_visible[release_id] = visible
        order = list(corpus.documents)
        random.Random(hashlib.sha256(b"order:" + salt.encode()).digest()).shuffle(order)
        self.visible: list[VisibleDocument] = [
            VisibleDocument(self._to_visible[r], corpus.documents[r].content) for r in order
        ]

    def visible_id(self, release_id: str) -> str:
        """The sandbox id of a release document id (KeyError if not in the corpus)."""
        return self._to_visible[release_id]

    def export_ids(self, visible_ids: Iterable[str]) -> list[str | None]:
        """Map cited sandbox ids back to release ids; an unknown (hallucinated) id gives None.

        Accepts ids with or without the ``.md`` suffix and surrounding whitespace.
        """
        out: list[str | None] = []
        for vid in visible_ids:
            key = str(vid).strip()
            key = key[:-3] if key.endswith(".md") else key
            out.append(self._to_release.get(key))
        return out

    def write(self, folder: Path) -> list[Path]:
        """Write one ``<id>.md`` file per document into ``folder`` (created), in the shuffled order."""
        folder.mkdir(parents=True, exist_ok=True)
        paths = []
        for doc in self.visible:
            path = folder / doc.filename
            path.write_text(doc.content, encoding="utf-8")
            paths.append(path)
        return paths

"""Research episodes: one Dr-CiK task x one deep-research (DR) agent (paper Section 5; Appendix G
"Common interface" and "Deep-research agents").

:func:`materialize_research` writes the agent's workspace and the hidden key;
:func:`score_research` reads the agent's two outputs back, maps its citations
to release ids and writes the release's ``deep_research.jsonl`` row and
``metadata.json`` into the key folder (see :mod:`.outputs`).  Both
have the :class:`harness.contracts.TaskTemplate` method shapes
(``materialize(params, episode, workspace, key_dir)`` / ``score(...)``) with
the loaded tasks passed in, so a template only adds loading.

Workspace (all the agent sees; nothing names a role, subtype or owning task)::

    task.md          the prompt below
    history.csv      timestamp,value (the task's history)
    corpus/<id>.md   every document of every loaded task (pooled, as in the paper)
    (the agent writes report.md and evidence.json)

Choices the paper leaves open, each with its reason:

- The prompt is the Direct Prompt of ``llm-dp`` (:func:`tsagent_plugins.forecasters.llm.build_prompt`)
  with the task's ``target_description`` in its context block (the "forecast task
  instructions" must say what the series is, or no search is possible), followed by the
  research instruction verbatim and the output format.
- One fresh salt per episode (an episode is one agent run on one task): document ids
  are ``doc_`` + 12 hex digits of HMAC-SHA256(salt, release id), so ids seen in one
  episode mean nothing in another and a script cannot hard-code them.
- Corpus files are written in a shuffled order, all padded with trailing blanks to
  one common byte size (supporting documents are shorter on average in the release,
  so sizes would leak roles), all given one fixed modification time, and made
  read-only (files 0444; the folder stays 0755 so that a run folder can be removed
  and an episode retried without root).  Agents should strip trailing whitespace.
  Inode numbers, change times and directory order follow the salted shuffle.
  Scoring never reads the corpus back (the key holds the id mapping), so an agent
  that changes its copy only changes what it reads itself.
- The corpus is kept by reference (:mod:`harness.inputs`; :func:`corpus_references`, ``keep_corpus: false``,
  the default): after the episode every document file the agent left unchanged is dropped from the run
  folder and rebuilt on demand from the loaded tasks, its release id, the episode's salt and the common
  size; a document the agent edited stays as it left it.  The references carry the corpus digest
  (:func:`corpus_digest`: sha256 over every document's release id and text), so a rebuild from a task
  folder that changed since the run says so before any document is compared.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import weakref
from pathlib import Path
from typing import Iterable

from harness import ConfigError, EpisodeScore, Materialized
from tsagent_plugins.tasks.drcik.dataset.corpus import Corpus
from tsagent_plugins.tasks.drcik.dataset.loader import DrcikTask

#: The paper's research instruction, verbatim (Appendix G "Deep-research agents").
RESEARCH_INSTRUCTION = ("Search the local environment and gather the most relevant documents and evidence "
                        "snippets that would help forecast the target time-series values, while avoiding "
                        "irrelevant or distracting information.")
CORPUS_DIR = "corpus"
REPORT_FILE = "report.md"
EVIDENCE_FILE = "evidence.json"
PROMPT_FILE = "task.md"
HISTORY_FILE = "history.csv"
KEY_FILE = "research_key.json"
#: One modification time for every corpus file (2000-01-01 00:00:00 UTC).
FIXED_MTIME = 946684800

OUTPUT_INSTRUCTIONS = f"""
The documents are the files in ./{CORPUS_DIR}/ (one document per file; the file name without
`.md` is the document id).  The history above is also in ./{HISTORY_FILE}.

Write two files in the current directory:
1. `{REPORT_FILE}`: a markdown research report of what you found.
2. `{EVIDENCE_FILE}`: a JSON list of evidence items, most important first, each
   {{"claim": "<one synthesized evidence statement>", "cited_document_ids": ["<document id>", ...]}}.
Do not forecast the values yourself; gather the evidence a forecaster needs.
"""


def research_prompt(task: DrcikTask) -> str:
    """The agent's prompt: the Direct Prompt (context block = target description), the research
    instruction verbatim, then the corpus location and output format."""
    from tsagent_plugins.forecasters.llm import build_prompt

    dp = build_prompt(task.history, task.future_index, task.target_description)
    return f"{dp}\n{RESEARCH_INSTRUCTION}\n{OUTPUT_INSTRUCTIONS}"


def find_task(tasks: Iterable[DrcikTask], benchmark_id: str) -> DrcikTask:
    for task in tasks:
        if task.benchmark_id == benchmark_id:
            return task
    raise KeyError(f"no Dr-CiK task {benchmark_id!r} among the loaded tasks")


def padded(content: str, size: int) -> bytes:
    """A document's bytes as the sandbox holds them: its text without trailing blanks, padded with blanks to
    ``size`` bytes, the last a newline.  ValueError when the text does not fit."""
    data = content.rstrip().encode("utf-8")
    if len(data) + 1 > size:
        raise ValueError(f"a document of {len(data)} bytes does not fit the corpus's file size {size}")
    return data + b" " * (size - 1 - len(data)) + b"\n"


def write_corpus(corpus: Corpus, folder: Path, salt: str) -> dict[str, str]:
    """Write the salted, shuffled, size-padded, time-fixed, read-only corpus; return visible id -> release id."""
    view = corpus.for_sandbox(salt)
    folder.mkdir(parents=True, exist_ok=True)
    size = max(len(doc.content.rstrip().encode("utf-8")) for doc in view.visible) + 1
    mapping: dict[str, str] = {}
    for doc in view.visible:
        path = folder / doc.filename
        path.write_bytes(padded(doc.content, size))
        os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        path.chmod(0o444)
        mapping[doc.id] = view.export_ids([doc.id])[0]
    os.utime(folder, (FIXED_MTIME, FIXED_MTIME))
    return mapping


_digests: "weakref.WeakKeyDictionary[Corpus, str]" = weakref.WeakKeyDictionary()


def corpus_digest(corpus: Corpus) -> str:
    """sha256 (hex) over every document's release id and text, in release-id order: which corpus a run saw
    (computed once per corpus object: rebuilding each of its documents checks it)."""
    if corpus not in _digests:
        digest = hashlib.sha256()
        for release_id in sorted(corpus.documents):
            for part in (release_id, corpus.documents[release_id].content):
                data = part.encode("utf-8")
                digest.update(len(data).to_bytes(8, "big") + data)
        _digests[corpus] = digest.hexdigest()
    return _digests[corpus]


def corpus_references(root: Path, corpus: Corpus, source: str) -> dict[str, dict]:
    """The references (:meth:`harness.AgentTaskTemplate.input_references`) of the corpus files of the research
    episode in folder ``root`` (its ``workspace/corpus/`` and ``key/research_key.json``): per file the release
    id, the episode's salt, the common file size and the corpus digest; ``source`` names the task folder."""
    key = read_key(Path(root) / "key")
    folder = Path(root) / "workspace" / CORPUS_DIR
    if key is None or not folder.is_dir():
        return {}
    files = sorted(p for p in folder.iterdir() if p.suffix == ".md" and p.is_file() and not p.is_symlink())
    shared = {"kind": "corpus-document", "salt": key["salt"], "corpus": corpus_digest(corpus),
              "size": files[0].stat().st_size if files else 0,
              "source": f"{source} ({len(corpus)} documents)"}
    return {f"workspace/{CORPUS_DIR}/{p.name}": {**shared, "document": key["ids"][p.stem]}
            for p in files if p.stem in key["ids"]}


def rebuild_document(corpus: Corpus, reference: dict, dest: Path) -> None:
    """Write the corpus file ``reference`` (from :func:`corpus_references`) names at ``dest``.  ValueError when
    ``corpus`` is not the one the episode saw (another digest) or lacks the document."""
    if corpus_digest(corpus) != reference["corpus"]:
        raise ValueError(f"the loaded corpus (digest {corpus_digest(corpus)[:12]}) is not the one the episode saw "
                         f"(digest {reference['corpus'][:12]}): the task folder changed since the run")
    document = corpus.documents.get(reference["document"])
    if document is None:
        raise ValueError(f"document {reference['document']!r} is not in the loaded corpus")
    dest.write_bytes(padded(document.content, int(reference["size"])))


def materialize_research(tasks: list[DrcikTask], benchmark_id: str, workspace: Path, key_dir: Path,
                         salt: str | None = None) -> Materialized:
    """Write the research workspace for ``benchmark_id`` and the key (``key_dir/research_key.json``).

    ``tasks``: every loaded task (their documents form the pooled corpus).
    ``salt``: per-episode secret (default: fresh random).  Raises KeyError for an unknown task.
    """
    task = find_task(tasks, benchmark_id)
    corpus = Corpus(tasks)
    salt = salt if salt is not None else secrets.token_hex(16)
    workspace.mkdir(parents=True, exist_ok=True)
    key_dir.mkdir(parents=True, exist_ok=True)
    prompt = research_prompt(task)
    (workspace / PROMPT_FILE).write_text(prompt, encoding="utf-8")
    lines = ["timestamp,value"] + [f"{t.strftime('%Y-%m-%d %H:%M:%S')},{float(v)!r}" for t, v in task.history.items()]
    (workspace / HISTORY_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    mapping = write_corpus(corpus, workspace / CORPUS_DIR, salt)
    documents = {rid: {"task": d.task_id, "role": d.role, "subtype": d.subtype}
                 for rid, d in corpus.documents.items()}
    key = {"benchmark_id": benchmark_id, "salt": salt, "ids": mapping, "documents": documents,
           "supporting": [d.document_id for d in task.documents if d.role == "supporting"],
           "gt_evidence": [e.text for e in task.evidence], "gt_evidence_ids": [e.id for e in task.evidence],
           "gt_evidence_roles": [e.role for e in task.evidence], "difficulty": task.difficulty or None,
           "reasoning_hops": task.metadata.get("reasoning_hops"), "origin": task.metadata.get("origin")}
    (key_dir / KEY_FILE).write_text(json.dumps(key, indent=1), encoding="utf-8")
    return Materialized(prompt=prompt, task_info={"kind": "research", "corpus_dir": CORPUS_DIR,
                                                  "report": REPORT_FILE, "evidence": EVIDENCE_FILE,
                                                  "prompt_file": PROMPT_FILE})


def score_research(workspace: Path, key_dir: Path, metadata: dict | None = None) -> EpisodeScore:
    """Read ``report.md`` and ``evidence.json`` (bounded, never raising), resolve citations, write the
    ``deep_research.jsonl`` row and ``metadata.json`` into ``key_dir``; the metrics describe the outputs.

    Metrics: ``evidence_items``, ``cited_documents`` (resolved, de-duplicated, the report's included:
    Q_t), ``report_cited_documents`` (resolved ids the report text cites), ``hallucinated_ids``
    (distinct unresolved citations, dropped) and ``hallucinated_id_occurrences``, ``cross_task_citations`` and
    ``distractor_citations`` (resolved ids of another task's / of distractor documents),
    ``report_chars``, ``evidence_ok`` / ``report_ok`` and ``output_reason`` (None when both are fine).
    """
    from tsagent_plugins.tasks.drcik.research import outputs as out

    key = read_key(key_dir)
    if key is None:
        raise ConfigError(Path(key_dir) / KEY_FILE, ["research key: missing (written by materialize_research)"])
    report, report_reasons = out.read_report(workspace / REPORT_FILE)
    items, evidence_reasons = out.read_evidence(workspace / EVIDENCE_FILE)
    resolved = out.resolve(items, key["ids"], key["documents"], key["benchmark_id"], report=report)
    row = out.deep_research_row(key["benchmark_id"], resolved)
    meta = out.make_metadata(**(metadata or {}))
    problems = out.validate_deep_research_row(row, known_documents=key["documents"]) + out.validate_metadata(meta)
    if problems:  # our own export broke the release's rules: a bug, shown loudly but never raised
        evidence_reasons.append("export invalid: " + "; ".join(problems))
    out.write_export(key_dir, [row], meta)
    reasons = report_reasons + evidence_reasons
    metrics = {
        "evidence_items": len(row["evidence"]),
        "cited_documents": len(row["cited_document_ids"]),
        "hallucinated_ids": resolved.hallucinated,
        "hallucinated_id_occurrences": resolved.hallucinated_occurrences,
        "report_cited_documents": len(resolved.report_cited),
        "cross_task_citations": resolved.cross_task,
        "distractor_citations": resolved.distractors,
        "report_chars": len(report or ""),
        "report_ok": report is not None and not report_reasons,
        "evidence_ok": not evidence_reasons,
        "output_reason": "; ".join(reasons)[:500] or None,
    }
    details = [{"claim": it.claim[:200], "cited": it.cited, "resolved": it.resolved, "dropped": it.dropped,
                "position": it.position} for it in resolved.items]
    return EpisodeScore(metrics=metrics, details=details, warnings=reasons)


def read_key(key_dir: Path | str) -> dict | None:
    """An episode's research key (``key_dir/research_key.json``, written by :func:`materialize_research`: the
    pool's documents with task/role/subtype, the sandbox id mapping, the task's ground truth); None when the
    folder has none.  ConfigError naming the file when it is unreadable, not JSON or not an object: the rule
    of the harness's own readers (:func:`harness.read_row`, :func:`harness.read_score`)."""
    path = Path(key_dir) / KEY_FILE
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(path, [f"research key: cannot read ({exc.strerror or exc})"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(path, [f"research key: line {exc.lineno}: invalid JSON: {exc.msg}"]) from None
    if not isinstance(data, dict):
        raise ConfigError(path, ["research key: not a JSON object"])
    return data


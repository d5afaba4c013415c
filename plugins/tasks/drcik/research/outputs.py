"""A DR agent's two outputs read back, and the release's submission files written (Appendix G
"Common interface"; the public release's ``deep_research.jsonl`` and ``metadata.json``).

Readers are bounded and never raise: an agent's output can never abort a run.
Every problem becomes a reason string; what can be kept is kept.

``evidence.json`` rules (ours, the release gives none for the agent side):

- at most :data:`MAX_BYTES` bytes, UTF-8, JSON nesting at most :data:`MAX_DEPTH`;
- a list of items, or an object whose ``evidence`` field is that list (kept, with a reason);
- an item is an object with a non-empty string ``claim`` (clipped to
  :data:`MAX_CLAIM_CHARS`) and ``cited_document_ids``, a list of strings (a single
  string is taken as a one-id list); other items are dropped, each with a reason;
- at most :data:`MAX_ITEMS` items and :data:`MAX_IDS` ids per item (the rest dropped).

Citations are mapped back with the episode's key: an id that is not in the corpus is
*hallucinated*: dropped from the item (the item stays) and counted, once per distinct id
(``Resolved.hallucinated``, the headline) and once per occurrence (``hallucinated_occurrences``).
Each kept item remembers its ``position`` in the agent's list (dropped malformed items included),
so K_t counts positions of the agent's own list.  Ids cited in the report text
(:func:`report_citations`: corpus-shaped ids, ``doc_`` + 12 hex digits) are part of Q_t too
(Appendix H.1: "the set of all resolved documents cited by the DR report"); the release row's
``cited_document_ids`` lists them after the evidence items' ids.

Release rules checked by :func:`validate_deep_research_row` (submission format of the
release: one line ``{benchmark_id, cited_document_ids, evidence}`` per task):
exactly those three keys; ``benchmark_id`` a non-empty string; ``cited_document_ids`` a
list of distinct non-empty strings (release ids, in the corpus when it is given);
``evidence`` a list of strings.  :func:`validate_metadata`: the template's fields
(``method``, ``organization``, ``type``, ``base_model``, ``reproduction``, ``contact``,
``notes``), all strings, ``method``/``type``/``base_model`` non-empty.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_BYTES = 1_000_000
MAX_REPORT_BYTES = 2_000_000
MAX_DEPTH = 32
MAX_ITEMS = 500
MAX_IDS = 100
MAX_CLAIM_CHARS = 4000

DEEP_RESEARCH_FILE = "deep_research.jsonl"
METADATA_FILE = "metadata.json"
ROW_KEYS = ("benchmark_id", "cited_document_ids", "evidence")
METADATA_FIELDS = ("method", "organization", "type", "base_model", "reproduction", "contact", "notes")
METADATA_REQUIRED = ("method", "type", "base_model")


@dataclass
class Item:
    """One evidence item as written by the agent: the claim and the ids it cites (strings)."""

    claim: str
    cited: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    position: int | None = None


@dataclass
class Resolved:
    items: list[Item]
    hallucinated: int = 0
    cross_task: int = 0
    distractors: int = 0
    hallucinated_occurrences: int = 0
    report_cited: list[str] = field(default_factory=list)
    report_dropped: list[str] = field(default_factory=list)


def _read_bounded(path: Path, limit: int) -> tuple[str | None, str | None]:
    """(text, reason): the file's text when it exists, is a regular file, small enough and UTF-8."""
    try:
        if not path.is_file() or path.is_symlink():
            return None, f"{path.name}: missing" if not path.exists() else f"{path.name}: not a regular file"
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        return None, f"{path.name}: unreadable ({type(exc).__name__})"
    if len(data) > limit:
        return None, f"{path.name}: larger than {limit} bytes"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, f"{path.name}: not UTF-8"


def read_report(path: Path) -> tuple[str | None, list[str]]:
    """``report.md``: (text or None, reasons).  An empty report is kept with a reason."""
    text, reason = _read_bounded(Path(path), MAX_REPORT_BYTES)
    if text is None:
        return None, [reason or "report.md: unreadable"]
    return text, ([] if text.strip() else ["report.md: empty"])


def _depth(node: Any, limit: int) -> int:
    stack, deepest = [(node, 1)], 1
    while stack:
        cur, d = stack.pop()
        deepest = max(deepest, d)
        if deepest > limit:
            return deepest
        if isinstance(cur, dict):
            stack.extend((v, d + 1) for v in cur.values())
        elif isinstance(cur, list):
            stack.extend((v, d + 1) for v in cur)
    return deepest


def read_evidence(path: Path) -> tuple[list[Item], list[str]]:
    """``evidence.json`` -> (items in the agent's order, reasons).  Never raises."""
    name = Path(path).name
    text, reason = _read_bounded(Path(path), MAX_BYTES)
    if text is None:
        return [], [reason or f"{name}: unreadable"]
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return [], [f"{name}: not valid JSON ({type(exc).__name__})"]
    if _depth(data, MAX_DEPTH) > MAX_DEPTH:
        return [], [f"{name}: nested deeper than {MAX_DEPTH} levels"]
    reasons: list[str] = []
    if isinstance(data, dict) and isinstance(data.get("evidence"), list):
        reasons.append(f"{name}: an object with an 'evidence' list (a list was expected); its list was read")
        data = data["evidence"]
    if not isinstance(data, list):
        return [], reasons + [f"{name}: expected a list of items, got {type(data).__name__}"]
    if not data:
        reasons.append(f"{name}: empty evidence list")
    if len(data) > MAX_ITEMS:
        reasons.append(f"{name}: {len(data)} items; only the first {MAX_ITEMS} were read")
        data = data[:MAX_ITEMS]
    items: list[Item] = []
    for index, raw in enumerate(data):
        where = f"{name}[{index}]"
        if not isinstance(raw, dict):
            reasons.append(f"{where}: not an object, dropped")
            continue
        claim = raw.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            reasons.append(f"{where}.claim: missing or not a non-empty string, item dropped")
            continue
        if len(claim) > MAX_CLAIM_CHARS:
            reasons.append(f"{where}.claim: clipped to {MAX_CLAIM_CHARS} characters")
            claim = claim[:MAX_CLAIM_CHARS]
        ids = raw.get("cited_document_ids", [])
        if isinstance(ids, str):
            ids = [ids]
        if not isinstance(ids, list):
            reasons.append(f"{where}.cited_document_ids: not a list, no citations kept")
            ids = []
        if len(ids) > MAX_IDS:
            reasons.append(f"{where}.cited_document_ids: {len(ids)} ids; only the first {MAX_IDS} kept")
            ids = ids[:MAX_IDS]
        cited = [i for i in ids if isinstance(i, str)]
        if len(cited) != len(ids):
            reasons.append(f"{where}.cited_document_ids: {len(ids) - len(cited)} non-string id(s) dropped")
        items.append(Item(claim.strip(), [i[:200] for i in cited], position=index))
    return items, reasons


def resolve_id(raw: str, ids: dict[str, str]) -> str | None:
    """The release id of one cited id (``ids``: visible -> release, the key's ``ids``), or None when the
    id is not in the corpus.  Accepts a ``.md`` suffix, a ``corpus/`` prefix and surrounding blanks."""
    key = raw.strip().rsplit("/", 1)[-1]
    return ids.get(key[:-3] if key.endswith(".md") else key)


#: A corpus id as the sandbox shows it (``doc_`` + 12 hex digits, :mod:`~tsagent_plugins.tasks.drcik.dataset.corpus`), as cited in a report.
REPORT_ID = re.compile(r"\bdoc_[0-9a-f]{12}\b")


def report_citations(report: str | None) -> list[str]:
    """The corpus-shaped ids a report text cites, distinct, in order of first mention."""
    return list(dict.fromkeys(REPORT_ID.findall(report or "")))


def resolve(items: list[Item], ids: dict[str, str], documents: dict[str, dict] | None = None,
            benchmark_id: str | None = None, report: str | None = None) -> Resolved:
    """Map each item's cited sandbox ids to release ids with ``ids`` (visible -> release), each
    through :func:`resolve_id`.  Unknown ids are dropped and counted as hallucinated (distinct ids,
    and occurrences).  ``report``: the report text; the ids it cites (:func:`report_citations`)
    are resolved the same way into ``report_cited`` (unknown ones counted as hallucinated).
    With ``documents`` (release id -> ``{task, role}``) and ``benchmark_id``, resolved citations of
    another task's document and of distractor documents are counted (once per distinct document).
    """
    out = Resolved(items)
    seen: set[str] = set()
    fakes: set[str] = set()

    def count(release: str) -> None:
        if documents is not None and release not in seen:
            info = documents.get(release) or {}
            out.cross_task += benchmark_id is not None and info.get("task") != benchmark_id
            out.distractors += info.get("role") == "distractor"
        seen.add(release)

    for item in items:
        for raw in item.cited:
            release = resolve_id(raw, ids)
            if release is None:
                item.dropped.append(raw)
                out.hallucinated_occurrences += 1
                fakes.add(raw.strip())
            elif release not in item.resolved:
                item.resolved.append(release)
                count(release)
    for raw in report_citations(report):
        release = resolve_id(raw, ids)
        if release is None:
            out.report_dropped.append(raw)
            out.hallucinated_occurrences += 1
            fakes.add(raw)
        else:
            out.report_cited.append(release)
            count(release)
    out.hallucinated = len(fakes)
    return out


def deep_research_row(benchmark_id: str, resolved: Resolved) -> dict[str, Any]:
    """The release row: claims in the agent's order; resolved ids (evidence items', then the report's),
    ordered, de-duplicated."""
    cited: list[str] = []
    for rid in [r for item in resolved.items for r in item.resolved] + resolved.report_cited:
        if rid not in cited:
            cited.append(rid)
    return {"benchmark_id": benchmark_id, "cited_document_ids": cited,
            "evidence": [item.claim for item in resolved.items]}


def validate_deep_research_row(row: Any, known_documents: dict | None = None) -> list[str]:
    """Problems of one ``deep_research.jsonl`` row against the release's rules (empty: valid)."""
    if not isinstance(row, dict):
        return ["row: not an object"]
    problems = []
    keys = set(row)
    if keys != set(ROW_KEYS):
        problems.append(f"row keys: expected {sorted(ROW_KEYS)}, got {sorted(keys)}")
    if not isinstance(row.get("benchmark_id"), str) or not row.get("benchmark_id"):
        problems.append("benchmark_id: not a non-empty string")
    cited = row.get("cited_document_ids")
    if not isinstance(cited, list) or not all(isinstance(i, str) and i for i in cited):
        problems.append("cited_document_ids: not a list of non-empty strings")
    else:
        if len(set(cited)) != len(cited):
            problems.append("cited_document_ids: duplicates")
        if known_documents is not None:
            unknown = [i for i in cited if i not in known_documents]
            if unknown:
                problems.append(f"cited_document_ids: not in the corpus: {unknown[:5]}")
    evidence = row.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        problems.append("evidence: not a list of strings")
    return problems


def make_metadata(method: str = "tsagent-harness DR agent", organization: str = "", type: str = "agentic",
                  base_model: str = "unknown", reproduction: str = "", contact: str = "", notes: str = "") -> dict:
    """A ``metadata.json`` mapping with the release template's fields."""
    return {"method": method, "organization": organization, "type": type, "base_model": base_model,
            "reproduction": reproduction, "contact": contact, "notes": notes}


def validate_metadata(meta: Any) -> list[str]:
    """Problems of a ``metadata.json`` mapping (empty: valid)."""
    if not isinstance(meta, dict):
        return ["metadata: not an object"]
    problems = [f"metadata.{k}: missing" for k in METADATA_FIELDS if k not in meta]
    problems += [f"metadata.{k}: not a string" for k in METADATA_FIELDS if k in meta and not isinstance(meta[k], str)]
    problems += [f"metadata.{k}: empty" for k in METADATA_REQUIRED if isinstance(meta.get(k), str) and not meta[k]]
    return problems


def write_export(folder: Path, rows: list[dict], metadata: dict) -> tuple[Path, Path]:
    """Write ``deep_research.jsonl`` (one line per row) and ``metadata.json`` into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    jsonl = folder / DEEP_RESEARCH_FILE
    jsonl.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    meta = folder / METADATA_FILE
    meta.write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    return jsonl, meta


def collect_run(run_dir: Path, out_dir: Path, metadata: dict) -> tuple[Path, Path]:
    """Merge the rows every research episode of ``run_dir`` exported into one submission folder."""
    rows: dict[str, dict] = {}
    for path in sorted(Path(run_dir).glob(f"**/key/{DEEP_RESEARCH_FILE}")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["benchmark_id"]] = row
    return write_export(Path(out_dir), list(rows.values()), metadata)

"""Where a results row's values came from: the versions of the code that computed them and digests of what
they were computed from (the row columns :data:`harness.columns.PROVENANCE`, and ``run.json``'s
``provenance``).

- ``scorer_version``: the task template's :attr:`~harness.contracts.TaskTemplate.scorer_version`;
- ``extractor_versions``: every metric extractor's :attr:`~harness.contracts.MetricExtractor.version`, as one
  JSON object ``{name: version}`` (sorted by name).  One mapping column rather than one column per
  extractor: the set of extractors is whatever plugins are installed, and a row stays one schema whichever
  they are; :func:`versions_of` reads it back;
- ``spec_sha256``: sha256 of the task spec as run, its canonical JSON after overrides (:func:`spec_sha256`:
  a comment or a reordering of the YAML file changes nothing; a changed param does);
- ``inputs_digest``: what the template's :meth:`~harness.contracts.TaskTemplate.inputs_digest` gives;
- ``harness_version``: the ``tsagent-harness`` distribution's version from its package metadata, and
  ``harness_commit``: the commit of the git checkout the harness runs from (read from ``.git`` files, no
  ``git`` process; None when the package is not in a git checkout).  Both are read once per process.
- ``rescored_at``: set by ``harness rescore`` (:mod:`harness.rescore`).

A report over rows of different scorer or extractor versions builds each template's tables per version
(:func:`version_groups`, used by :func:`harness.report.sections.contribute`); a resume names the code versions
its kept rows were made by when they are not the code about to run (:func:`code_changes`, used by
:func:`harness.run.resume_summary`).
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    import pandas as pd

#: the distribution whose version rows record
DISTRIBUTION = "tsagent-harness"
#: what a row without a recorded version shows in a version label (rows written before versions were kept)
UNRECORDED = "unrecorded"


@lru_cache(maxsize=1)
def harness_version() -> str:
    """The installed ``tsagent-harness`` version (package metadata); ``harness.__version__`` when the
    distribution is not installed (running from a source tree on ``sys.path``)."""
    from importlib import metadata

    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return str(getattr(sys.modules.get("harness"), "__version__", "0+unknown"))


@lru_cache(maxsize=1)
def harness_commit() -> str | None:
    """The commit (40 hex digits) checked out where the ``harness`` package lives, or None when it is not in a
    git checkout or the commit cannot be read.  Reads ``.git`` files only (``HEAD``, the ref it names, loose
    or packed; a worktree's ``gitdir:`` and ``commondir``); no ``git`` process."""
    root = Path(__file__).resolve().parent.parent
    return read_commit(root)


def read_commit(root: Path) -> str | None:
    """The commit checked out in the git working tree ``root`` (None when there is none or it is unreadable)."""
    try:
        git = root / ".git"
        if git.is_file():  # a worktree or submodule: "gitdir: <path>"
            text = git.read_text(encoding="utf-8").strip()
            if not text.startswith("gitdir:"):
                return None
            git = (root / text[len("gitdir:"):].strip()).resolve()
        if not git.is_dir():
            return None
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text(encoding="utf-8").strip()).resolve()
        head = (git / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref:"):
            return head if _is_sha(head) else None
        ref = head[len("ref:"):].strip()
        for folder in dict.fromkeys((git, common)):
            loose = folder / ref
            if loose.is_file():
                sha = loose.read_text(encoding="utf-8").strip()
                return sha if _is_sha(sha) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref and _is_sha(parts[0]):
                    return parts[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def spec_sha256(spec: Any) -> str:
    """sha256 (hex) of a task spec as run: the canonical JSON (sorted keys) of its pydantic model dump, after
    the overrides were applied."""
    data = spec.model_dump(mode="json") if hasattr(spec, "model_dump") else spec
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def extractor_versions(extractors: Iterable[Any]) -> str | None:
    """The ``extractor_versions`` value of a row computed by ``extractors``: JSON ``{name: version}`` sorted by
    name; None for no extractor."""
    found = {str(getattr(e, "name", type(e).__name__)): str(getattr(e, "version", "0")) for e in extractors}
    return json.dumps(dict(sorted(found.items())), separators=(",", ":")) if found else None


def versions_of(value: Any) -> dict[str, str]:
    """An ``extractor_versions`` cell back as ``{name: version}`` (empty for a null or unreadable cell)."""
    if not isinstance(value, str) or not value:
        return {}
    try:
        data = json.loads(value)
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def code_columns(template: Any, extractors: Iterable[Any]) -> dict[str, Any]:
    """The code-version columns of a row that ``template`` scored and ``extractors`` measured, now."""
    return {"scorer_version": str(getattr(template, "scorer_version", "0")),
            "extractor_versions": extractor_versions(extractors),
            "harness_version": harness_version(), "harness_commit": harness_commit()}


#: at most this many earlier values of one column are named by :func:`code_changes` (then ``...``)
SHOWN_VALUES = 3


def code_changes(pairs: Iterable[tuple[dict[str, Any], dict[str, Any]]]) -> tuple[int, list[str]]:
    """How the rows a resume keeps differ from what the code about to run would record for them.

    ``pairs``: ``(kept row, now)``, ``now`` being :func:`code_columns` of the row's template and extractors.
    Returns the number of rows that differ in any of ``harness_version``, ``harness_commit``,
    ``scorer_version`` or one extractor's version, and one phrase per column and new value, the earlier
    values in first-seen order (``harness commit 1a2b3c4 → 5d6e7f8``, ``scorer_version 2, 1 → 3``,
    ``extractor steps 1 → 2``; a commit shown by its first 7 digits; an extractor one side lacks: ``none``).
    A value the row does not record is not compared (null: an unscored row, no extractor ran, not run from a
    git checkout, or written before versions were kept).  Nothing is read: the rows are in memory."""
    changed = 0
    seen: dict[tuple[str, str], list[str]] = {}
    for row, now in pairs:
        found = _differences(row, now)
        changed += bool(found)
        for label, old, new in found:
            olds = seen.setdefault((label, new), [])
            if old not in olds:
                olds.append(old)
    phrases = []
    for (label, new), olds in seen.items():
        shown = ", ".join(olds[:SHOWN_VALUES]) + (", ..." if len(olds) > SHOWN_VALUES else "")
        phrases.append(f"{label} {shown} → {new}")
    return changed, phrases


def _differences(row: dict[str, Any], now: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(label, value in the row, value now)`` of each code version ``row`` records other than ``now``."""
    out = []
    for column, label in (("harness_version", "harness version"), ("harness_commit", "harness commit"),
                          ("scorer_version", "scorer_version")):
        old, new = row.get(column), now.get(column)
        if isinstance(old, str) and old and isinstance(new, str) and new and old != new:
            short = (lambda v: v[:7]) if column == "harness_commit" else str
            out.append((label, short(old), short(new)))
    if row.get("extractor_versions") and now.get("extractor_versions"):
        old_map, new_map = versions_of(row["extractor_versions"]), versions_of(now["extractor_versions"])
        for name in sorted(old_map.keys() | new_map.keys()):
            if old_map.get(name) != new_map.get(name):
                out.append((f"extractor {name}", old_map.get(name, "none"), new_map.get(name, "none")))
    return out


def run_provenance(plans: Iterable[Any]) -> dict[str, Any]:
    """``run.json``'s ``provenance``: the harness version and commit, and per task file its spec hash, per
    template its scorer version, per extractor its version, over the planned episodes ``plans``
    (:class:`harness.episode.EpisodePlan`)."""
    plans = list(plans)
    extractors = {e.name: str(getattr(e, "version", "0")) for p in plans for e in (p.extractors or [])
                  if not p.in_harness}
    return {"harness_version": harness_version(), "harness_commit": harness_commit(),
            "specs": {p.task_file: p.spec_sha256 for p in plans if p.task_file and p.spec_sha256},
            "scorers": {p.template.name: str(getattr(p.template, "scorer_version", "0")) for p in plans},
            "extractors": dict(sorted(extractors.items()))}


def version_groups(rows: "pd.DataFrame") -> list[tuple[str | None, "pd.DataFrame"]]:
    """``rows`` (one template's) split by the code versions that computed them: ``[(None, rows)]`` when no two
    rows record different scorer versions or different versions of one extractor; otherwise one ``(label,
    rows)`` per combination that occurs, in first-seen order, the label naming only what differs (``scorer
    2``, ``extractors a@1, b@2``).  A row that records no version (written before versions were kept) joins
    the others while they all record one version, and is a group of its own (``unrecorded``) beside two."""
    import pandas as pd

    if rows.empty:
        return [(None, rows)]
    scorer = (rows["scorer_version"] if "scorer_version" in rows.columns
              else pd.Series(None, index=rows.index, dtype=object))
    scorer = scorer.map(lambda v: str(v) if isinstance(v, str) and v else UNRECORDED)
    cells = (rows["extractor_versions"] if "extractor_versions" in rows.columns
             else pd.Series(None, index=rows.index, dtype=object))
    parsed = cells.map(versions_of)
    names = sorted({n for versions in parsed for n in versions})
    differing = [n for n in names if len({v[n] for v in parsed if n in v}) > 1]
    split_scorer = len(set(scorer) - {UNRECORDED}) > 1
    if not split_scorer and not differing:
        return [(None, rows)]
    labels = []
    for index in rows.index:
        parts = [f"scorer {scorer[index]}"] if split_scorer else []
        if differing:
            parts.append("extractors " + ", ".join(f"{n}@{parsed[index].get(n, UNRECORDED)}" for n in differing))
        labels.append("; ".join(parts))
    labels = pd.Series(labels, index=rows.index)
    return [(label, rows[labels == label].reset_index(drop=True)) for label in pd.unique(labels)]

"""``harness dr-validate DIR``: check a Dr-CiK submission folder made anywhere against the release template.

The command is ``harness dr-validate SUBMISSION_DIR [--tasks RELEASE]`` (:mod:`..cli`; RELEASE: default
the bundled public sample).

The release's ``submissions/template/`` (copied in ``drcik_sample/submission_templates``) holds three
files: ``metadata.json`` (fields ``method``, ``organization``, ``type``, ``base_model``, ``reproduction``,
``contact``, ``notes``), ``forecasts.jsonl`` (``{benchmark_id, samples}`` per task) and
``deep_research.jsonl`` (``{benchmark_id, cited_document_ids, evidence}`` per task).  A submission has
``metadata.json`` and at least one of the two JSONL files; every task of RELEASE (the hidden ones only
with ``--hidden-only``) appears once in each JSONL file present.  Checked, each problem one
``error: FILE[:LINE]: FIELD: ...`` line (exit 2; exit 0 when none):

- files: ``metadata.json`` present, readable JSON; one of the JSONL files present; no other files but
  ``README.md`` (a warning);
- ``metadata.json``: every template field a string, ``method`` and ``type`` non-empty, ``type`` one of
  the leaderboard's kinds; no field carries an absolute local path (a path of the machine that made it
  means nothing to the leaderboard and leaks its layout: ours, a choice the release leaves open);
  empty ``organization``/``contact`` are named in a warning (the leaderboard shows them);
- ``forecasts.jsonl``: ids known and unique, ``samples`` a list of paths of the task's horizon, finite;
- ``deep_research.jsonl``: the release's row rules (exactly the three keys, ids cited from the release's
  corpus, evidence strings), ids known and unique.

The rules are those of :func:`.experiment.validate_submission` and
:func:`..research.outputs.validate_deep_research_row`, which the harness's own exports pass through.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tsagent_plugins.tasks.drcik.research import outputs as research_out
from tsagent_plugins.tasks.drcik.forecast.experiment import Validation, claim_task_id, validate_submission

FORECASTS_FILE = "forecasts.jsonl"
#: files a submission folder may hold besides the template's three
TOLERATED = {"README.md"}
#: an absolute local path: a POSIX path of two or more parts, a home folder, or a Windows drive path
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(/[\w.@+-]+(/[\w.@+-]+)+|~/[\w.@+-]+|[A-Za-z]:[\\/][\w.@+-]+([\\/][\w.@+-]+)*)")


def absolute_paths(text: str) -> list[str]:
    """The absolute local paths in ``text`` (URLs such as ``https://github.com/a/b`` are not paths)."""
    return [m.group(0) for m in ABSOLUTE_PATH.finditer(text)]


def _read_jsonl(path: Path, report: Validation) -> list[tuple[int, Any]]:
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        report.errors.append(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
        return rows
    for n, line in enumerate(lines, 1):
        if line.strip():
            try:
                rows.append((n, json.loads(line)))
            except (ValueError, RecursionError) as exc:
                report.errors.append(f"{path}:{n}: invalid JSON ({getattr(exc, 'msg', type(exc).__name__)})")
    return rows


def _research(path: Path, tasks: list, hidden_only: bool, report: Validation) -> None:
    expected = {t.benchmark_id for t in tasks if t.future is None or not hidden_only}
    known = {d.document_id for t in tasks for d in t.documents}
    seen: set[str] = set()
    for n, row in _read_jsonl(path, report):
        where = f"{path}:{n}"
        if claim_task_id(row, where, expected, seen, report.errors) is None:
            continue
        report.errors += [f"{where}: {p}" for p in research_out.validate_deep_research_row(row, known)]
    missing = sorted(expected - seen)
    if missing:
        report.errors.append(f"{path}: no row for {len(missing)} task(s): {', '.join(missing[:10])}")


def _metadata(path: Path, report: Validation) -> None:
    """Absolute paths and empty contact fields of ``metadata.json`` (its other rules: validate_submission)."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # said by validate_submission
    if not isinstance(meta, dict):
        return
    for key, value in meta.items():
        found = absolute_paths(value) if isinstance(value, str) else []
        if found:
            report.errors.append(f"{path}: {key}: carries an absolute local path ({found[0]})")
    unknown = sorted(set(meta) - set(research_out.METADATA_FIELDS))
    if unknown:
        report.warnings.append(f"{path}: field(s) not in the release template: {', '.join(unknown)}")


def empty_contact_fields(meta: dict) -> list[str]:
    """Which of ``organization`` and ``contact`` are empty (the leaderboard shows both)."""
    return [k for k in ("organization", "contact") if not str(meta.get(k) or "").strip()]


def validate_folder(folder: Path | str, tasks: list, hidden_only: bool = False) -> Validation:
    """Every problem of the submission ``folder`` against the release template for ``tasks``
    (see the module docstring); ``errors`` make it invalid, ``warnings`` do not."""
    folder = Path(folder)
    report = Validation()
    if not folder.is_dir():
        report.errors.append(f"{folder}: not a folder")
        return report
    forecasts, research = folder / FORECASTS_FILE, folder / research_out.DEEP_RESEARCH_FILE
    if not forecasts.exists() and not research.exists():
        report.errors.append(f"{folder}: files: neither {FORECASTS_FILE} nor {research_out.DEEP_RESEARCH_FILE}")
    check = validate_submission(folder, tasks, hidden_only)
    if not forecasts.exists():  # a research-only submission: only the metadata part applies
        check.errors[:] = [e for e in check.errors if not e.startswith(str(forecasts))]
    meta_file = folder / research_out.METADATA_FILE
    if not meta_file.is_file():  # one error, not one per missing field
        check.errors[:] = [e for e in check.errors if not e.startswith(str(meta_file))]
        check.warnings[:] = [w for w in check.warnings if not w.startswith(str(meta_file))]
        report.errors.append(f"{meta_file}: files: missing (the release template has one)")
    elif any(e.startswith(f"{meta_file}: unreadable") for e in check.errors):
        check.errors[:] = [e for e in check.errors if not e.endswith(": missing or empty")]
    report.errors += check.errors
    # the template's "missing or empty" warnings, said once below for organization/contact
    report.warnings += [w for w in check.warnings if not re.search(r": (organization|contact): missing or empty$", w)]
    _metadata(meta_file, report)
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        empty = empty_contact_fields(meta) if isinstance(meta, dict) else []
    except (OSError, ValueError):
        empty = []
    if empty:
        report.warnings.append(f"{meta_file}: {' and '.join(empty)} empty (the leaderboard shows them)")
    if research.exists():
        _research(research, tasks, hidden_only, report)
    known = {research_out.METADATA_FILE, FORECASTS_FILE, research_out.DEEP_RESEARCH_FILE} | TOLERATED
    extra = sorted(p.name for p in folder.iterdir() if p.name not in known)
    if extra:
        report.warnings.append(f"{folder}: files not in the release template: {', '.join(extra)}")
    return report


#: More valid submissions than this are said in one line (each invalid one is always named).
LISTED_SUBMISSIONS = 8


def submission_messages(out: dict[str, dict], kept: list[str]) -> list[str]:
    """What ``harness run`` prints about the submission folders a forecasting run wrote (``out``: key ->
    ``{"ok", "errors", "empty_metadata"}``; ``kept``: keys whose earlier valid export was kept): one line per
    submission up to :data:`LISTED_SUBMISSIONS`, else one line for the valid ones; every invalid one named with
    its first error; empty metadata fields said once, with the spec field that fills them."""
    valid = [key for key, check in out.items() if check["ok"]]
    lines = [] if len(out) > LISTED_SUBMISSIONS else [f"submission {key}: valid" for key in valid]
    if valid and len(out) > LISTED_SUBMISSIONS:
        lines.append(f"{len(valid)} submissions valid under submissions/ (e.g. {valid[0]})")
    lines += [f"submission {key}: INVALID ({len(check['errors'])} error(s)): {check['errors'][0]}"
              + ("; the earlier valid export is kept" if key in kept else "")
              for key, check in out.items() if not check["ok"]]
    empty = sorted({field for check in out.values() for field in check["empty_metadata"]})
    if empty:
        fields = " and ".join(empty)
        lines.append(f"metadata {fields} empty in {sum(bool(c['empty_metadata']) for c in out.values())} "
                     f"submission(s): the leaderboard shows them; set params.submission.{empty[0]}"
                     + (f" and .{empty[1]}" if len(empty) > 1 else "") + " in the spec to fill them")
    return lines


"""Dr-CiK submission exports made safe for staged runs (the release's ``SUBMISSION.md`` layout).

:func:`export` writes a submission into a fresh folder beside its place, validates it and moves it in
place unless that would replace a valid export with an invalid one (a later unit of a staged run never
empties an earlier unit's files).  :func:`research_export` and :func:`research_problems` read and check
the ``deep_research.jsonl`` of a research run for the combined ``submissions/<method>/`` folder.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tsagent_plugins.tasks.drcik.research import outputs as research_out


def export(folder: Path, write, validate) -> tuple[Any, bool]:
    """Write a submission with ``write(folder)`` into a fresh folder beside ``folder``, check it with
    ``validate(folder)`` (an object with ``ok``), and move it in place unless it is invalid while
    ``folder`` holds a valid export.  Returns (the new export's check, whether it replaced ``folder``)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        write(fresh)
        check = validate(fresh)
        check.errors[:] = [e.replace(str(fresh), str(folder)) for e in check.errors]
        check.warnings[:] = [w.replace(str(fresh), str(folder)) for w in check.warnings]
        if not check.ok and folder.is_dir() and validate(folder).ok:
            return check, False
        if folder.exists():
            shutil.rmtree(folder)
        fresh.rename(folder)
        return check, True
    finally:
        if fresh.exists():
            shutil.rmtree(fresh, ignore_errors=True)


def research_export(evidence) -> list[dict] | None:
    """The ``deep_research.jsonl`` rows the research run exported for ``evidence.agent`` (None when absent)."""
    path = Path(evidence.run) / "submissions" / f"deep_research__{evidence.agent}" / research_out.DEEP_RESEARCH_FILE
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError):
        return None


def research_problems(folder: Path, rows: list[dict], tasks) -> list[str]:
    """Problems of a combined folder's ``deep_research.jsonl`` against the release rules: each row valid, one per task."""
    known = {d.document_id for t in tasks for d in t.documents}
    path = folder / research_out.DEEP_RESEARCH_FILE
    problems = [f"{path}: {r.get('benchmark_id') if isinstance(r, dict) else '?'}: {p}"
                for r in rows for p in research_out.validate_deep_research_row(r, known)]
    missing = sorted({t.benchmark_id for t in tasks} - {r.get("benchmark_id") for r in rows if isinstance(r, dict)})
    if missing:
        problems.append(f"{path}: no row for {len(missing)} task(s): {', '.join(missing[:10])}")
    return problems

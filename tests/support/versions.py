"""Golden digests of what each built-in scorer and metric extractor computes on fixed inputs, per version.

``tests/golden/versions/<kind>.json`` maps a scorer's (task template's) or extractor's name to
``{"version": ..., "digest": ...}``: the sha256 of its outputs on the fixed inputs of
``tests/plugins/test_tasks_versions.py`` / ``tests/plugins/test_metrics_versions.py`` (canonical JSON, floats
to 10 significant digits, the test's temporary folder written as ``<tmp>``).  The tests fail when:

- the outputs changed and the version did not: the code now computes other values for the same input, so
  rows of the old and the new code would be mixed as one version.  Bump the ``version`` (an extractor's
  ``version``, a template's ``scorer_version``), then update the golden as below;
- the version changed and the golden did not: update the golden;
- a built-in has no golden entry: add one.

Updating: ``HARNESS_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/plugins/test_tasks_versions.py
tests/plugins/test_metrics_versions.py`` rewrites the entries that differ (review the diff: a changed digest
beside an unchanged version is refused even then), or paste the entry the failure message prints.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from tests.support.paths import TESTS

GOLDEN = TESTS / "golden" / "versions"
UPDATE = "HARNESS_UPDATE_GOLDEN"


def _plain(value: Any) -> Any:
    if isinstance(value, float):
        return float(f"{value:.10g}") if value == value else "nan"
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _plain(value.item())
    return value


def digest(outputs: Any, tmp: Path | None = None) -> str:
    """sha256 of ``outputs`` as canonical JSON (floats to 10 significant digits, ``tmp`` written ``<tmp>``)."""
    text = json.dumps(_plain(outputs), sort_keys=True, separators=(",", ":"), default=str)
    if tmp is not None:
        text = text.replace(str(tmp), "<tmp>")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check(kind: str, found: dict[str, tuple[str, str]]) -> list[str]:
    """Problems of ``found`` (name -> (version, digest)) against ``GOLDEN/<kind>.json`` (module docstring); with
    ``HARNESS_UPDATE_GOLDEN=1`` the file is rewritten where only a bumped version or a new entry differs."""
    path = GOLDEN / f"{kind}.json"
    golden = json.loads(path.read_text()) if path.is_file() else {}
    problems, updated = [], dict(golden)
    for name, (version, value) in sorted(found.items()):
        entry = golden.get(name)
        wanted = {"version": version, "digest": value}
        if entry == wanted:
            continue
        if entry is not None and entry.get("version") == version:
            problems.append(f"{kind} {name!r}: its output on the fixed inputs changed but its version is still "
                            f"{version!r}: bump its version (rows of both codes would be mixed as one), then "
                            f"update {path.relative_to(TESTS.parent)}")
            continue
        updated[name] = wanted
        what = "has no golden entry" if entry is None else f"is version {version!r} now (golden: {entry['version']!r})"
        problems.append(f"{kind} {name!r} {what}: set {path.relative_to(TESTS.parent)}[{name!r}] to "
                        f"{json.dumps(wanted)} (or run with {UPDATE}=1)")
    stale = sorted(set(golden) - set(found))
    problems += [f"{kind} {name!r}: golden entry of no registered {kind[:-1]}: remove it" for name in stale]
    for name in stale:
        updated.pop(name)
    if os.environ.get(UPDATE) == "1" and updated != golden:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(sorted(updated.items())), indent=1) + "\n")
        problems = [p for p in problems if "but its version is still" in p]
    return problems

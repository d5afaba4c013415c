"""The flat Hugging Face layout of the full Dr-CiK set: ``tasks``, ``documents``, ``task_documents``.

Built from the release's documentation (the repository README names the three
configs; the public loading instructions name the task fields
``history_timestamps``, ``history_values``, ``future_timestamps``,
``prediction_length``, ``document_ids``, ``labels_public``, ``future_values``,
``gt_evidence``).  Columns read, all others kept as task metadata:

- ``tasks``: benchmark_id, split, origin, labels_public, reasoning_hops,
  entity_name, entity_type, profile_id, profile_name, profile_details,
  time_series_variable, frequency, prediction_length, seasonal_period,
  target_description, history_timestamps, history_values, future_timestamps,
  future_values, document_ids, gt_evidence ([{id, evidence}], possibly JSON text);
- ``documents``: document_id, text (the content), raw_document_path;
- ``task_documents``: benchmark_id, document_id, rank, role, subtype.

This mapping has NOT been checked against the real dataset files (they cannot
be downloaded here); the test fixture ``tests/fixtures/drcik/flat`` is hand-made
to this description.  Each table is ``<name>.parquet``, ``<name>.jsonl`` or a
folder ``<name>/`` of such files (e.g. ``tasks/train-00000-of-00001.parquet``),
optionally under ``data/``.  Each task row is converted into the release's
nested task format (:func:`flat_records`), which
:func:`tsagent_plugins.tasks.drcik.dataset.loader.load_tasks` parses with
:func:`~tsagent_plugins.tasks.drcik.dataset.loader.parse_task`, so every data rule applies identically
(this module knows the layout, the loader the task format: it imports this one, never the reverse).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import ConfigError, lazy_module

if TYPE_CHECKING:  # numpy and pandas load when a flat layout is read, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")
    pd = lazy_module("pandas")

TABLES = ("tasks", "documents", "task_documents")
_SHOWCASE_COLUMNS = {"entity_name", "entity_type", "profile_id", "profile_name", "profile_details",
                     "time_series_variable"}
_META_COLUMNS = {"frequency", "prediction_length", "seasonal_period", "target_description"}
_SERIES_COLUMNS = {"history_timestamps", "history_values", "future_timestamps", "future_values"}


def _table_files(root: Path, name: str) -> list[Path]:
    for base in (root, root / "data"):
        for ext in ("parquet", "jsonl"):
            if (base / f"{name}.{ext}").is_file():
                return [base / f"{name}.{ext}"]
        folder = base / name
        if folder.is_dir():
            files = sorted([*folder.glob("*.parquet"), *folder.glob("*.jsonl")])
            if files:
                return files
    return []


def is_flat_layout(root: Path) -> bool:
    """Whether ``root`` holds the flat tables (tasks and documents at least)."""
    return bool(_table_files(root, "tasks")) and bool(_table_files(root, "documents"))


def _read_table(root: Path, name: str) -> pd.DataFrame:
    files = _table_files(root, name)
    if not files:
        raise ConfigError(root, [f"{name}: table not found ({name}.parquet, {name}.jsonl or {name}/)"])
    frames = []
    for f in files:
        try:
            if f.suffix == ".parquet":
                frames.append(pd.read_parquet(f))
            else:
                frames.append(pd.read_json(f, lines=True, precise_float=True, dtype=False))
        except Exception as exc:  # noqa: BLE001 - any reader failure is a bad file
            raise ConfigError(f, [f"unreadable {name} table: {type(exc).__name__}: {exc}"]) from None
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def _plain(value: Any) -> Any:
    """Numpy/pyarrow values -> plain Python (lists, dicts, None for NaN)."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _json_field(value: Any, file: Path, field: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value) if value.strip() else None
        except json.JSONDecodeError as exc:
            raise ConfigError(file, [f"{field}: not valid JSON: {exc.msg}"]) from None
    return value


def task_record(row: dict, links: list[dict], texts: dict[str, dict], file: Path) -> dict:
    """One flat ``tasks`` row (+ its ``task_documents`` rows and document texts) -> nested task dict."""
    row = {k: _plain(v) for k, v in row.items()}
    task_id = row.get("benchmark_id")
    if not isinstance(task_id, str):
        raise ConfigError(file, [f"tasks.benchmark_id: expected str, got {task_id!r}"])
    documents = []
    for link in sorted(links, key=lambda r: (r.get("rank") is None, r.get("rank") or 0)):
        doc_id = link.get("document_id")
        doc = texts.get(doc_id)
        if doc is None:
            raise ConfigError(file, [f"task_documents: task {task_id} links unknown document {doc_id!r}"])
        documents.append({"document_id": doc_id, "content": doc.get("text"), "role": link.get("role"),
                          "subtype": link.get("subtype"), "path": doc.get("raw_document_path")})
    declared = row.get("document_ids")
    if declared is not None and sorted(declared) != sorted(d["document_id"] for d in documents):
        raise ConfigError(file, [f"tasks.document_ids: task {task_id} lists {len(declared)} documents, "
                                 f"task_documents links {len(documents)}"])
    showcase = {
        "entity": {"name": row.get("entity_name"), "type": row.get("entity_type")},
        "profile": {"id": row.get("profile_id"), "name": row.get("profile_name"),
                    "details": _json_field(row.get("profile_details"), file, "tasks.profile_details")},
        "time_series_variable": {"name": row.get("time_series_variable")},
    }
    gt = _json_field(row.get("gt_evidence"), file, "tasks.gt_evidence") or []
    rest = {k: v for k, v in row.items()
            if k not in _SHOWCASE_COLUMNS | _META_COLUMNS | _SERIES_COLUMNS | {"gt_evidence", "document_ids"}}
    return {
        **rest,
        "showcase": showcase,
        "task_metadata": {k: row.get(k) for k in sorted(_META_COLUMNS)},
        "series": {k: row.get(k) if row.get(k) is not None else [] for k in sorted(_SERIES_COLUMNS)},
        "documents": documents,
        "annotations": {"gt_evidence": gt},
    }


def flat_records(root: Path | str) -> list[tuple[dict, str]]:
    """Every task of a flat layout folder as ``(record, source)``: the record in the release's nested task
    format, the source naming the tasks table and the task (``<file>#<benchmark_id>``) for error messages."""
    root = Path(root)
    tasks = _read_table(root, "tasks")
    documents = _read_table(root, "documents")
    links = _read_table(root, "task_documents") if _table_files(root, "task_documents") else None
    for name, frame, needed in (("tasks", tasks, ("benchmark_id",)),
                                ("documents", documents, ("document_id", "text"))):
        missing = [c for c in needed if c not in frame.columns]
        if missing:
            raise ConfigError(_table_files(root, name)[0], [f"{name}.{c}: column required" for c in missing])
    texts = {str(r["document_id"]): {k: _plain(v) for k, v in r.items()}
             for r in documents.to_dict("records")}
    by_task: dict[str, list[dict]] = {}
    if links is not None:
        for r in links.to_dict("records"):
            by_task.setdefault(str(r["benchmark_id"]), []).append({k: _plain(v) for k, v in r.items()})
    file = _table_files(root, "tasks")[0]
    out = []
    for row in tasks.to_dict("records"):
        record = task_record(row, by_task.get(str(row["benchmark_id"]), []), texts, file)
        out.append((record, f"{file}#{record['benchmark_id']}"))
    return out

"""Load Dr-CiK tasks (public release format) into typed :class:`DrcikTask` objects.

Release task format (one JSON file per task, ``tasks/<benchmark_id>.json``):
``series`` (history/future timestamps and values), ``task_metadata``
(frequency, prediction_length, seasonal_period, target_description),
``documents`` (``document_id``, ``content``, ``role`` supporting|distractor,
``subtype`` for distractors, ``path``), ``annotations.gt_evidence`` (``{id,
evidence}``) and top-level fields (split, origin, reasoning_hops, showcase,
labels_public, ...) kept as they are.  The flat Hugging Face layout is read by
:mod:`tsagent_plugins.tasks.drcik.dataset.flat` and converted into this same form, so the data
rules below are applied by one code path.

Data rules (each recorded in :attr:`DrcikTask.data_notes` when applied):

1. frequency strings and codes go through the one alias table of
   :mod:`tsagent_plugins.tasks.drcik.dataset.frequency`;
2. ``seasonal_period``: an int is used as given, a string is a frequency code
   from which m is derived;
3. NaN in history is interpolated in time, ends filled with the nearest value;
   the count is recorded;
4. a last history timestamp equal to the first future timestamp: that history
   point is dropped;
5. a future window with mean |y| = 0: scaled metrics are undefined and the task
   is marked ``undefined_scale`` (never scored);
6. hidden future values (expert tasks): ``future`` is None and the task is
   marked ``labels_hidden`` (forecasts are produced and exported, not scored).

Malformed input raises :class:`harness.config.ConfigError` naming the file and field.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import ConfigError, lazy_module
from tsagent_plugins.tasks.drcik.dataset import flat
from tsagent_plugins.tasks.drcik.dataset.difficulty import LEVELS
from tsagent_plugins.tasks.drcik.dataset.frequency import FrequencyError, parse_frequency, seasonal_period

if TYPE_CHECKING:  # numpy and pandas load when a task is read, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")

SUPPORTING = "supporting"
DISTRACTOR = "distractor"
#: Distractor subtype names in the data -> the paper's names (Section 4.2).
SUBTYPE_PAPER_NAMES: dict[str, str] = {
    "noisy": "irrelevant",
    "confounder": "off-variable",
    "profile": "off-entity",
    "temporal": "off-window",
    "timeseries": "counterfactual history",
}

SCALE_OK = "ok"
UNDEFINED_SCALE = "undefined_scale"
LABELS_HIDDEN = "labels_hidden"

#: The embedded public sample (3 synthetic tasks, CC BY 4.0, see data/sample/SOURCE.md).
SAMPLE_DIR = Path(__file__).parent.parent / "data" / "sample"


@dataclass(frozen=True)
class Document:
    """One corpus document.  ``role``: ``supporting``|``distractor``; ``subtype``:
    the distractor subtype as written in the data (None for supporting documents)."""

    document_id: str
    content: str
    role: str
    subtype: str | None
    task_id: str
    path: str | None = None

    @property
    def paper_subtype(self) -> str | None:
        """The paper's name of the distractor subtype (Section 4.2), or None."""
        return SUBTYPE_PAPER_NAMES.get(self.subtype) if self.subtype else None


#: Evidence roles (Appendix K.2): an item explains the observed history or describes the forecast window.
RETROSPECTIVE = "retrospective"
PROSPECTIVE = "prospective"
ROLES = (RETROSPECTIVE, PROSPECTIVE)


@dataclass(frozen=True)
class EvidenceItem:
    """One ground-truth supporting-evidence item (``annotations.gt_evidence``).  ``role``: ``retrospective``
    | ``prospective`` where the task marks it (``annotations.gt_evidence[i].role``; Appendix K.2: the
    expert-curated tasks and generated ones do, the public sample does not), else None."""

    id: str
    text: str
    role: str | None = None


@dataclass
class DrcikTask:
    """One Dr-CiK forecasting task after the data rules.

    ``history``: float values, DatetimeIndex, no NaN (length T_h).
    ``future_index``: the H timestamps to forecast.
    ``future``: float values on ``future_index``, or None when labels are hidden.
    ``seasonal_period``: integer m >= 1.  ``frequency``: pandas offset alias.
    ``documents``: the task's documents in file order (that order leaks roles:
    never show it to an agent, see :mod:`tsagent_plugins.tasks.drcik.dataset.corpus`).
    ``evidence``: ground-truth evidence items (empty when hidden).
    ``annotations``: other annotation fields, unchanged.  ``metadata``:
    ``task_metadata`` plus other top-level fields, unchanged.
    ``scale_status``: ``ok`` | ``undefined_scale`` | ``labels_hidden``.
    ``data_notes``: every data rule applied to this task.
    """

    benchmark_id: str
    history: pd.Series
    future_index: pd.DatetimeIndex
    future: pd.Series | None
    frequency: str
    seasonal_period: int
    target_description: str
    documents: list[Document]
    evidence: list[EvidenceItem]
    annotations: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    scale_status: str = SCALE_OK
    data_notes: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def difficulty(self) -> dict[str, str]:
        """The task level per Appendix L.3 dimension (``annotations.difficulty``), only the entries that are L.3
        labels (a known dimension and level, :mod:`tsagent_plugins.tasks.drcik.dataset.difficulty`); other annotation
        content under that name (older releases' own fields) is kept in ``annotations`` but not given here."""
        labels = self.annotations.get("difficulty")
        if not isinstance(labels, dict):
            return {}
        return {k: v for k, v in labels.items() if k in LEVELS and v in LEVELS[k]}

    @property
    def marks_roles(self) -> bool:
        """Whether the task marks every evidence item retrospective or prospective (Appendix K.2)."""
        return bool(self.evidence) and all(e.role in ROLES for e in self.evidence)

    @property
    def horizon(self) -> int:
        return len(self.future_index)

    @property
    def labels_public(self) -> bool:
        return self.future is not None

    @property
    def supporting_ids(self) -> list[str]:
        return [d.document_id for d in self.documents if d.role == SUPPORTING]

    @property
    def distractor_ids(self) -> list[str]:
        return [d.document_id for d in self.documents if d.role == DISTRACTOR]


class _Reader:
    """Field access that turns every problem into a ConfigError naming file and field."""

    def __init__(self, file: str):
        self.file = file

    def fail(self, path: str, message: str):
        raise ConfigError(self.file, [f"{path}: {message}"])

    def get(self, obj: Any, key: str, path: str, kind: type | tuple | None = None, default: Any = ...):
        if not isinstance(obj, dict):
            self.fail(path.rsplit(".", 1)[0] or "<root>", f"expected an object, got {type(obj).__name__}")
        if key not in obj or obj[key] is None:
            if default is not ...:
                return default
            self.fail(path, "field required")
        value = obj[key]
        if kind is not None and not isinstance(value, kind):
            names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            self.fail(path, f"expected {names}, got {type(value).__name__} ({_short(value)})")
        return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 60 else text[:57] + "..."


def _floats(rd: _Reader, values: list, path: str) -> np.ndarray:
    out = np.empty(len(values), dtype=float)
    for i, v in enumerate(values):
        if v is None:
            out[i] = np.nan
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[i] = float(v)
        elif isinstance(v, str) and v.strip().lower() in ("nan", ""):
            out[i] = np.nan
        else:
            rd.fail(f"{path}[{i}]", f"expected a number, got {_short(v)}")
    if np.isinf(out).any():
        rd.fail(f"{path}[{int(np.flatnonzero(np.isinf(out))[0])}]", "infinite value")
    return out


def _timestamps(rd: _Reader, values: list, path: str) -> pd.DatetimeIndex:
    import pandas as pd  # imported on use: pandas is slow to load

    try:
        index = pd.DatetimeIndex(pd.to_datetime(list(values)))
    except (ValueError, TypeError) as exc:
        rd.fail(path, f"unreadable timestamp: {exc}")
    if index.hasnans:
        rd.fail(f"{path}[{int(np.flatnonzero(index.isna())[0])}]", "missing timestamp")
    if len(index) > 1 and not (np.diff(index.asi8) > 0).all():
        bad = int(np.flatnonzero(np.diff(index.asi8) <= 0)[0]) + 1
        rd.fail(f"{path}[{bad}]", f"timestamps must strictly increase ({index[bad - 1]} then {index[bad]})")
    return index


def parse_task(raw: dict, source: str = "<memory>", documents_root: Path | None = None) -> DrcikTask:
    """Build a :class:`DrcikTask` from one release task object, applying the data rules.

    ``documents_root``: folder that document ``path`` fields are relative to
    (used only when a document has no ``content``).
    """
    import pandas as pd  # imported on use: pandas is slow to load

    rd = _Reader(source)
    if not isinstance(raw, dict):
        rd.fail("<root>", f"expected a task object, got {type(raw).__name__}")
    notes: list[str] = []
    task_id = rd.get(raw, "benchmark_id", "benchmark_id", str)
    meta = rd.get(raw, "task_metadata", "task_metadata", dict)
    series = rd.get(raw, "series", "series", dict)

    freq_text = rd.get(meta, "frequency", "task_metadata.frequency", str)
    try:
        freq = parse_frequency(freq_text)
    except FrequencyError as exc:
        rd.fail("task_metadata.frequency", str(exc))
    if freq.rewritten:
        notes.append(f"frequency {freq_text!r} read through the alias table as {freq.code!r}")
    try:
        m, m_note = seasonal_period(meta.get("seasonal_period"), freq)
    except FrequencyError as exc:
        rd.fail("task_metadata.seasonal_period", str(exc))
    if m_note:
        notes.append(m_note)

    h_ts = _timestamps(rd, rd.get(series, "history_timestamps", "series.history_timestamps", list),
                       "series.history_timestamps")
    h_vals = _floats(rd, rd.get(series, "history_values", "series.history_values", list), "series.history_values")
    if len(h_ts) != len(h_vals):
        rd.fail("series.history_values", f"{len(h_vals)} values for {len(h_ts)} history_timestamps")
    f_ts = _timestamps(rd, rd.get(series, "future_timestamps", "series.future_timestamps", list),
                       "series.future_timestamps")
    if len(f_ts) == 0:
        rd.fail("series.future_timestamps", "empty forecast window")
    pred_len = meta.get("prediction_length")
    if pred_len is not None and (not isinstance(pred_len, int) or pred_len != len(f_ts)):
        rd.fail("task_metadata.prediction_length",
                f"{pred_len!r} does not match the {len(f_ts)} future_timestamps")
    raw_future = series.get("future_values")
    hidden = raw_future is None or len(raw_future) == 0 or raw.get("labels_public") is False
    f_vals = None
    if not hidden:
        f_vals = _floats(rd, raw_future, "series.future_values")
        if len(f_vals) != len(f_ts):
            rd.fail("series.future_values", f"{len(f_vals)} values for {len(f_ts)} future_timestamps")
        if np.isnan(f_vals).any():
            rd.fail(f"series.future_values[{int(np.flatnonzero(np.isnan(f_vals))[0])}]", "missing value")

    # Rule 4: boundary duplication.
    if len(h_ts) and h_ts[-1] == f_ts[0]:
        notes.append(f"last history timestamp {h_ts[-1]} equals the first future timestamp: "
                     f"history point dropped")
        h_ts, h_vals = h_ts[:-1], h_vals[:-1]
    if len(h_ts) and h_ts[-1] > f_ts[0]:
        rd.fail("series.future_timestamps", f"forecast window starts at {f_ts[0]}, before the last "
                f"history timestamp {h_ts[-1]}")
    if len(h_ts) == 0:
        rd.fail("series.history_values", "empty history")

    # Rule 3: NaN in history.
    history = pd.Series(h_vals, index=h_ts, name=task_id)
    n_nan = int(history.isna().sum())
    if n_nan == len(history):
        rd.fail("series.history_values", "every history value is missing")
    if n_nan:
        history = history.interpolate(method="time").ffill().bfill()
        notes.append(f"{n_nan} missing history value(s) interpolated in time (ends filled)")

    future = None
    status = SCALE_OK
    if hidden:
        status = LABELS_HIDDEN
        notes.append("future values hidden: forecasts are produced and exported, metrics 'labels hidden'")
    else:
        future = pd.Series(f_vals, index=f_ts, name=task_id)
        if float(np.mean(np.abs(f_vals))) == 0.0:
            status = UNDEFINED_SCALE
            notes.append("future window has mean |y| = 0: scaled metrics undefined (undefined_scale)")

    documents = [
        _document(rd, d, i, task_id, documents_root)
        for i, d in enumerate(rd.get(raw, "documents", "documents", list, default=[]))
    ]
    seen: set[str] = set()
    for i, d in enumerate(documents):
        if d.document_id in seen:
            rd.fail(f"documents[{i}].document_id", f"duplicate document id {d.document_id!r}")
        seen.add(d.document_id)

    annotations = dict(rd.get(raw, "annotations", "annotations", dict, default={}))
    evidence = []
    for i, item in enumerate(annotations.pop("gt_evidence", None) or []):
        path = f"annotations.gt_evidence[{i}]"
        role = item.get("role") if isinstance(item, dict) else None
        if role is not None and role not in ROLES:
            rd.fail(f"{path}.role", f"expected one of {', '.join(ROLES)} (or no role), got {_short(role)}")
        evidence.append(EvidenceItem(id=str(rd.get(item, "id", f"{path}.id")),
                                     text=rd.get(item, "evidence", f"{path}.evidence", str), role=role))

    metadata = {k: v for k, v in raw.items() if k not in ("series", "documents", "annotations")}
    _with_original_context(metadata, source, task_id)
    return DrcikTask(
        benchmark_id=task_id,
        history=history,
        future_index=f_ts,
        future=future,
        frequency=freq.code,
        seasonal_period=m,
        target_description=str(meta.get("target_description") or ""),
        documents=documents,
        evidence=evidence,
        annotations=annotations,
        metadata=metadata,
        scale_status=status,
        data_notes=notes,
        source=source,
    )


#: Where ``harness dr-generate`` keeps each task's original CAF context and real names, beside ``tasks/``: never
#: in a task file, which agents read (the original names the real entity).
ANONYMISATION_FOLDER = Path("generation") / "anonymisation"


def _with_original_context(metadata: dict, source: str, task_id: str) -> None:
    """Give a generated task its original CAF context from ``<release>/generation/anonymisation/<task>.json``
    (``metadata["generation"]["original_context"]``, read by the ``original-context`` condition) when the task
    file sits in a ``dr-generate`` output's ``tasks/``; unchanged otherwise or when the file is unreadable."""
    generation = metadata.get("generation")
    if not isinstance(generation, dict) or generation.get("original_context") is not None or source.startswith("<"):
        return
    kept = Path(source).parent.parent / ANONYMISATION_FOLDER / f"{task_id}.json"
    try:
        original = json.loads(kept.read_text(encoding="utf-8")).get("original_context")
    except (OSError, ValueError, AttributeError):
        return
    if original is not None:
        metadata["generation"] = {**generation, "original_context": original}


def _document(rd: _Reader, d: Any, i: int, task_id: str, root: Path | None) -> Document:
    path = f"documents[{i}]"
    doc_id = rd.get(d, "document_id", f"{path}.document_id", str)
    role = rd.get(d, "role", f"{path}.role", str)
    if role not in (SUPPORTING, DISTRACTOR):
        rd.fail(f"{path}.role", f"expected 'supporting' or 'distractor', got {role!r}")
    subtype = d.get("subtype")
    if role == DISTRACTOR and subtype not in SUBTYPE_PAPER_NAMES:
        rd.fail(f"{path}.subtype", f"expected one of {sorted(SUBTYPE_PAPER_NAMES)}, got {subtype!r}")
    if role == SUPPORTING and subtype is not None:
        rd.fail(f"{path}.subtype", f"a supporting document has no subtype, got {subtype!r}")
    doc_path = d.get("path")
    content = d.get("content")
    if content is None:
        if not doc_path or root is None:
            rd.fail(f"{path}.content", "field required (no readable path either)")
        try:
            content = (root / doc_path).read_text(encoding="utf-8")
        except OSError as exc:
            rd.fail(f"{path}.path", f"cannot read {root / doc_path}: {exc.strerror or exc}")
    if not isinstance(content, str):
        rd.fail(f"{path}.content", f"expected str, got {type(content).__name__}")
    return Document(document_id=doc_id, content=content, role=role, subtype=subtype,
                    task_id=task_id, path=doc_path)


def load_task_file(path: Path | str) -> DrcikTask:
    """Load one release task JSON file (documents' ``path`` relative to its release folder)."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(path, [f"line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}"]) from None
    return parse_task(raw, str(path), documents_root=path.parent.parent)


def load_tasks(path: Path | str | None = None) -> list[DrcikTask]:
    """Load every task under ``path`` (default: the embedded public sample).

    ``path`` may be one task JSON file, a release folder (``tasks/*.json``,
    ordered by ``benchmark_manifest.json`` when present), or a flat Hugging Face
    layout folder (``tasks``/``documents``/``task_documents`` tables, see
    :mod:`tsagent_plugins.tasks.drcik.dataset.flat`).
    """
    path = Path(path) if path is not None else SAMPLE_DIR
    if path.is_file():
        return [load_task_file(path)]
    if not path.is_dir():
        raise ConfigError(path, ["no such file or folder"])
    if flat.is_flat_layout(path):
        return [parse_task(record, source) for record, source in flat.flat_records(path)]
    task_dir = path / "tasks" if (path / "tasks").is_dir() else path
    files = sorted(task_dir.glob("*.json"), key=_natural_key)
    manifest = path / "benchmark_manifest.json"
    if manifest.is_file():
        order = _manifest_order(manifest)
        files.sort(key=lambda f: order.get(f.stem, math.inf))
    if not files:
        raise ConfigError(path, ["no task files (tasks/*.json) and no flat tables (tasks.parquet/jsonl)"])
    tasks = [load_task_file(f) for f in files]
    ids = [t.benchmark_id for t in tasks]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ConfigError(path, [f"benchmark_id: duplicate task ids {dup}"])
    return tasks


def _natural_key(path: Path) -> tuple:
    digits = "".join(c for c in path.stem if c.isdigit())
    return (int(digits) if digits else math.inf, path.stem)


def _manifest_order(manifest: Path) -> dict[str, int]:
    try:
        data = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(manifest, [f"unreadable manifest: {exc}"]) from None
    entries = data.get("tasks") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ConfigError(manifest, ["tasks: expected a list of task entries"])
    return {str(e.get("benchmark_id")): i for i, e in enumerate(entries) if isinstance(e, dict)}

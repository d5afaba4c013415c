"""Loading episode rows from run directories for ``harness report``.

Each run directory contributes its ``results.parquet`` (or, for a run that
stopped before writing it, the ``episodes/*/row.json`` files).  Rows get a
``run_dir`` column so per-episode files (``score.json``, ``key/key.json``)
can be found again.  The same episode in several run directories is kept once,
unless the rows differ in a column their template declares in ``identity_columns`` (e.g. forecasts
from different evidence sources).  Rows flagged as not comparable (a true value in any
``flag_*`` column, e.g. ``flag_untrained``) are refused: left out of every
table, with a message naming the runs and episodes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from harness.errors import HarnessError
from harness.store import RowError, episode_rows


def identity_columns(templates) -> list[str]:
    """Besides profile and episode, the columns that make a row a different result: the
    ``identity_columns`` of the registered ``templates`` (rows equal in all of these present ones are one
    episode repeated in several run directories; the first is kept)."""
    from harness.plugins import plugins

    registry = plugins().registry("task_template")
    found = [c for name in templates if name in registry for c in registry[name].obj.identity_columns]
    return list(dict.fromkeys(found))


class ReportError(HarnessError):
    """Run directories cannot be reported; the message names the file and field."""


@dataclass
class Results:
    """The rows of all run directories, the refused (flagged) rows and messages about both."""

    frame: pd.DataFrame
    refused: pd.DataFrame
    messages: list[str] = field(default_factory=list)


def _bool(value) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1", "yes")
    try:
        return bool(value) and not pd.isna(value)
    except (TypeError, ValueError):
        return bool(value)


def read_run(run_dir: Path | str) -> pd.DataFrame:
    """Rows of one run directory (``ReportError`` naming the path when there are none)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir}: not a run directory")
    parquet = run_dir / "results.parquet"
    if parquet.is_file():
        try:
            frame = pd.read_parquet(parquet)
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several kinds
            raise ReportError(f"{parquet}: cannot read results: {exc}") from None
    else:
        try:
            rows = episode_rows(run_dir)
        except RowError as exc:
            raise ReportError(str(exc)) from None
        if not rows:
            raise ReportError(f"{run_dir}: no results.parquet and no episodes/*/row.json")
        frame = pd.DataFrame(rows)
    frame = frame.copy()
    frame["run_dir"] = str(run_dir)
    return frame


def load_results(run_dirs: list[Path | str], keep_repeats: bool = False) -> Results:
    """All rows of ``run_dirs``, with flagged rows set apart (``keep_repeats``: an episode found in several
    run directories is kept in each, e.g. to compare two runs of the same tasks)."""
    if not run_dirs:
        raise ReportError("no run directories given")
    frames, messages, empty = [], [], []
    for d in run_dirs:
        try:
            frames.append(read_run(d))
        except ReportError as exc:
            if "no results.parquet" not in str(exc):
                raise
            empty.append(str(exc))
            messages.append(f"skipped {d}: it holds no finished episode")
    if not frames:
        raise ReportError("; ".join(empty))
    frame = pd.concat(frames, ignore_index=True, sort=False)
    if {"profile", "episode"} <= set(frame.columns) and not keep_repeats:
        templates = frame["template"].dropna().unique() if "template" in frame.columns else []
        identity = ["profile", "episode", *[c for c in identity_columns(templates) if c in frame.columns]]
        repeated = frame.duplicated(subset=identity, keep="first")
        if repeated.any():
            dup = frame[repeated]
            messages.append(f"left out {len(dup)} repeated episode(s) (same profile and episode in several run "
                            f"directories; the first is kept): "
                            + ", ".join(f"{r.profile}/{r.episode} in {r.run_dir}" for r in dup.itertuples()))
            frame = frame[~repeated].reset_index(drop=True)
    flags = [c for c in frame.columns if c.startswith("flag_")]
    if flags:
        flagged = frame[flags].apply(lambda col: col.map(_bool)).any(axis=1)
    else:
        flagged = pd.Series(False, index=frame.index)
    refused = frame[flagged]
    if not refused.empty:
        for name in flags:
            hit = refused[refused[name].map(_bool)]
            if hit.empty:
                continue
            where = "; ".join(f"{run}: {', '.join(map(str, group['episode']))}"
                              for run, group in hit.groupby("run_dir"))
            messages.append(f"refused {len(hit)} row(s) flagged {name} (not comparable; left out of every "
                            f"table and figure) -- {where}")
    return Results(frame[~flagged].reset_index(drop=True), refused.reset_index(drop=True), messages)


def episode_dir(row) -> Path:
    """The folder of the episode of a results row."""
    return Path(row["run_dir"]) / "episodes" / str(row["episode"])


def read_json(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

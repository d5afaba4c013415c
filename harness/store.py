"""Run directories: ``runs/<run_id>/run.json``, one folder per episode, ``results.parquet``.

Layout::

    runs/<run_id>/
      run.json                    identity, episodes (id, task, params, profile), profiles, settings, versions,
                                  provenance (harness.provenance), rescores (harness rescore)
      results.parquet             one typed row per episode, each episode id once
      episodes/<label>-<episode_id>/
        workspace/                what the agent saw and left (mounted at /workspace)
        home/                     the agent's per-episode home (native logs; its text files of 16 KiB or more
                                  stored compressed once the trajectory is built: name.zst, harness.native_logs)
        key/                      the answer key (never mounted into a sandbox)
        prompt.txt, agent.stdout, agent.stderr, score.json, trajectory.json,
        proxy.jsonl.zst           the model proxy's log, compressed (an older run's: proxy.jsonl)
        inputs.json.zst           the generated inputs kept by reference (harness.inputs): the files the
                                  agent left unchanged leave the folder at the episode's end
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import sys
import threading
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.errors import HarnessError

#: an episode's results row and its score, in its folder (written by the harness, read by :func:`read_row`,
#: :func:`read_score` and :func:`finished_episodes`: the one reader of each)
ROW_FILE = "row.json"
SCORE_FILE = "score.json"
#: where a finished episode's results row lives, relative to the run directory
ROW_FILES = "episodes/*/" + ROW_FILE


def new_run_id() -> str:
    """A sortable, unique run id: ``YYYYmmdd-HHMMSS-<6 hex>``."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def versions() -> dict[str, str]:
    """Versions of Python, the harness and every distribution providing harness plugins."""
    out = {"python": platform.python_version(), "platform": sys.platform}
    dists = {ep.dist.name for ep in metadata.entry_points(group="harness") if ep.dist}
    for name in sorted(dists | {"numpy", "pandas", "pyarrow", "pluggy", "pydantic"}):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return out


@dataclass
class EpisodePaths:
    """Folders and files of one episode."""

    root: Path

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def key(self) -> Path:
        return self.root / "key"

    @property
    def score(self) -> Path:
        return self.root / SCORE_FILE

    @property
    def row(self) -> Path:
        return self.root / ROW_FILE

    def create(self) -> "EpisodePaths":
        for d in (self.workspace, self.home, self.key):
            d.mkdir(parents=True, exist_ok=True)
        return self


class RunStore:
    """One run directory."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.run_id = self.root.name

    @classmethod
    def create(cls, out: Path | None, base: Path = Path("runs")) -> "RunStore":
        root = Path(out) if out else base / new_run_id()
        root.mkdir(parents=True, exist_ok=True)
        return cls(root)

    def episode(self, key: str) -> EpisodePaths:
        """The folders of episode ``key``: ``episodes/<key>``, refused (HarnessError) unless it is one folder
        inside ``episodes/``."""
        return EpisodePaths(inside(self.root / "episodes", key))

    def read_run_json(self) -> dict[str, Any] | None:
        """The run's ``run.json``, or None for a new run."""
        path = self.root / "run.json"
        return json.loads(path.read_text()) if path.exists() else None

    def write_run_json(self, data: dict[str, Any]) -> None:
        write_json(self.root / "run.json", data)

    def rows(self) -> list[dict[str, Any]]:
        """Rows of every finished episode (those with ``row.json``), in key order (:func:`episode_rows`)."""
        return episode_rows(self.root)

    def write_results(self) -> Path:
        """Write ``results.parquet`` from the finished episodes' rows, typed by the columns' declarations
        (:func:`harness.columns.to_table`) after :func:`harness.columns.check_frame` found no problem
        (:class:`ResultsError` naming the file and the columns otherwise; the rows stay in ``row.json``)."""
        import pandas as pd  # imported on use: listing runs needs no pandas
        import pyarrow.parquet as pq

        from harness.columns import check_frame, to_table

        frame = pd.DataFrame(self.rows())
        if "episode_id" in frame.columns:  # each episode id once (a folder renamed by hand must not repeat it)
            frame = frame[~(frame["episode_id"].notna() & frame.duplicated("episode_id", keep="last"))]
        path = self.root / "results.parquet"
        problems = check_frame(frame)
        if problems:
            raise ResultsError(f"{path}: the rows do not fit their declared columns: " + "; ".join(problems))
        tmp = path.with_suffix(".parquet.tmp")
        pq.write_table(to_table(frame.reset_index(drop=True)), tmp)
        os.replace(tmp, path)
        return path


def run_dirs(base: Path | str, marker: str = "run.json", max_depth: int = 4) -> list[Path]:
    """Folders under ``base`` (``base`` included, at most ``max_depth`` levels down) holding ``marker`` (a run
    directory's ``run.json``, or its ``episodes`` folder), sorted.  Never enters an ``episodes`` folder:
    what agents wrote (a workspace of any depth or size) is not walked."""
    found, stack = [], [(Path(base), 0)]
    while stack:
        folder, depth = stack.pop()
        if (folder / marker).exists():
            found.append(folder)
        if depth >= max_depth:
            continue
        try:
            children = [e for e in os.scandir(folder) if e.name != "episodes" and e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        stack += [(Path(e.path), depth + 1) for e in children]
    return sorted(found)


def inside(root: Path | str, name: str) -> Path:
    """``root / name`` when ``name`` is one folder name that stays inside ``root`` once resolved (no ``..``,
    no separator, no link out); HarnessError naming both otherwise.  Every output folder named by a spec
    (a run's, a stage's, an episode's) goes through here."""
    root = Path(root)
    path = root / name
    parent = Path(os.path.realpath(root))
    if name in ("", ".", "..") or "/" in name or "\0" in name or Path(os.path.realpath(path)).parent != parent:
        raise HarnessError(f"{name!r}: not a folder name inside {root} (output must stay under it)")
    return path


class ResultsError(HarnessError):
    """Rows that do not fit their declared columns; the message names ``results.parquet`` and the columns."""


class RowError(HarnessError):
    """An episode's results file (``row.json``, ``score.json``) cannot be read or is not a JSON object; the
    message names the file."""


def _read_object(path: Path, what: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise RowError(f"{path}: not a valid {what}: {exc}") from None
    if not isinstance(data, dict):
        raise RowError(f"{path}: not a valid {what}: expected a JSON object, got {type(data).__name__}")
    return data


def read_row(path: Path | str) -> dict[str, Any]:
    """One results row (an episode's ``row.json``); :class:`RowError` naming the file when it is unreadable,
    not JSON or not an object."""
    return _read_object(Path(path), "row")


def read_score(folder: Path | str) -> dict[str, Any] | None:
    """The score of the episode in ``folder`` (its ``score.json``: ``metrics``, ``details``), None when the
    episode has none (not scored); :class:`RowError` naming the file when it is unreadable, not JSON or not
    an object (the rule of :func:`read_row`)."""
    path = Path(folder) / SCORE_FILE
    return _read_object(path, "score") if path.exists() else None


def finished_episodes(run_dir: Path | str, *, skip_invalid: bool = False) -> list[tuple[Path, dict[str, Any]]]:
    """``(episode folder, results row)`` of every finished episode of ``run_dir`` (those with a
    ``row.json``), in folder order: what a plugin reading its episodes' own files (keys, outputs) iterates.

    An invalid row raises :class:`RowError` naming its file, or is left out with ``skip_invalid``.
    """
    found = []
    for path in sorted(Path(run_dir).glob(ROW_FILES)):
        try:
            found.append((path.parent, read_row(path)))
        except RowError:
            if not skip_invalid:
                raise
    return found


def kept_row(path: Path | str, retry_failed: bool = False) -> dict[str, Any] | None:
    """The episode's row at ``path`` when a resume keeps it (:func:`keeps`), else None (no row, or one the
    resume runs again); :class:`RowError` naming the file when the row is unreadable."""
    path = Path(path)
    if not path.exists():
        return None
    row = read_row(path)
    return row if keeps(row, retry_failed) else None


def keeps(row: dict[str, Any], retry_failed: bool = False) -> bool:
    """Whether a resume keeps an episode's finished ``row`` rather than running the episode again: the one
    rule.  A failure of the harness's own (``status`` ``infra_failed``, ``error_kind`` ``disk_full``) is run
    again; so is, with ``retry_failed`` (``RunSettings.retry_failed``, ``harness run --retry-failed``), an
    episode whose agent or forecaster failed (``status`` ``failed``), which is otherwise a result and kept."""
    if row.get("status") == "infra_failed" or row.get("error_kind") == "disk_full":
        return False
    return not (retry_failed and row.get("status") == "failed")


def episode_rows(run_dir: Path | str, *, skip_invalid: bool = False) -> list[dict[str, Any]]:
    """The results rows of every finished episode of ``run_dir`` (``episodes/*/row.json``), in folder order.

    The one reader of per-episode rows (resume, ``results.parquet``, reports, ``runs list``, cost plans;
    :func:`finished_episodes` gives each row's folder too).  An invalid row raises :class:`RowError`
    naming its file, or is left out with ``skip_invalid``.
    """
    return [row for _, row in finished_episodes(run_dir, skip_invalid=skip_invalid)]


#: ``run.json`` entries that earlier runs into the same folder add to (a run's own entries win per name)
MERGED = ("profiles", "agents", "sandbox_details")


def keep_earlier(previous: dict[str, Any] | None, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a run's ``run.json``) with what ``previous`` (the folder's earlier ``run.json``) recorded kept:
    the :data:`MERGED` mappings merged by name, ``tasks`` united; ``episodes`` are merged by the run itself."""
    previous = previous or {}
    out = dict(data)
    for name in MERGED:
        before = previous.get(name)
        if isinstance(before, dict):
            out[name] = {**before, **(data.get(name) or {})}
    out["tasks"] = sorted({*map(str, previous.get("tasks") or []), *(data.get("tasks") or [])})
    return out


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temp file of this process and thread + rename: a reader sees the old file
    or the new one, never a part, and two writers never share a temp file)."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}-{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str, sort_keys=False))
    os.replace(tmp, path)

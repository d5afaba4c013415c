"""On-disk layout of a sample pool and its atomic publication.

A pool directory holds:

* ``meta.json``: format version, simulator name/version, pool seed, per-class
  size, filter settings, channel names, sample count;
* ``stats.json``: generation statistics (configurations, candidates, rejections per stage);
* ``timings.json``: how the generation ran (``workers``, ``timings`` per stage,
  ``wall_seconds``) -- the only file that depends on the machine and the number of
  workers; every other file is byte-identical for the same seed and library versions;
* ``recipes.parquet``: one row per sample (see :func:`recipe_columns`);
* ``configs.parquet``: one row per processed initial configuration (kept flag,
  passing parameters);
* ``trajectories.parquet``: long table ``row`` (int32, position in recipes),
  ``time`` (s), ``c0..c{C-1}`` (channel values, simulator channel order);
* ``events.parquet``: ``row``, ``time`` (impact times).

A pool is written into a temporary sibling directory and renamed into place,
so a killed run never leaves a half-written pool under the final name.  The
temporary directory is named after its writer (``.<key>.tmp-<host>-<pid>-<start>-<random>``,
host a hash of the host name, start the process start time): the next publication
into the same cache root removes the temporary directories of writers on this host
that no longer run (a pid alone may have been reused; the start time tells them
apart), of any key.  Directories of another host, or named otherwise (older
versions: ``.<key>.tmp-<pid>-<random>``), are removed once a day old.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import socket
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness import SimulatedTrajectory as Trajectory

FORMAT = 1
FILES = ("meta.json", "stats.json", "timings.json", "recipes.parquet", "configs.parquet", "trajectories.parquet",
         "events.parquet")
#: keys of the generation statistics that go to ``timings.json`` (machine-dependent)
RUN_KEYS = ("workers", "timings", "wall_seconds")
REQUIRED_RECIPE_COLUMNS = ("config_id", "label", "parameter", "t_int", "old_value", "new_value")
STALE_TMP_SECONDS = 24 * 3600
#: ``<host>-<pid>-<start>-`` in a temporary directory's name (:func:`writer_tag`)
_WRITER = re.compile(r"\.(?:tmp|old)-(?P<host>[0-9a-f]{8})-(?P<pid>\d+)-(?P<start>\d+)-[^-]*$")
#: the name of older versions, ``<pid>-`` only
_LEGACY_WRITER = re.compile(r"\.(?:tmp|old)-(?P<pid>\d+)-[^-]*$")


class PoolCacheError(ValueError):
    """A cached pool file is unreadable or lacks a field; the message names file and field."""


def write_dir(path: Path, recipes: pd.DataFrame, trajectories: list[Trajectory], configs: pd.DataFrame,
              meta: dict, stats: dict) -> None:
    """Write every pool file into the existing directory ``path`` (not atomic by itself).

    Adds ``stats["timings"]["writing"]`` (seconds); :data:`RUN_KEYS` go to ``timings.json``,
    the rest of ``stats`` to ``stats.json``."""
    t0 = time.perf_counter()
    if len(trajectories) != len(recipes):
        raise ValueError(f"{len(trajectories)} trajectories for {len(recipes)} recipes")
    recipes.to_parquet(path / "recipes.parquet", index=True)
    configs.to_parquet(path / "configs.parquet", index=False)
    n_ch = len(meta["channels"])
    lengths = np.array([len(t.time) for t in trajectories], dtype=np.int64)
    rows = np.repeat(np.arange(len(trajectories), dtype=np.int32), lengths)
    if trajectories:
        times = np.concatenate([np.asarray(t.time, dtype=float) for t in trajectories])
        values = np.concatenate([np.asarray(t.values, dtype=float).reshape(len(t.time), n_ch) for t in trajectories])
    else:
        times, values = np.zeros(0), np.zeros((0, n_ch))
    cols = {"row": rows, "time": times} | {f"c{i}": values[:, i] for i in range(n_ch)}
    pq.write_table(pa.table(cols), path / "trajectories.parquet", compression="zstd")
    ev = [np.ravel(np.asarray(t.events, dtype=float)) for t in trajectories]
    ev_rows = np.repeat(np.arange(len(ev), dtype=np.int32), [e.size for e in ev])
    ev_times = np.concatenate(ev) if ev else np.zeros(0)
    pq.write_table(pa.table({"row": ev_rows, "time": ev_times}), path / "events.parquet")
    stats["timings"] = dict(stats.get("timings", {}), writing=round(time.perf_counter() - t0, 6))
    run = {k: stats[k] for k in RUN_KEYS if k in stats}
    (path / "stats.json").write_text(json.dumps({k: v for k, v in stats.items() if k not in RUN_KEYS},
                                                indent=1, sort_keys=True))
    (path / "timings.json").write_text(json.dumps(run, indent=1, sort_keys=True))
    (path / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))


def publish(root: Path, key: str, fill, is_current=lambda path: False) -> Path:
    """Create ``root/key`` atomically: ``fill(tmp_dir)`` writes into a temporary sibling that is
    then renamed.  An existing ``root/key`` is kept when ``is_current(path)`` (another process
    published the same pool meanwhile), else replaced (moved aside first).  Returns the final path."""
    root.mkdir(parents=True, exist_ok=True)
    clean_stale(root)
    final = root / key
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.tmp-{writer_tag()}-", dir=root))
    try:
        fill(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes it private; a pool is an ordinary cache dir
        if final.exists() and is_current(final):
            shutil.rmtree(tmp, ignore_errors=True)
        elif final.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{key}.old-{writer_tag()}-", dir=root))
            os.rename(final, old / "pool")
            os.rename(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _host() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def writer_tag() -> str:
    """``<host>-<pid>-<start>``: this process as the writer of a temporary pool directory."""
    from harness.sandboxing import process_owner

    return f"{_host()}-{process_owner.tag()}"


def clean_stale(root: Path) -> list[Path]:
    """Remove the temporary pool directories (``.*.tmp-*``, ``.*.old-*``) in ``root`` that killed or failed
    writers left: those whose writer on this host no longer runs (an older version's ``<pid>-`` name: no
    process has that pid), and any older than :data:`STALE_TMP_SECONDS`.  A writer whose start time was
    unknown (no ``/proc``) is judged by age only.  Returns the directories removed."""
    from harness.sandboxing import process_owner

    now, host, removed = time.time(), _host(), []
    for p in [*root.glob(".*.tmp-*"), *root.glob(".*.old-*")]:
        m, legacy = _WRITER.search(p.name), _LEGACY_WRITER.search(p.name)
        try:
            if m is not None:
                dead = (m["host"] == host and int(m["start"]) != 0
                        and not process_owner.alive(int(m["pid"]), int(m["start"])))
            else:
                dead = legacy is not None and process_owner.start_time(int(legacy["pid"])) is None
            if dead or now - p.stat().st_mtime > STALE_TMP_SECONDS:
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p)
        except OSError:
            pass
    return removed


def read_json(path: Path) -> dict:
    """Parse a JSON object, or raise :class:`PoolCacheError` naming the file."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise PoolCacheError(f"{path}: unreadable ({exc}); delete the pool directory to regenerate it") from exc
    if not isinstance(data, dict):
        raise PoolCacheError(f"{path}: expected a JSON object")
    return data


def read_recipes(path: Path) -> pd.DataFrame:
    """Load ``recipes.parquet`` and check its fields."""
    file = path / "recipes.parquet"
    try:
        df = pd.read_parquet(file)
    except Exception as exc:  # noqa: BLE001 - any parquet failure is a cache error
        raise PoolCacheError(f"{file}: unreadable ({exc}); delete the pool directory to regenerate it") from exc
    if df.index.name != "sample_id":
        raise PoolCacheError(f"{file}: field 'sample_id' (index) missing")
    for col in REQUIRED_RECIPE_COLUMNS:
        if col not in df.columns:
            raise PoolCacheError(f"{file}: field {col!r} missing")
    if not df.index.is_unique:
        raise PoolCacheError(f"{file}: field 'sample_id' has duplicates")
    try:
        return normalize_recipes(df)
    except (TypeError, ValueError) as exc:
        raise PoolCacheError(f"{file}: bad field type ({exc})") from exc


def normalize_recipes(df: pd.DataFrame) -> pd.DataFrame:
    """Canonical dtypes, identical after a Parquet round trip and across pandas versions:
    strings as Python objects (``parameter`` None for NI), ids and draws int64."""
    df = df.copy()
    df.index = pd.Index([str(x) for x in df.index], dtype=object, name="sample_id")
    df["label"] = pd.Series([str(x) for x in df["label"]], index=df.index, dtype=object)
    df["parameter"] = pd.Series([None if (x is None or (isinstance(x, float) and np.isnan(x))) else str(x)
                                 for x in df["parameter"]], index=df.index, dtype=object)
    df["config_id"] = df["config_id"].astype("int64")
    if "draw" in df.columns:
        df["draw"] = df["draw"].astype("int64")
    return df


def read_trajectories(path: Path, n_rows: int, n_channels: int) -> list[Trajectory]:
    """Load every clean trajectory (in recipes order) from ``trajectories.parquet`` + ``events.parquet``."""
    file = path / "trajectories.parquet"
    try:
        tab = pq.read_table(file)
        ev = pq.read_table(path / "events.parquet")
    except Exception as exc:  # noqa: BLE001
        raise PoolCacheError(f"{file}: unreadable ({exc}); delete the pool directory to regenerate it") from exc
    for col in ["row", "time"] + [f"c{i}" for i in range(n_channels)]:
        if col not in tab.column_names:
            raise PoolCacheError(f"{file}: field {col!r} missing")
    rows = tab.column("row").to_numpy()
    times = tab.column("time").to_numpy()
    values = np.empty((rows.size, n_channels))
    for i in range(n_channels):
        values[:, i] = tab.column(f"c{i}").to_numpy()
    bounds = np.searchsorted(rows, np.arange(n_rows + 1, dtype=rows.dtype))
    if bounds[-1] != rows.size or (rows.size and np.any(np.diff(rows) < 0)):
        raise PoolCacheError(f"{file}: field 'row' is not sorted 0..{n_rows - 1}")
    ev_rows = ev.column("row").to_numpy()
    ev_times = ev.column("time").to_numpy()
    ev_bounds = np.searchsorted(ev_rows, np.arange(n_rows + 1, dtype=ev_rows.dtype))
    return [
        Trajectory(times[bounds[i]:bounds[i + 1]], values[bounds[i]:bounds[i + 1]],
                   ev_times[ev_bounds[i]:ev_bounds[i + 1]])
        for i in range(n_rows)
    ]

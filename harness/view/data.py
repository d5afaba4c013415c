"""What the viewer reads from run directories: runs, rows, leaderboards, trajectory steps.

A run directory is what ``harness run`` (or another template's runner)
writes: ``run.json``, ``results.parquet`` and, per episode with a sandboxed
agent, ``episodes/<episode>/`` (``trajectory.json``, ``prompt.txt``,
``workspace/``, ``proxy.jsonl.zst``, ...).  ``key/`` and the proxy log are never
read here: the answer key belongs to template panels that check
``reveal``, and the proxy log can be tens of megabytes (the trajectory already
carries per-step tokens and cost; :mod:`harness.view.calls` reads it when asked).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from harness.billing import offline_backend
from harness.untrusted import walk_files
from harness.report.load import read_run
from harness.trajectory import content_images, content_text, steps as trajectory_steps

#: Image files the agent may have made (as the plot-count metric counts them).
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp", ".svg")
#: Folders of tool caches, never scanned for plots.
SKIPPED_DIRS = {".cache", "__pycache__", ".git", "node_modules", ".ipynb_checkpoints", ".config", ".local"}
#: Tools that show a file to the model (a call naming an image with one of these is an inspection).
READ_TOOLS = {"read", "read_file", "read_many_files", "view_image", "view", "readfile", "image"}
#: Images larger than this are not shown (bytes).
MAX_IMAGE_BYTES = 5_000_000


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


def regular_file(folder: Path | None, relative: str) -> Path | None:
    """``folder/relative`` when it is a regular file inside ``folder`` reached through no symbolic link,
    else None.  An agent writes its workspace: a link there must not pull a host file into a page."""
    if folder is None:
        return None
    path = Path(folder) / relative
    try:
        inside = path.resolve(strict=True).is_relative_to(Path(folder).resolve(strict=True))
        linked = any(p.is_symlink() for p in [path, *path.parents][: len(Path(relative).parts)])
    except (OSError, RuntimeError):
        return None
    return path if inside and not linked and path.is_file() else None


def slug(text: str) -> str:
    """A file-name-safe form of an episode key (``my-forecaster/no-context/task_42`` -> ``my-forecaster_no-context_task_42``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "episode"


@dataclass
class Run:
    """One run directory: its id (unique within the viewer), ``run.json`` and rows."""

    id: str
    root: Path
    meta: dict
    rows: pd.DataFrame
    episode_slugs: list[str] = field(default_factory=list)
    _offline: list | None = field(default=None, repr=False, compare=False)

    def row(self, index: int) -> dict:
        return {k: _clean(v) for k, v in self.rows.iloc[index].items()}

    def offline(self) -> list[str | None]:
        """Per row: the offline model backend that answered its model calls (its cost is no money spent,
        :func:`harness.billing.offline_backend`; rows written before ``model_billed`` fall back on the run's
        ``--model-backend``), or None.  Computed once."""
        if self._offline is None:
            columns = [c for c in ("model_billed", "model_backend", "n_requests") if c in self.rows.columns]
            records = self.rows[columns].to_dict("records") if columns else [{}] * len(self.rows)
            backend = self.meta.get("model_backend")
            self._offline = [offline_backend({k: _clean(v) for k, v in r.items()},
                                             backend if isinstance(backend, str) else None) for r in records]
        return self._offline

    def index_of(self, episode_slug: str) -> int | None:
        try:
            return self.episode_slugs.index(episode_slug)
        except ValueError:
            return None

    def folder(self, index: int) -> Path | None:
        episode = self.rows.iloc[index].get("episode")
        if not isinstance(episode, str):
            return None
        folder = self.root / "episodes" / episode
        return folder if folder.is_dir() else None


def run_stamp(root: Path | str) -> tuple:
    """What changes when a run makes progress: ``results.parquet``'s modification time and the number and
    latest modification time of ``episodes/*/row.json`` (a live viewer re-reads a run when it changes)."""
    root = Path(root)
    parquet = root / "results.parquet"
    rows = list(root.glob("episodes/*/row.json"))
    times = []
    for path in rows:
        try:
            times.append(path.stat().st_mtime_ns)
        except OSError:
            pass
    return (parquet.stat().st_mtime_ns if parquet.is_file() else None, len(rows), max(times, default=0))


def _rows(root: Path) -> pd.DataFrame:
    """``results.parquet`` (the report's reader) plus the rows of episodes finished since it was written (a
    resumed run in progress); a run folder whose first episode has not finished yet has no rows."""
    from harness.errors import HarnessError
    from harness.store import episode_rows

    try:
        rows = read_run(root).drop(columns=["run_dir"])  # ReportError is a HarnessError
    except HarnessError:
        if (root / "run.json").is_file() and not (root / "results.parquet").exists():
            return pd.DataFrame({"episode": pd.Series([], dtype=object)})  # started, nothing finished yet
        raise
    if (root / "results.parquet").is_file() and "episode" in rows.columns:
        known = set(rows["episode"].dropna())
        newer = [r for r in episode_rows(root, skip_invalid=True) if r.get("episode") not in known]
        if newer:
            rows = pd.concat([rows, pd.DataFrame(newer)], ignore_index=True)
    return rows


def load_run(root: Path | str, run_id: str | None = None) -> Run:
    """Read a run directory: ``results.parquet`` and rows of episodes finished since, or the episodes' rows of a
    run still in progress; :class:`HarnessError` naming the folder or file when it is not one."""
    root = Path(root)
    rows = _rows(root)
    try:
        meta = json.loads((root / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        meta = {}
    slugs: list[str] = []
    for i, episode in enumerate(rows["episode"] if "episode" in rows.columns else [None] * len(rows)):
        name = slug(str(episode)) if isinstance(episode, str) else f"row{i}"
        slugs.append(name if name not in slugs else f"{name}-{i}")
    return Run(run_id or root.name, root, meta if isinstance(meta, dict) else {}, rows.reset_index(drop=True), slugs)


def with_run_columns(run: Run, pages: dict) -> Run:
    """``run`` with each template's ``run_columns`` added to its rows; ``pages``: template -> its
    :class:`harness.view.ViewPage` (a failing plugin adds none)."""
    if "template" not in run.rows.columns:
        return run
    rows = run.rows.copy()
    for template in pd.unique(rows["template"].dropna()):
        page = pages.get(template)
        if page is None or page.run_columns is None:
            continue
        mask = rows["template"] == template
        try:
            added = page.run_columns(run.root, rows[mask])
        except Exception:  # noqa: BLE001 - a plugin's reader never breaks the viewer
            continue
        for column in added.columns:
            if column not in rows.columns:
                rows[column] = None
                rows[column] = rows[column].astype(object)
            elif not (rows.loc[mask, column].astype(object).equals(added[column].astype(object))):
                rows[column] = rows[column].astype(object)
            rows.loc[mask, column] = added[column].to_numpy(dtype=object)
    run.rows = rows
    return run


def load_runs(roots: list[Path | str]) -> list[Run]:
    """Several runs; run ids made unique by a numeric suffix."""
    runs: list[Run] = []
    seen: set[str] = set()
    for root in roots:
        name = slug(Path(root).resolve().name)
        unique, n = name, 2
        while unique in seen:
            unique, n = f"{name}-{n}", n + 1
        seen.add(unique)
        runs.append(load_run(root, unique))
    return runs


# -- leaderboard -------------------------------------------------------------------------------------------------

def _number(series: pd.Series) -> pd.Series:
    return pd.to_numeric(series, errors="coerce")


def within_group_sd(values: pd.Series, groups: pd.Series) -> float | None:
    """Sample SD (ddof = 1) of ``values`` minus their group's mean (the report's within-simulator SD,
    :func:`harness.report.stats.within_simulator_sd`); None when it is undefined."""
    from harness.report.stats import within_simulator_sd

    return within_simulator_sd(values.tolist(), groups.astype(str).tolist())


def leaderboard(runs: list[Run], template: str, metric: str | None, conditions: tuple[str, ...],
                agent_column: str = "profile", group_column: str | None = None,
                extra: tuple[str, ...] = ()) -> tuple[list[str], list[dict]]:
    """Rows of one template's leaderboard: one per run × agent × condition.

    Each entry: ``run``, ``agent`` (``agent_column``, else ``profile`` for rows without one: a
    template's research episodes are run by an agent profile, its forecasts by a forecaster),
    ``conditions`` (one value per returned condition column, None where a row has none),
    ``n`` (episodes), ``metric_n`` (episodes with a metric value), ``metric_mean`` / ``metric_sd`` (sample SD, ddof = 1; None for n < 2;
    with ``group_column`` the SD of the values minus their group's mean, as the report's
    aggregate tables spread them), ``extra`` (column -> mean of each ``extra`` column present, else
    None), ``tokens`` (mean ``total_tokens``), ``cost`` (mean ``cost_usd``), ``seconds``
    (mean ``agent_seconds``, else ``seconds``), ``failures`` (rows whose ``status`` is not ``ok``), ``offline``
    (the offline model backend that answered the entry's model calls, :meth:`Run.offline`, else None: rows of
    one run and agent answered by a script and by a model are two entries).
    Returns (condition columns present in some row, entries).
    """
    entries: list[dict] = []
    present: list[str] = []
    frames = []
    for run in runs:
        frame = run.rows
        if "template" not in frame.columns:
            continue
        frame = frame[frame["template"] == template]
        if frame.empty:
            continue
        present += [c for c in conditions if c in frame.columns and frame[c].notna().any() and c not in present]
        frames.append((run, frame.copy()))
    present = [c for c in conditions if c in present]
    for run, frame in frames:
        offline = pd.Series(run.offline(), index=run.rows.index, dtype=object).loc[frame.index]
        frame["_offline"] = offline.where(offline.notna(), "–")
        agent = frame[agent_column] if agent_column in frame.columns else pd.Series(None, index=frame.index)
        if "profile" in frame.columns:
            agent = agent.where(agent.notna(), frame["profile"])
        frame["_agent"] = agent.astype(object).where(agent.notna(), "–")
        for c in present:  # every condition column exists before grouping: one cell per header
            if c not in frame.columns:
                frame[c] = None
            frame[c] = frame[c].astype(object).where(frame[c].notna(), "–")
        for values, group in frame.groupby(["_agent", "_offline"] + present, dropna=False, sort=True):
            values = values if isinstance(values, tuple) else (values,)
            entry = {"run": run.id, "agent": values[0], "offline": None if values[1] == "–" else values[1],
                     "conditions": [None if v == "–" else _clean(v) for v in values[2:]], "n": len(group)}
            has_metric = bool(metric) and metric in group.columns
            scores = _number(group[metric]) if has_metric else pd.Series([], dtype=float)
            ok = scores.notna()
            entry["metric_mean"] = float(scores[ok].mean()) if ok.any() else None
            entry["metric_n"] = int(ok.sum())
            if group_column and group_column in group.columns and ok.sum() > 1:
                entry["metric_sd"] = within_group_sd(scores[ok], group.loc[ok, group_column])
            else:
                entry["metric_sd"] = float(scores[ok].std(ddof=1)) if ok.sum() > 1 else None
            entry["extra"] = {c: (float(_number(group[c]).mean()) if c in group.columns
                                  and _number(group[c]).notna().any() else None) for c in extra}
            for name, columns in (("tokens", ("total_tokens",)), ("cost", ("cost_usd",)),
                                  ("seconds", ("agent_seconds", "seconds"))):
                column = next((c for c in columns if c in group.columns), None)
                values_ = _number(group[column]).dropna() if column else pd.Series([], dtype=float)
                entry[name] = float(values_.mean()) if len(values_) else None
            entry["failures"] = int((group["status"] != "ok").sum()) if "status" in group.columns else 0
            entries.append(entry)
    return present, entries


# -- trajectory ----------------------------------------------------------------------------------------------------

@dataclass
class StepView:
    """One trajectory step prepared for display."""

    index: int
    step_id: Any
    source: str
    timestamp: str | None
    seconds: float | None          # until the next step's timestamp
    message: str
    reasoning: str
    calls: list[dict]              # {name, arguments (pretty JSON text), output, is_error, images}
    loose_results: list[dict]      # results answering no call of this step
    prompt_tokens: int | None
    completion_tokens: int | None
    cost_usd: float | None
    error: bool
    agent_ordinal: int = 0         # 1-based among agent steps (the model call it is linked to); 0 otherwise

    @property
    def summary(self) -> str:
        text = (self.message or self.reasoning).strip().splitlines()
        first = text[0] if text else ""
        return first[:160] + ("…" if len(first) > 160 else "")


def _time(value: Any) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        return pd.Timestamp(value).timestamp()
    except (ValueError, TypeError):
        return None


def _count(value: Any) -> Any:
    """A number from a trajectory field, or None (a malformed value is not shown rather than raised)."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else None


def _is_error(result: dict | None) -> bool:
    extra = result.get("extra") if isinstance(result, dict) else None
    return bool(isinstance(extra, dict) and extra.get("is_error"))


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, dict) and len(arguments) == 1:
        only = next(iter(arguments.values()))
        if isinstance(only, str):
            return only
    if isinstance(arguments, dict) and "command" in arguments and isinstance(arguments["command"], str):
        rest = {k: v for k, v in arguments.items() if k not in ("command", "description")}
        return arguments["command"] + (("\n" + json.dumps(rest, indent=1)) if rest else "")
    try:
        return json.dumps(arguments, indent=1, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(arguments)


def step_views(trajectory: dict | None) -> list[StepView]:
    """The steps of an ATIF trajectory dict, read leniently (a malformed step shows what it has)."""
    raw = trajectory_steps(trajectory)
    times = [_time(s.get("timestamp")) for s in raw]
    out: list[StepView] = []
    for i, step in enumerate(raw):
        results = step.get("observation", {}).get("results") if isinstance(step.get("observation"), dict) else None
        results = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
        by_id = {r.get("source_call_id"): r for r in results if isinstance(r.get("source_call_id"), str)}
        unmatched = [r for r in results if not isinstance(r.get("source_call_id"), str)]
        used: set[int] = set()
        calls = []
        for call in step.get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            result = by_id.get(call.get("tool_call_id"))
            if result is None and unmatched:
                result = unmatched.pop(0)
            if result is not None:
                used.add(id(result))
            content = result.get("content") if result else None
            calls.append({"name": str(call.get("function_name") or "?"), "arguments": call.get("arguments"),
                          "arguments_text": _arguments_text(call.get("arguments")),
                          "output": content_text(content) if result else None, "is_error": _is_error(result),
                          "images": content_images(content)})
        loose = [{"output": content_text(r.get("content")), "is_error": _is_error(r),
                  "images": content_images(r.get("content"))} for r in results if id(r) not in used]
        metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else {}
        nxt = next((t for t in times[i + 1:] if t is not None), None)
        seconds = (nxt - times[i]) if nxt is not None and times[i] is not None else None
        extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        message = step.get("message")
        out.append(StepView(
            index=i, step_id=_count(step.get("step_id")) or i + 1, source=str(step.get("source") or "?"),
            timestamp=step.get("timestamp") if isinstance(step.get("timestamp"), str) else None,
            seconds=seconds, message=message if isinstance(message, str) else content_text(message),
            reasoning=step.get("reasoning_content") if isinstance(step.get("reasoning_content"), str) else "",
            calls=calls, loose_results=loose,
            prompt_tokens=_count(metrics.get("prompt_tokens")),
            completion_tokens=_count(metrics.get("completion_tokens")), cost_usd=_count(metrics.get("cost_usd")),
            error=any(c["is_error"] for c in calls) or any(r["is_error"] for r in loose) or bool(extra.get("error"))))
    ordinal = 0
    for view in out:
        if view.source == "agent":
            ordinal += 1
            view.agent_ordinal = ordinal
    return out


def read_trajectory(folder: Path | None) -> dict | None:
    """``trajectory.json`` of an episode folder, or None when missing or not JSON."""
    if folder is None:
        return None
    try:
        with open(folder / "trajectory.json", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


# -- plots the agent made ----------------------------------------------------------------------------------------

@dataclass
class Plot:
    """An image in the episode's workspace: where it was first named and whether a read tool opened it."""

    path: str                 # relative POSIX path in the workspace
    size: int
    step_index: int | None    # first step whose tool call or output names it
    inspected: bool


def workspace_images(folder: Path | None) -> dict[str, int]:
    """Image files of ``folder/workspace`` (relative path -> bytes), tool caches skipped."""
    found: dict[str, int] = {}
    if folder is None or not (folder / "workspace").is_dir():
        return found
    root = folder / "workspace"
    for relative in walk_files(root, SKIPPED_DIRS).files:  # bounded: the agent wrote this tree
        if relative.lower().endswith(IMAGE_EXTENSIONS):
            path = regular_file(root, relative)
            if path is not None:
                found[relative] = path.stat().st_size
    return found


def _names(text: str, path: str) -> bool:
    return path in text or f"/{Path(path).name}" in text or text.strip() == Path(path).name


def plots(folder: Path | None, steps: list[StepView]) -> list[Plot]:
    """The workspace images with the step that made or first named them and whether they were inspected.

    Display heuristic (the counted metric is the metric extractors' own): an image is
    inspected when a read tool's arguments name it or a tool result carries it
    as an image part, and that result is not an error.
    """
    out = []
    for path, size in sorted(workspace_images(folder).items()):
        first, inspected = None, False
        for step in steps:
            for call in step.calls:
                named = _names(call["arguments_text"], path) or _names(call["output"] or "", path)
                shown = any(_names(image, path) for image in call["images"])
                if (named or shown) and first is None:
                    first = step.index
                read = call["name"].split("__")[-1].lower() in READ_TOOLS and _names(call["arguments_text"], path)
                if (read or shown) and not call["is_error"]:
                    inspected = True
        out.append(Plot(path, size, first, inspected))
    return out

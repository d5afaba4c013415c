"""Dr-CiK episode page for ``harness view`` (``register_view_pages``).

A Dr-CiK row is one forecaster × context condition × task (``episode``
``<forecaster>/<context>/<benchmark_id>``).  The page shows, for that
forecaster and task, one forecast fan per context condition found in the
run: the history, the sample paths' 5–95 % and 25–75 % bands and median
(an episode folder's ``samples.npy``, or a ``harness forecast`` run's
``samples/<forecaster>/<context>.npz``, key ``benchmark_id``) and -- only
when the viewer may reveal answers and the task's labels are public -- the
realised future, with each condition's sCRPS.  Below, the task's documents
(sorted by id: file order leaks roles) and, revealed only, each document's
role and distractor subtype and the ground-truth evidence items.

Choice written down here: the history drawn is the last
:data:`HISTORY_HORIZONS` × H points (the whole history can be thousands of
points; the fan is what the page is for).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from harness.hookspecs import hookimpl
from harness.view import EpisodeView, Panel, ViewPage
from harness.view.html import Markup, escape, fan_svg

HISTORY_HORIZONS = 3
#: The leaderboard's condition columns.
CONDITIONS = ("context",)


def _tasks_values(value) -> list[str]:
    """Every string under a ``tasks`` key of run.json (the spec's task source: ``sample`` or a folder)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "tasks" and isinstance(item, str):
                found.append(item)
            else:
                found += _tasks_values(item)
    elif isinstance(value, list):
        for item in value:
            found += _tasks_values(item)
    return found


@lru_cache(maxsize=8)
def _folder_tasks(folder: str) -> dict:
    from plugins.tasks.drcik.loader import load_tasks

    return {t.benchmark_id: t for t in load_tasks(folder)}


def _task(episode: EpisodeView, benchmark_id: str):
    """The task of a row: from run.json's ``tasks`` list (``harness forecast`` runs: each task's source file),
    else from the spec's ``tasks`` value (``sample`` or a release folder)."""
    from plugins.tasks.drcik.loader import SAMPLE_DIR, load_task_file

    for entry in episode.run.get("tasks") or []:
        if isinstance(entry, dict) and entry.get("benchmark_id") == benchmark_id and entry.get("source"):
            return load_task_file(entry["source"])
    for value in dict.fromkeys(_tasks_values(episode.run)):
        folder = SAMPLE_DIR if value == "sample" else Path(value)
        if Path(folder).exists():
            task = _folder_tasks(str(folder)).get(benchmark_id)
            if task is not None:
                return task
    return None


def _samples(root: Path, forecaster: str, context: str, benchmark_id: str, episode: str | None) -> np.ndarray | None:
    """The (S, H) sample paths: ``episodes/<episode>/samples.npy`` (an episode folder per row), else
    ``samples/<forecaster>/<context>.npz`` keyed by benchmark_id (``harness forecast`` runs)."""
    if isinstance(episode, str) and (root / "episodes" / episode / "samples.npy").is_file():
        return np.asarray(np.load(root / "episodes" / episode / "samples.npy", allow_pickle=False), float)
    path = root / "samples" / forecaster / f"{context}.npz"
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as data:
        return np.asarray(data[benchmark_id], float) if benchmark_id in data.files else None


def render(episode: EpisodeView) -> list[Panel]:
    """The Dr-CiK panels of one row (see the module docstring)."""
    row = episode.row
    forecaster, context, benchmark_id = row.get("forecaster"), row.get("context"), row.get("benchmark_id")
    if not (forecaster and benchmark_id):
        return [Panel("Dr-CiK", Markup('<p class="hint">This row names no forecaster and task.</p>'))]
    task = _task(episode, benchmark_id)
    if task is None:
        return [Panel("Dr-CiK", Markup(f'<p class="hint">Task {escape(benchmark_id)} is not listed in run.json.</p>'))]
    horizon = task.horizon
    history = task.history.iloc[-HISTORY_HORIZONS * horizon:]
    hx = history.index.asi8 / 1e9
    fx = task.future_index.asi8 / 1e9
    show_future = episode.reveal and task.future is not None
    rows = episode.rows
    same = rows[(rows["forecaster"] == forecaster) & (rows["benchmark_id"] == benchmark_id)] \
        if {"forecaster", "benchmark_id"} <= set(rows.columns) else rows.iloc[:0]
    contexts = list(dict.fromkeys(list(same["context"]) if "context" in same.columns else [context]))
    fans = []
    for name in contexts:
        match = same[same["context"] == name]
        samples = _samples(episode.run_root, forecaster, name, benchmark_id,
                           match["episode"].iloc[0] if "episode" in match.columns and len(match) else None)
        current = " current" if name == context else ""
        if samples is None:
            fans.append(f'<div class="sample{current}"><b>{escape(name)}</b>: no samples in this run</div>')
            continue
        score = match["scrps"].iloc[0] if "scrps" in match.columns and len(match) else None
        caption = (f"sCRPS {score:.3f}" if episode.reveal and isinstance(score, float) and np.isfinite(score)
                   else f"{samples.shape[0]} sample paths")
        chart = fan_svg(hx, history.to_numpy(float), fx, samples, task.future.to_numpy(float) if show_future else None,
                        title=f"{forecaster} · {name}")
        fans.append(f'<div class="sample forecast{current}" data-context="{escape(name)}">{chart}'
                    f'<div>{escape(name)} · {escape(caption)}</div></div>')
    legend = ("history (black), forecast median (dark blue), 25–75 % and 5–95 % sample bands"
              + (", realised future (red, dashed)" if show_future else
                 "; the realised future is not part of this export" if task.future is not None else
                 "; this task's future is hidden"))
    panels = [Panel(f"Forecast fans · {task.benchmark_id} · {forecaster}", Markup(
        f'<p class="hint">{escape(task.target_description[:400])}</p><p class="hint">{escape(legend)}</p>'
        f'<div class="fans">{"".join(fans)}</div>'))]
    docs = []
    for doc in sorted(task.documents, key=lambda d: d.document_id):
        role = ""
        if episode.reveal:
            role = (f' <span class="answer doc-role">{escape(doc.role)}'
                    + (f" · {escape(doc.paper_subtype or doc.subtype)}" if doc.subtype else "") + "</span>")
        docs.append(f'<li id="doc-{escape(doc.document_id)}"><b>{escape(doc.document_id)}</b>{role}'
                    f'<div class="hint">{escape(doc.content[:300])}{"…" * (len(doc.content) > 300)}</div></li>')
    body = (f'<details><summary>{len(docs)} documents, sorted by id</summary><ol class="docs">{"".join(docs)}'
            f'</ol></details>' if docs else '<p class="hint">No documents.</p>')
    if episode.reveal and task.evidence:
        body += '<h3>Ground-truth evidence</h3><ol class="evidence">' + "".join(
            f'<li class="answer"><b>{escape(item.id)}</b>: {escape(item.text)}</li>'
            for item in task.evidence) + "</ol>"
    panels.append(Panel(f"Documents ({len(task.documents)})", Markup(body)))
    return panels


def labels_public(row: dict) -> bool:
    """Hidden-label (expert) tasks are never exported with answers."""
    return row.get("scale_status") != "labels_hidden"


PAGE = ViewPage(template="drcik", metric="scrps", metric_label="sCRPS", lower_is_better=True,
                conditions=CONDITIONS, agent_column="forecaster", render=render, labels_public=labels_public)


@hookimpl
def register_view_pages(register):
    """The Dr-CiK leaderboard (sCRPS by forecaster and context condition) and episode page."""
    register(PAGE)

"""The viewer's pages as a path -> content mapping, shared by the server and the static export.

Paths (every link is relative, so a ``--bundle`` works over ``file://``)::

    index.html                              runs and one leaderboard per template
    runs/<run>/index.html                   the run's episodes
    runs/<run>/<episode>/index.html         episode: facts, template panels, plots, trajectory summaries
    runs/<run>/<episode>/steps-<k>.js       trajectory step bodies, CHUNK steps per file
    runs/<run>/<episode>/ws/<path>          an image the agent made in its workspace
    static/view.css, static/view.js

Only these paths exist: the server never maps a URL onto the file system.
"""

from __future__ import annotations

import json
import mimetypes
import threading
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterator

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from harness.view.data import (MAX_IMAGE_BYTES, Plot, Run, StepView, leaderboard, plots as find_plots,
                               read_trajectory, step_views, workspace_images)
from harness.view.html import highlight_numbers
from harness.view.pages import EpisodeView, Panel, ViewPage, registered_pages

#: Trajectory steps per ``steps-<k>.js`` file.
CHUNK = 25
#: Characters of one tool output or argument shown; the rest is cut with a note.
CLIP = 20_000
#: Characters of the run index's Tasks cell before the list is cut (the full list is its title).
NAMES_CELL = 200
_STATIC = ("view.css", "view.js")


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _num(value: Any, digits: int) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pm(mean: float | None, sd: float | None) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f} ± {sd:.3f}" if sd is not None else f"{mean:.3f}"


def _sortval(value: Any, negate: bool = False) -> str:
    if value is None:
        return ""
    return str(-value if negate else value)


def _clip(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= CLIP else text[:CLIP] + f"\n… ({len(text) - CLIP:,} more characters not shown)"


def _names_cell(names: list[str], limit: int = NAMES_CELL) -> tuple[str, str | None]:
    """(text, title) of a cell listing ``names``: whole names, comma-separated, as many as fit in
    ``limit`` characters, then "… and N more"; the title is the full list when some were cut, else None."""
    shown: list[str] = []
    for name in names:
        if shown and len(", ".join(shown + [name])) > limit:
            break
        shown.append(name)
    if len(shown) == len(names):
        return ", ".join(names), None
    return f"{', '.join(shown)}, … and {len(names) - len(shown)} more", ", ".join(names)


@dataclass
class _Episode:
    view: EpisodeView
    steps: list[StepView]
    plots: list[Plot]


class Site:
    """Every page of a set of runs.

    ``reveal``: whether template panels may show answers (the server: yes; a
    bundle: only with ``--with-answers``, and never for rows whose template's
    ``labels_public(row)`` is false).  ``pages``: view pages by template
    (default: the registered ones).
    """

    def __init__(self, runs: list[Run], reveal: bool = True, pages: dict[str, ViewPage] | None = None):
        self.runs = {run.id: run for run in runs}
        self.reveal = reveal
        self.pages = registered_pages() if pages is None else pages
        self.env = jinja2.Environment(loader=jinja2.PackageLoader("harness.view", "templates"),
                                      autoescape=True, trim_blocks=False, lstrip_blocks=False)
        self.env.globals.update(fmt=_fmt, num=_num, pm=_pm, sortval=_sortval, clip=_clip,
                                numbers=highlight_numbers, figure=self._figure)
        self._episodes: OrderedDict[tuple[str, str], _Episode] = OrderedDict()
        self._lock = threading.Lock()

    # -- routing --------------------------------------------------------------------------------------------------
    def render(self, path: str) -> tuple[bytes, str] | None:
        """The content and media type at ``path`` (relative, no leading slash), or None when there is none."""
        parts = [p for p in path.split("/") if p]
        if not parts or parts == ["index.html"]:
            return self._html(self.index())
        if parts[0] == "static" and len(parts) == 2 and parts[1] in _STATIC:
            data = resources.files("harness.view").joinpath("static").joinpath(parts[1]).read_bytes()
            return data, "text/css" if parts[1].endswith(".css") else "text/javascript"
        if parts[0] != "runs" or len(parts) < 2 or parts[1] not in self.runs:
            return None
        run = self.runs[parts[1]]
        rest = parts[2:]
        if not rest or rest == ["index.html"]:
            return self._html(self.run_page(run))
        if run.index_of(rest[0]) is None:
            return None
        slug, rest = rest[0], rest[1:]
        try:
            return self._episode_path(run, slug, rest)
        except Exception as exc:  # noqa: BLE001 - a broken episode is shown as broken, the rest of the site stands
            if rest and rest != ["index.html"]:
                return None
            return self._html(self.broken_page(run, slug, exc))

    def _episode_path(self, run: Run, slug: str, rest: list[str]) -> tuple[bytes, str] | None:
        if not rest or rest == ["index.html"]:
            return self._html(self.episode_page(run, slug))
        if len(rest) == 1 and rest[0].startswith("steps-") and rest[0].endswith(".js"):
            try:
                chunk = int(rest[0][len("steps-"):-len(".js")])
            except ValueError:
                return None
            body = self.steps_script(run, slug, chunk)
            return None if body is None else (body.encode("utf-8"), "text/javascript")
        if rest[0] == "ws" and len(rest) > 1:
            return self.workspace_file(run, slug, "/".join(rest[1:]))
        return None

    def paths(self) -> Iterator[str]:
        """Every path of the site (what a bundle writes)."""
        yield "index.html"
        for name in _STATIC:
            yield f"static/{name}"
        for run in self.runs.values():
            yield f"runs/{run.id}/index.html"
            for slug in run.episode_slugs:
                yield f"runs/{run.id}/{slug}/index.html"
                try:
                    episode = self._episode(run, slug)
                except Exception:  # noqa: BLE001 - its index page says why (broken_page); no other files
                    continue
                for chunk in range((len(episode.steps) + CHUNK - 1) // CHUNK):
                    yield f"runs/{run.id}/{slug}/steps-{chunk}.js"
                for plot in episode.plots:
                    if plot.size <= MAX_IMAGE_BYTES:
                        yield f"runs/{run.id}/{slug}/ws/{plot.path}"

    @staticmethod
    def _html(text: str) -> tuple[bytes, str]:
        return text.encode("utf-8"), "text/html; charset=utf-8"

    # -- pages ----------------------------------------------------------------------------------------------------
    def index(self) -> str:
        runs, templates = [], []
        for run in self.runs.values():
            rows = run.rows
            found = [t for t in pd.unique(rows["template"].dropna())] if "template" in rows.columns else []
            templates += [t for t in found if t not in templates]
            tasks, tasks_title = _names_cell([str(t) for t in pd.unique(rows["task"].dropna())]
                                             if "task" in rows.columns else [])
            runs.append({"id": run.id, "root": str(run.root), "n": len(rows), "templates": ", ".join(map(str, found)),
                         "tasks": tasks, "tasks_title": tasks_title,
                         "failures": int((rows["status"] != "ok").sum()) if "status" in rows.columns else 0})
        boards = []
        for template in templates:
            page = self.pages.get(template, ViewPage(template))
            conditions, entries = leaderboard(list(self.runs.values()), template, page.metric, page.conditions,
                                              page.agent_column)
            label = page.metric_label or page.metric or "score"
            direction = "lower is better" if page.lower_is_better else "higher is better"
            note = (f"{label}: mean ± sample SD over episodes ({direction}); tokens, cost and time are means per "
                    f"episode; failures count episodes whose status is not ok. Click a header to sort.")
            if template not in self.pages:
                note = f"No view page is registered for template {template!r}: counts only. " + note
            boards.append({"template": template, "conditions": conditions, "entries": entries, "note": note,
                           "metric_label": label, "lower_is_better": page.lower_is_better})
        return self.env.get_template("index.html").render(title="Runs", root="", crumbs=[], reveal=self.reveal,
                                                          runs=runs, boards=boards)

    def run_page(self, run: Run) -> str:
        rows = []
        for i, slug in enumerate(run.episode_slugs):
            row = run.row(i)
            page = self.pages.get(row.get("template"), ViewPage(""))
            score = row.get(page.metric) if page.metric else None
            score = score if isinstance(score, (int, float)) and not isinstance(score, bool) else None
            seconds = row.get("agent_seconds", row.get("seconds"))
            rows.append({"slug": slug, "episode": row.get("episode") or slug, "template": row.get("template"),
                         "task": row.get("task"), "agent": row.get(page.agent_column or "profile") or
                         row.get("profile") or "–", "status": row.get("status"), "score": score,
                         "score_text": "–" if score is None else f"{page.metric_label or page.metric}: {score:.3f}",
                         "tokens": row.get("total_tokens"), "cost": row.get("cost_usd"), "seconds": seconds,
                         "error": str(row.get("error") or "")[:160]})
        created = run.meta.get("created") or run.meta.get("started")
        return self.env.get_template("run.html").render(
            title=f"Run {run.id}", root="../../", crumbs=[(run.id, None)], reveal=self.reveal, run=run, rows=rows,
            created=created if isinstance(created, str) else None)

    def _episode(self, run: Run, slug: str) -> _Episode:
        """The parsed episode (the last 8 are kept; the server renders from several threads)."""
        with self._lock:
            return self._load_episode(run, slug)

    def _load_episode(self, run: Run, slug: str) -> _Episode:
        key = (run.id, slug)
        if key in self._episodes:
            self._episodes.move_to_end(key)
            return self._episodes[key]
        index = run.index_of(slug)
        row = run.row(index)
        page = self.pages.get(row.get("template"))
        try:
            public = page is None or bool(page.labels_public(row))
        except Exception:  # noqa: BLE001 - a plugin that cannot tell gets no answers exported
            public = False
        reveal = self.reveal and public
        folder = run.folder(index)
        steps = step_views(read_trajectory(folder))
        view = EpisodeView(run.root, run.meta, row, run.rows, folder, reveal)
        episode = _Episode(view, steps, find_plots(folder, steps))
        self._episodes[key] = episode
        while len(self._episodes) > 8:
            self._episodes.popitem(last=False)
        return episode

    def _figure(self, plot: Plot) -> Markup:
        mark = ('<span class="inspected">inspected</span>' if plot.inspected
                else '<span class="not-inspected">not inspected</span>')
        if plot.size > MAX_IMAGE_BYTES:
            return Markup(f'<figure class="plot"><figcaption>{escape(plot.path)} ({plot.size:,} bytes, not shown)'
                          f' · {mark}</figcaption></figure>')
        image = f'<img loading="lazy" src="ws/{escape(plot.path)}" alt="{escape(plot.path)}">'
        return Markup(f'<figure class="plot">{image}'
                      f'<figcaption>{escape(plot.path)} · {mark}</figcaption></figure>')

    def episode_page(self, run: Run, slug: str) -> str:
        episode = self._episode(run, slug)
        view, row = episode.view, episode.view.row
        page = self.pages.get(row.get("template"))
        panels: list[Panel] = []
        if page is not None and page.render is not None:
            try:
                panels = list(page.render(view))
            except Exception as exc:  # noqa: BLE001 - a plugin's page never breaks the viewer
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                panels = [Panel(f"{row.get('template')} page", Markup(
                    f'<div class="error-box">the {escape(row.get("template"))} page failed: {escape(detail)}</div>'))]
        panels = [Panel(p.title, Markup(p.html) if not isinstance(p.html, Markup) else p.html) for p in panels]
        agent = page.agent_column if page and row.get(page.agent_column) is not None else "profile"
        facts = [(label, _fmt(row.get(column))) for label, column in (
            ("task", "task"), ("template", "template"), ("agent", agent),
            ("model", "model"), ("sandbox", "sandbox"), ("status", "status"))
            if row.get(column) is not None]
        if page is not None and page.metric and row.get(page.metric) is not None:
            facts.append((page.metric_label or page.metric, _fmt(row.get(page.metric))))
        for label, column, digits in (("tokens", "total_tokens", 0), ("cost (USD)", "cost_usd", 4),
                                      ("time (s)", "agent_seconds", 1)):
            if isinstance(row.get(column), (int, float)):
                facts.append((label, _num(row[column], digits)))
        steps = episode.steps
        totals = None
        if steps:
            calls = sum(len(s.calls) for s in steps)
            errors = sum(1 for s in steps if s.error)
            agent = sum(1 for s in steps if s.source == "agent")
            totals = f"{agent} agent steps · {calls} tool calls · {errors} with errors"
        return self.env.get_template("episode.html").render(
            title=str(row.get("episode") or slug), root="../../../",
            crumbs=[(run.id, "../index.html"), (str(row.get("episode") or slug), None)], reveal=view.reveal,
            row=row, facts=facts, panels=panels, plots=episode.plots, prompt=view.read_text("prompt.txt"),
            steps=steps, chunk_size=CHUNK, chunks=(len(steps) + CHUNK - 1) // CHUNK, totals=totals,
            folder=view.folder)

    def broken_page(self, run: Run, slug: str, exc: BaseException) -> str:
        """The page of an episode that cannot be shown (its files are unreadable or too large to list): the
        reason, in the site's frame."""
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()[:300]
        body = Markup(f'<div class="error-box">episode {escape(slug)} cannot be shown: {escape(detail)}</div>')
        return self.env.get_template("episode.html").render(
            title=slug, root="../../../", crumbs=[(run.id, "../index.html"), (slug, None)], reveal=False,
            row={"status": "broken"}, facts=[("status", "cannot be shown")], panels=[Panel("episode", body)],
            plots=[], prompt=None, steps=[], chunk_size=CHUNK, chunks=0, totals=None, folder=None)

    def steps_script(self, run: Run, slug: str, chunk: int) -> str | None:
        """``harnessView.steps(k, [[index, html], ...])`` for steps ``k*CHUNK`` ... (None past the end)."""
        episode = self._episode(run, slug)
        part = episode.steps[chunk * CHUNK:(chunk + 1) * CHUNK] if chunk >= 0 else []
        if not part:
            return None
        plots_at: dict[int, list[Plot]] = {}
        for plot in episode.plots:
            if plot.step_index is not None:
                plots_at.setdefault(plot.step_index, []).append(plot)
        template = self.env.get_template("steps.html")
        items = [[s.index, template.render(steps=[s], plots_at=plots_at)] for s in part]
        # "</" escaped so a step's text can never close the script element it is loaded into
        payload = json.dumps(items).replace("</", "<\\/")
        return f"harnessView.steps({chunk}, {payload});\n"

    def workspace_file(self, run: Run, slug: str, path: str) -> tuple[bytes, str] | None:
        """An image the agent made (only listed images, at most MAX_IMAGE_BYTES)."""
        folder = run.folder(run.index_of(slug))
        images = workspace_images(folder)
        if path not in images or images[path] > MAX_IMAGE_BYTES:
            return None
        media = mimetypes.guess_type(path)[0] or "application/octet-stream"
        return (folder / "workspace" / path).read_bytes(), media

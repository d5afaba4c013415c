# Over 500 lines: the site is one router over every page kind (index, run, episode, compare, calls, bundle).
"""The viewer's pages as a path -> content mapping, shared by the server and the static export.

Paths (every link is relative, so a ``--bundle`` works over ``file://``)::

    index.html                              runs and one leaderboard per template
    runs/<run>/index.html                   the run's episodes
    runs/<run>/<episode>/index.html         episode: facts, template panels, plots, trajectory summaries
    runs/<run>/<episode>/steps-<k>.js       trajectory step bodies, CHUNK steps per file
    runs/<run>/<episode>/ws/<path>          an image the agent made in its workspace
    folders/<slug>/index.html               a folder page (not a run; writable ones never in a bundle)
    static/view.css, static/view.js

Only these paths exist: the server never maps a URL onto the file system.
"""

from __future__ import annotations

import json
import math
import re
import mimetypes
import secrets
import threading
import time
import traceback
from collections import OrderedDict
from dataclasses import dataclass
from importlib import resources
from typing import Any, Iterator

import jinja2
import pandas as pd
from markupsafe import Markup, escape

from harness.view.data import (MAX_IMAGE_BYTES, Plot, Run, StepView, leaderboard, load_run, plots as find_plots,
                               read_trajectory, run_stamp, slug as file_slug,
                               step_views, workspace_images)
from harness.view.calls import CallSummary, call_detail, call_index, proxy_logs
from harness.view.folders import Folder, folder_html, run_post
from harness.view.html import highlight_numbers
from harness.view.pages import EpisodeView, Panel, ViewPage, registered_pages

#: Trajectory steps per ``steps-<k>.js`` file.
CHUNK = 25
#: Characters of one tool output or argument shown; the rest is cut with a note.
CLIP = 20_000
#: Characters of the run index's Tasks cell before the list is cut (the full list is its title).
NAMES_CELL = 200
_STATIC = ("view.css", "view.js")
#: Seconds between two looks at a run folder by a live viewer (pages poll every 2 s).
LIVE_CHECK = 1.0


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


def _sortval(value: Any) -> str:
    return "" if value is None else str(value)


#: An absolute local path inside a value (``/home/me/runs/x``, ``C:\runs\x``); a bundle never carries one.
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(?:/(?:[\w.+@-]+/)+[\w.+@-]*|[A-Za-z]:\\[^\s\"']+)")


def _last_part(match: re.Match) -> str:
    parts = [p for p in re.split(r"[/\\]", match.group()) if p]
    return f"<{parts[-1] if parts else 'path'}>"


def scrub_paths(value: Any) -> Any:
    """``value`` with every absolute local path replaced by its last part in angle brackets (strings only)."""
    return ABSOLUTE_PATH.sub(_last_part, value) if isinstance(value, str) else value


def _heading(column: str) -> str:
    return column.replace("_", " ")


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
    (default: the registered ones).  ``folders``: folders shown by a folder page (:mod:`.folders`; a
    bundle leaves out the writable ones); ``token``: the per-launch token of the writes (None in a bundle).
    """

    def __init__(self, runs: list[Run], reveal: bool = True, pages: dict[str, ViewPage] | None = None,
                 bundle: bool = False, live: bool = False, folders: list[Folder] = ()):
        self.reveal = reveal
        self.bundle = bundle
        self.folders = {f.slug: f for f in folders if not (bundle and f.page.writable)}
        self.token = None if bundle else secrets.token_urlsafe(32)
        self._post_lock = threading.Lock()
        self.live = live and not bundle
        self._stamps = {run.id: (run_stamp(run.root), time.monotonic()) for run in runs} if self.live else {}
        self.pages = registered_pages() if pages is None else pages
        self.runs = {run.id: self._with_run_columns(run) for run in runs}
        self._comparisons: dict[str, dict] | None = None
        self._call_cache: dict[tuple[str, str], tuple[tuple, list[CallSummary]]] = {}
        self.env = jinja2.Environment(loader=jinja2.PackageLoader("harness.view", "templates"),
                                      autoescape=True, trim_blocks=False, lstrip_blocks=False)
        self.env.globals.update(live=self.live, fmt=_fmt, num=_num, pm=_pm, sortval=_sortval, clip=_clip,
                                numbers=highlight_numbers, figure=self._figure)
        self._episodes: OrderedDict[tuple[str, str], _Episode] = OrderedDict()
        self._lock = threading.Lock()

    def _with_run_columns(self, run: Run) -> Run:
        """``run`` with each template's ``run_columns`` added to its rows (a failing plugin adds none)."""
        if "template" not in run.rows.columns:
            return run
        rows = run.rows.copy()
        for template in pd.unique(rows["template"].dropna()):
            page = self.pages.get(template)
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

    def refresh(self) -> None:
        """Live viewer: re-read every run whose folder changed (:func:`run_stamp`), at most once per
        :data:`LIVE_CHECK` seconds per run; its cached episodes and the comparison pages are rebuilt."""
        if not self.live:
            return
        for run_id, run in list(self.runs.items()):
            stamp, checked = self._stamps.get(run_id, (None, 0.0))
            if time.monotonic() - checked < LIVE_CHECK:
                continue
            now = run_stamp(run.root)
            self._stamps[run_id] = (now, time.monotonic())
            if now == stamp:
                continue
            try:
                fresh = self._with_run_columns(load_run(run.root, run_id))
            except Exception:  # noqa: BLE001 - a half-written file: keep what is shown, try again later
                self._stamps[run_id] = (stamp, time.monotonic())
                continue
            with self._lock:
                self.runs[run_id] = fresh
                self._comparisons = None
                for key in [k for k in self._episodes if k[0] == run_id]:
                    del self._episodes[key]

    def _hidden(self, row: dict, page: ViewPage | None, reveal: bool) -> dict:
        """The row as a page shows it: answer columns left out unless revealed; in a bundle, no local path."""
        hidden = set(page.hidden_columns) if page is not None and not reveal else set()
        prefixes = tuple(h[:-1] for h in hidden if h.endswith("*"))
        return {k: (scrub_paths(v) if self.bundle else v) for k, v in row.items()
                if k not in hidden and not (prefixes and k.startswith(prefixes))}

    # -- routing --------------------------------------------------------------------------------------------------
    def render(self, path: str) -> tuple[bytes, str] | None:
        """The content and media type at ``path`` (relative, no leading slash), or None when there is none."""
        parts = [p for p in path.split("/") if p]
        if self.live and (not parts or parts[-1].endswith(".html")):
            self.refresh()
        if not parts or parts == ["index.html"]:
            return self._html(self.index())
        if parts[0] == "static" and len(parts) == 2 and parts[1] in _STATIC:
            data = resources.files("harness.view").joinpath("static").joinpath(parts[1]).read_bytes()
            return data, "text/css" if parts[1].endswith(".css") else "text/javascript"
        if parts[0] == "compare":
            if parts[1:] in ([], ["index.html"]):
                return self._html(self.compare_index())
            if len(parts) >= 2 and parts[1] in self.comparisons() and parts[2:] in ([], ["index.html"]):
                return self._html(self.compare_page(parts[1]))
            return None
        if parts[0] == "folders":
            folder = self.folders.get(parts[1]) if len(parts) > 1 else None
            if folder is None or parts[2:] not in ([], ["index.html"]):
                return None
            return self._html(folder_html(self.env, folder, self.token, self.reveal))
        if parts[0] != "runs" or len(parts) < 2 or parts[1] not in self.runs:
            return None
        run = self.runs[parts[1]]
        rest = parts[2:]
        if not rest or rest == ["index.html"]:
            return self._html(self.run_page(run))
        if rest == ["rows.json"]:
            return self.rows_json(run).encode("utf-8"), "application/json"
        if run.index_of(rest[0]) is None:
            return None
        slug, rest = rest[0], rest[1:]
        try:
            return self._episode_path(run, slug, rest)
        except Exception as exc:  # noqa: BLE001 - a broken episode is shown as broken, the rest of the site stands
            if rest and rest != ["index.html"]:
                return None
            return self._html(self.broken_page(run, slug, exc))

    @property
    def writable(self) -> bool:
        """Whether a page of the site can write (a writable folder page is shown)."""
        return not self.bundle and any(f.page.writable for f in self.folders.values())

    def post(self, path: str, body: dict) -> tuple[int, Any] | None:
        """A write: ``(status, JSON answer)`` of ``POST path`` (``folders/<slug>/<action>``) with ``body``, or
        None when there is no such action.  The server calls it only after its Origin and token checks."""
        parts = [p for p in path.split("/") if p]
        if self.bundle or len(parts) != 3 or parts[0] != "folders" or parts[1] not in self.folders:
            return None
        with self._post_lock:  # one write at a time (handlers append to files)
            return run_post(self.folders[parts[1]], parts[2], body)

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
        if rest == ["trajectory.json"]:
            found = self.trajectory_json(run, slug)
            return None if found is None else (found.encode("utf-8"), "application/json")
        if not self.bundle and rest == ["calls.html"]:  # raw model calls: the local viewer only, on demand
            return self._html(self.calls_fragment(run, slug))
        if not self.bundle and len(rest) == 1 and re.fullmatch(r"call-\d+\.html", rest[0]):
            found = self.call_fragment(run, slug, int(rest[0][5:-5]))
            return None if found is None else self._html(found)
        if rest[0] == "ws" and len(rest) > 1:
            return self.workspace_file(run, slug, "/".join(rest[1:]))
        return None

    def paths(self) -> Iterator[str]:
        """Every path of the site (what a bundle writes)."""
        yield "index.html"
        for name in _STATIC:
            yield f"static/{name}"
        for key in self.folders:
            yield f"folders/{key}/index.html"
        if self.comparisons():
            yield "compare/index.html"
            for key in self.comparisons():
                yield f"compare/{key}/index.html"
        for run in self.runs.values():
            yield f"runs/{run.id}/index.html"
            yield f"runs/{run.id}/rows.json"
            for slug in run.episode_slugs:
                yield f"runs/{run.id}/{slug}/index.html"
                try:
                    episode = self._episode(run, slug)
                except Exception:  # noqa: BLE001 - its index page says why (broken_page); no other files
                    continue
                yield f"runs/{run.id}/{slug}/trajectory.json"
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
            runs.append({"id": run.id, "root": None if self.bundle else str(run.root), "n": len(rows),
                         "templates": ", ".join(map(str, found)), "tasks": tasks, "tasks_title": tasks_title,
                         "failures": int((rows["status"] != "ok").sum()) if "status" in rows.columns else 0})
        boards = []
        for template in templates:
            page = self.pages.get(template, ViewPage(template))
            boards += self._board(template, page, page.conditions, split=False)
            if page.group_column:
                boards += self._board(template, page, (page.group_column, *page.conditions), split=True)
        folders = [(key, f.page.title) for key, f in self.folders.items()]
        return self.env.get_template("index.html").render(title="Runs", root="", crumbs=[], reveal=self.reveal,
                                                          runs=runs, boards=boards, bundle=self.bundle, folders=folders,
                                                          comparisons=len(self.comparisons()))

    def _board(self, template: str, page: ViewPage, conditions: tuple[str, ...], split: bool) -> list[dict]:
        """The leaderboards of one template: entries with the metric (or with nothing else) in one table;
        entries that have only ``board_columns`` numbers (e.g. research episodes, which have no sCRPS)
        in a second one, with those columns instead of the metric."""
        group = None if split else page.group_column
        extra = tuple(c for c, _, _ in page.board_columns)
        present, entries = leaderboard(list(self.runs.values()), template, page.metric, conditions,
                                       page.agent_column, group_column=group, extra=extra)
        label = page.metric_label or page.metric or "score"
        direction = "lower is better" if page.lower_is_better else "higher is better"
        spread = (f"mean ± SD within {_heading(group)} (the report's spread: each {_heading(group)}'s mean "
                  f"subtracted first)" if group else "mean ± sample SD over episodes")
        common = ("tokens, cost and time are means per episode; failures count episodes whose status is not ok. "
                  "Click a header (or Tab to it and press Enter) to sort; the first click puts the best first.")
        note = f"{label}: {spread} ({direction}); {common}"
        if template not in self.pages:
            note = f"No view page is registered for template {template!r}: counts only. " + note
        has_extra = [any(v is not None for v in e["extra"].values()) for e in entries]
        scored = [e for e, x in zip(entries, has_extra) if e["metric_mean"] is not None or not x]
        others = [e for e, x in zip(entries, has_extra) if e["metric_mean"] is None and x]
        boards = []
        for kind, chosen in (("metric", scored), ("extra", others)):
            if not chosen:
                continue
            keep = [i for i, _ in enumerate(present) if any(e["conditions"][i] is not None for e in chosen)]
            shown = [{**e, "conditions": [e["conditions"][i] for i in keep]} for e in chosen]
            extras = [{"column": c, "label": l, "lower": low} for c, l, low in page.board_columns
                      if kind == "extra" and any(e["extra"].get(c) is not None for e in chosen)]
            title = f"{template} · " + ", ".join(x["label"] for x in extras) if kind == "extra" else template
            boards.append({"template": template, "title": title,
                           "split": _heading(page.group_column) if split else None,
                           "conditions": [_heading(present[i]) for i in keep], "entries": shown,
                           "note": note if kind == "metric" else f"Means over episodes, as the run folder's scores "
                                                                  f"give them (the viewer computes none); {common}",
                           "metric_label": label, "lower_is_better": page.lower_is_better, "extras": extras,
                           "show_metric": kind == "metric"})
        return boards

    def _condition_text(self, row: dict, page: ViewPage | None) -> str:
        if page is None:
            return ""
        return " · ".join(str(row[c]) for c in page.conditions if row.get(c) is not None)

    def _score(self, row: dict, page: ViewPage) -> tuple[float | None, str]:
        """(value, text) of a row's headline number: the page's metric, else its first board column present."""
        for column, label in ([(page.metric, page.metric_label or page.metric)] if page.metric else []) + \
                [(c, l) for c, l, _ in page.board_columns]:
            value = row.get(column)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                return float(value), f"{label}: {value:.3f}"
        return None, "–"

    def run_page(self, run: Run) -> str:
        rows = []
        for i, slug in enumerate(run.episode_slugs):
            row = run.row(i)
            page = self.pages.get(row.get("template"))
            score, score_text = self._score(row, page or ViewPage(""))
            seconds = row.get("agent_seconds", row.get("seconds"))
            agent = row.get(page.agent_column) if page else None
            facets = {"status": row.get("status"), "agent": agent or row.get("profile")}
            facets.update({c: row.get(c) for c in ((*page.conditions, *page.facet_columns) if page else ())
                           if row.get(c) is not None})
            rows.append({"facets": {k: _fmt(v) for k, v in facets.items() if v is not None},
                         "slug": slug, "episode": row.get("episode") or slug, "template": row.get("template"),
                         "task": row.get("task"), "agent": agent or row.get("profile") or "–",
                         "condition": self._condition_text(row, page), "status": row.get("status"),
                         "score": score, "score_text": score_text,
                         "tokens": row.get("total_tokens"), "cost": row.get("cost_usd"), "seconds": seconds,
                         "error": scrub_paths(str(row.get("error") or "")[:160]) if self.bundle
                         else str(row.get("error") or "")[:160]})
        names = list(dict.fromkeys(k for r in rows for k in r["facets"]))
        facets = []
        for name in names:
            values = sorted({r["facets"][name] for r in rows if name in r["facets"]})
            if 1 < len(values) <= 40:
                facets.append({"name": name, "label": _heading(name), "options": values})
        created = run.meta.get("created") or run.meta.get("started")
        templates = [t for t in pd.unique(run.rows["template"].dropna())] if "template" in run.rows.columns else []
        lower = bool(templates) and all(self.pages.get(t, ViewPage("")).lower_is_better for t in templates)
        return self.env.get_template("run.html").render(
            title=f"Run {run.id}", root="../../", crumbs=[(run.id, None)], reveal=self.reveal, run=run, rows=rows,
            created=created if isinstance(created, str) else None, folder=None if self.bundle else str(run.root),
            score_first="asc" if lower else "desc", facets=facets)

    # -- comparing agents on the same input ----------------------------------------------------------------------
    def comparisons(self) -> dict[str, dict]:
        """Comparison pages by slug: ``title``, ``template`` and ``members`` ((run id, episode slug), ...), for
        every template ``compare_key`` shared by at least two episodes (of any runs)."""
        if self._comparisons is not None:
            return self._comparisons
        found: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for run in self.runs.values():
            for i, episode_slug in enumerate(run.episode_slugs):
                row = run.row(i)
                page = self.pages.get(row.get("template"))
                if page is None or page.compare_key is None:
                    continue
                try:
                    key = page.compare_key(row)
                except Exception:  # noqa: BLE001 - a plugin's key never breaks the viewer
                    key = None
                if key:
                    found.setdefault((str(row["template"]), str(key)), []).append((run.id, episode_slug))
        out: dict[str, dict] = {}
        for (template, key), members in sorted(found.items()):
            if len(members) > 1:
                out[file_slug(f"{template}_{key}")] = {"title": key, "template": template, "members": members}
        self._comparisons = out
        return out

    def compare_index(self) -> str:
        items = [{"slug": k, "title": v["title"], "template": v["template"], "n": len(v["members"]),
                  "agents": ", ".join(dict.fromkeys(self._agent(*m) for m in v["members"]))}
                 for k, v in self.comparisons().items()]
        from harness.view.contrasts import agent_contrasts

        paired = agent_contrasts(run.rows for run in self.runs.values())
        return self.env.get_template("compare_index.html").render(
            title="Compare", root="../", crumbs=[("compare", None)], reveal=self.reveal, items=items, paired=paired)

    def _agent(self, run_id: str, episode_slug: str) -> str:
        run = self.runs[run_id]
        row = run.row(run.index_of(episode_slug))
        page = self.pages.get(row.get("template"))
        return str((row.get(page.agent_column) if page else None) or row.get("profile") or "–")

    def compare_page(self, key: str) -> str:
        item = self.comparisons()[key]
        page = self.pages[item["template"]]
        episodes = [(run_id, s, self._episode(self.runs[run_id], s)) for run_id, s in item["members"]]
        views = [e.view for _, _, e in episodes]
        panels: list[Panel] = []
        if page.compare is not None:
            try:
                panels = list(page.compare(views))
            except Exception as exc:  # noqa: BLE001 - a plugin's page never breaks the viewer
                detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
                panels = [Panel("comparison", Markup(f'<div class="error-box">the {escape(item["template"])} '
                                                     f'comparison failed: {escape(detail)}</div>'))]
        panels = [Panel(p.title, Markup(p.html) if not isinstance(p.html, Markup) else p.html) for p in panels]
        rows = [self._hidden(e.view.row, page, e.view.reveal) for _, _, e in episodes]
        columns = list(dict.fromkeys(c for r in rows for c in r))
        diff = [(c, [_fmt(r.get(c)) for r in rows]) for c in columns]
        diff = [(c, values, len(set(values)) > 1) for c, values in diff]
        heads = [{"agent": self._agent(run_id, s), "run": run_id, "href": f"../../runs/{run_id}/{s}/index.html",
                  "episode": str(e.view.row.get("episode") or s)} for run_id, s, e in episodes]
        return self.env.get_template("compare.html").render(
            title=f"Compare {item['title']}", root="../../",
            crumbs=[("compare", "../index.html"), (item["title"], None)],
            reveal=self.reveal, item=item, panels=panels, heads=heads, diff=diff)

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
        if page is not None:
            shown = self._hidden(row, page, view.reveal)
            facts += [(label, _fmt(shown.get(column))) for column, label in
                      [(page.metric, page.metric_label or page.metric)] + [(c, l) for c, l, _ in page.board_columns]
                      if column and shown.get(column) is not None]
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
            row=self._hidden(row, page, view.reveal), facts=facts, panels=panels, plots=episode.plots,
            prompt=view.read_text("prompt.txt"),
            steps=steps, chunk_size=CHUNK, chunks=(len(steps) + CHUNK - 1) // CHUNK, totals=totals,
            compare=next((f"../../../compare/{k}/index.html" for k, v in self.comparisons().items()
                          if (run.id, slug) in v["members"]), None),
            folder=view.folder, has_calls=not self.bundle and bool(proxy_logs(view.folder)))

    def broken_page(self, run: Run, slug: str, exc: BaseException) -> str:
        """The page of an episode that cannot be shown (its files are unreadable or too large to list): the
        reason, in the site's frame."""
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()[:300]
        body = Markup(f'<div class="error-box">episode {escape(slug)} cannot be shown: {escape(detail)}</div>')
        return self.env.get_template("episode.html").render(
            title=slug, root="../../../", crumbs=[(run.id, "../index.html"), (slug, None)], reveal=False,
            row={"status": "broken"}, facts=[("status", "cannot be shown")], panels=[Panel("episode", body)],
            plots=[], prompt=None, steps=[], chunk_size=CHUNK, chunks=0, totals=None, folder=None, compare=None,
            has_calls=False)

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

    # -- JSON downloads ------------------------------------------------------------------------------------------
    def _page_row(self, run: Run, index: int) -> dict:
        """Row ``index`` as pages show it (answer columns only when revealed and public; no path in a bundle)."""
        row = run.row(index)
        page = self.pages.get(row.get("template"))
        try:
            public = page is None or bool(page.labels_public(row))
        except Exception:  # noqa: BLE001
            public = False
        return self._hidden(row, page, self.reveal and public)

    def rows_json(self, run: Run) -> str:
        """``rows.json``: the run's results rows as the pages show them (a list of objects)."""
        rows = [self._page_row(run, i) for i in range(len(run.rows))]
        return json.dumps(rows, indent=1, default=str)

    def trajectory_json(self, run: Run, slug: str) -> str | None:
        """An episode's ``trajectory.json`` (the ATIF steps the page shows; None when it has none)."""
        trajectory = read_trajectory(run.folder(run.index_of(slug)))
        return None if trajectory is None else json.dumps(trajectory, indent=1, ensure_ascii=False)

    # -- raw model calls (proxy logs; never in a bundle) ------------------------------------------------------------
    def _calls(self, run: Run, slug: str) -> list[CallSummary]:
        folder = run.folder(run.index_of(slug))
        logs = proxy_logs(folder)
        stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in logs)
        with self._lock:
            cached = self._call_cache.get((run.id, slug))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        calls = call_index(folder)
        with self._lock:
            self._call_cache[(run.id, slug)] = (stamp, calls)
            while len(self._call_cache) > 8:
                self._call_cache.pop(next(iter(self._call_cache)))
        return calls

    def calls_fragment(self, run: Run, slug: str) -> str:
        """The list of an episode's model calls (an HTML fragment the episode page loads on demand)."""
        return self.env.get_template("calls.html").render(calls=self._calls(run, slug))

    def call_fragment(self, run: Run, slug: str, n: int) -> str | None:
        """Request and response of call ``n`` (headers through the proxy's allowlist, bodies, usage, latency)."""
        call = next((c for c in self._calls(run, slug) if c.n == n), None)
        if call is None:
            return None
        return self.env.get_template("call.html").render(call=call, detail=call_detail(call))

    def workspace_file(self, run: Run, slug: str, path: str) -> tuple[bytes, str] | None:
        """An image the agent made (only listed images, at most MAX_IMAGE_BYTES)."""
        folder = run.folder(run.index_of(slug))
        images = workspace_images(folder)
        if path not in images or images[path] > MAX_IMAGE_BYTES:
            return None
        media = mimetypes.guess_type(path)[0] or "application/octet-stream"
        return (folder / "workspace" / path).read_bytes(), media

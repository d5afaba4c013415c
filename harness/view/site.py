"""The viewer's router: its pages as a path -> content mapping, shared by the server and the static export.

Paths (every link is relative, so a ``--bundle`` works over ``file://``)::

    index.html                              runs and one leaderboard per template
    runs/<run>/index.html                   the run's episodes
    runs/<run>/<episode>/index.html         episode: facts, template panels, plots, trajectory summaries
    runs/<run>/<episode>/steps-<k>.js       trajectory step bodies, CHUNK steps per file
    runs/<run>/<episode>/ws/<path>          an image the agent made in its workspace
    folders/<slug>/index.html               a folder page (not a run; writable ones never in a bundle)
    static/view.css, static/view.js

Only these paths exist: the server never maps a URL onto the file system.  The page builders are one module
each, mixed into :class:`Site`: :mod:`.page_index` (runs and leaderboards), :mod:`.page_run` (a run's
episodes, ``rows.json``), :mod:`.page_compare` (agents side by side), :mod:`.page_episode` (an episode and
the files it loads); :mod:`.cells` formats their cells.
"""

from __future__ import annotations

import re
import secrets
import threading
import time
from collections import OrderedDict
from importlib import resources
from typing import Any, Iterator

import jinja2

from harness.billing import NOT_SPENT
from harness.view.cells import _clip, _fmt, _num, _pm, _sortval, scrub_paths
from harness.view.data import MAX_IMAGE_BYTES, Run, load_run, run_stamp, with_run_columns
from harness.view.calls import CallSummary
from harness.view.folders import Folder, folder_html, run_post
from harness.view.html import highlight_numbers
from harness.view.page_compare import ComparePage
from harness.view.page_episode import CHUNK, EpisodePage, _Episode
from harness.view.page_index import IndexPage
from harness.view.page_run import RunPage
from harness.view.pages import ViewPage, registered_pages

_STATIC = ("view.css", "view.js")
#: Seconds between two looks at a run folder by a live viewer (pages poll every 2 s).
LIVE_CHECK = 1.0


class Site(IndexPage, RunPage, ComparePage, EpisodePage):
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
                                numbers=highlight_numbers, figure=self._figure, not_spent=NOT_SPENT)
        self._episodes: OrderedDict[tuple[str, str], _Episode] = OrderedDict()
        self._lock = threading.Lock()

    def _with_run_columns(self, run: Run) -> Run:
        """``run`` with each template's ``run_columns`` added to its rows (:func:`with_run_columns`)."""
        return with_run_columns(run, self.pages)

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
    def _html(text: str) -> tuple[bytes, str]:  # a lone surrogate left anywhere shows as \udcff, the page stands
        return text.encode("utf-8", "backslashreplace"), "text/html; charset=utf-8"

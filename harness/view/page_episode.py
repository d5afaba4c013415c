"""An episode's page: facts, template panels, plots, trajectory steps in chunks, raw model calls and workspace
images (a part of :class:`harness.view.site.Site`)."""

from __future__ import annotations

import json
import mimetypes
import traceback
from dataclasses import dataclass

from markupsafe import Markup, escape

from harness.billing import NOT_SPENT
from harness.untrusted import shown_name, url_name
from harness.view.calls import CallSummary, call_detail, call_index, proxy_logs
from harness.view.cells import _fmt, _num
from harness.view.data import (MAX_IMAGE_BYTES, Plot, Run, StepView, plots as find_plots, read_trajectory,
                               step_views, workspace_images)
from harness.view.pages import EpisodeView, Panel

#: Trajectory steps per ``steps-<k>.js`` file.
CHUNK = 25


@dataclass
class _Episode:
    view: EpisodeView
    steps: list[StepView]
    plots: list[Plot]



class EpisodePage:
    """``runs/<run>/<episode>/...``: the episode page and the files it loads (a mixin of
    :class:`harness.view.site.Site`, whose state it reads: ``pages``, ``env``, ``reveal``, ``bundle``, and the
    caches ``_episodes``, ``_call_cache`` under ``_lock``)."""

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
        name = shown_name(plot.path)  # a name that is not UTF-8 is shown escaped (bad\xff.png), linked encoded
        if plot.size > MAX_IMAGE_BYTES:
            return Markup(f'<figure class="plot"><figcaption>{escape(name)} ({plot.size:,} bytes, not shown)'
                          f' · {mark}</figcaption></figure>')
        image = f'<img loading="lazy" src="ws/{escape(url_name(plot.path))}" alt="{escape(name)}">'
        return Markup(f'<figure class="plot">{image}'
                      f'<figcaption>{escape(name)} · {mark}</figcaption></figure>')

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
        index = run.index_of(slug)
        offline = run.offline()[index] if index is not None else None
        for label, column, digits in (("tokens", "total_tokens", 0), ("cost (USD)", "cost_usd", 4),
                                      ("time (s)", "agent_seconds", 1)):
            if isinstance(row.get(column), (int, float)):
                mark = f" ({offline}: {NOT_SPENT})" if offline and column == "cost_usd" else ""
                facts.append((label, _num(row[column], digits) + mark))
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
        path = next((name for name in images if path in (name, url_name(name))), path)  # a link is encoded
        if path not in images or images[path] > MAX_IMAGE_BYTES:
            return None
        media = mimetypes.guess_type(path)[0] or "application/octet-stream"
        return (folder / "workspace" / path).read_bytes(), media

"""Comparison pages: agents side by side on the same input (a part of :class:`harness.view.site.Site`)."""

from __future__ import annotations

import traceback

from markupsafe import Markup, escape

from harness.view.cells import _fmt
from harness.view.data import slug as file_slug
from harness.view.pages import Panel


class ComparePage:
    """``compare/index.html`` and ``compare/<key>/index.html``: every template ``compare_key`` shared by at least
    two episodes (a mixin of :class:`harness.view.site.Site`, whose state it reads: ``runs``, ``pages``,
    ``env``, ``reveal``)."""

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

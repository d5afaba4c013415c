"""A run's page and its ``rows.json`` (a part of :class:`harness.view.site.Site`)."""

from __future__ import annotations

import json
import math

import pandas as pd

from harness.view.cells import _fmt, _heading, scrub_paths
from harness.view.data import Run
from harness.view.pages import ViewPage


class RunPage:
    """``runs/<run>/index.html`` and ``rows.json``: the run's episodes with their scores and facets (a mixin of
    :class:`harness.view.site.Site`, whose state it reads: ``pages``, ``env``, ``reveal``, ``bundle``)."""

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
        offline = run.offline()
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
                         "tokens": row.get("total_tokens"), "cost": row.get("cost_usd"), "offline": offline[i],
                         "seconds": seconds,
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
            score_first="asc" if lower else "desc", facets=facets,
            offline={"count": sum(1 for r in rows if r["offline"]),
                     "names": ", ".join(sorted({r["offline"] for r in rows if r["offline"]}))}
            if any(r["offline"] for r in rows) else None)

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

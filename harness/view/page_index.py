"""The viewer's front page: its runs and one leaderboard per template (a part of :class:`harness.view.site.Site`)."""

from __future__ import annotations

import math

import pandas as pd

from harness.billing import NOT_SPENT
from harness.view.cells import _heading, _names_cell
from harness.view.data import leaderboard
from harness.view.pages import ViewPage


class IndexPage:
    """``index.html``: the runs and the templates' leaderboards (a mixin of :class:`harness.view.site.Site`,
    whose state it reads: ``runs``, ``pages``, ``env``, ``reveal``, ``bundle``, ``folders``)."""

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
        if page.spread == "se" and not group:  # the report's and the paper's ±: SD / sqrt(scored episodes)
            entries = [{**e, "metric_sd": e["metric_sd"] / math.sqrt(e["metric_n"])
                        if e["metric_sd"] is not None else None} for e in entries]
            spread = "mean ± standard error over scored episodes (SD / √n, as the report and the paper give it)"
        common = ("tokens, cost and time are means per episode; failures count episodes whose status is not ok. "
                  "Click a header (or Tab to it and press Enter) to sort; the first click puts the best first.")
        note = f"{label}: {spread} ({direction}); {common}"
        if template not in self.pages:
            note = f"No view page is registered for template {template!r}: counts only. " + note
        boards = []
        real = [e for e in entries if e["offline"] is None]
        offline = [e for e in entries if e["offline"] is not None]
        for entries_, offline_ in ((real, False), (offline, True)):
            boards += self._tables(template, page, present, entries_, offline_, split, note, common, label)
        return boards

    def _tables(self, template: str, page: ViewPage, present: list[str], entries: list[dict], offline: bool,
                split: bool, note: str, common: str, label: str) -> list[dict]:
        """One template's boards of ``entries``: the metric's and the board columns'.  ``offline``: entries whose
        model calls an offline backend answered (a script): a board of their own after the real ones, titled and
        noted so, its costs marked, no best mean (a script's score ranks nothing)."""
        has_extra = [any(v is not None for v in e["extra"].values()) for e in entries]
        scored = [e for e, x in zip(entries, has_extra) if e["metric_mean"] is not None or not x]
        others = [e for e, x in zip(entries, has_extra) if e["metric_mean"] is None and x]
        boards = []
        names = ", ".join(sorted({e["offline"] for e in entries if e["offline"]}))
        for kind, chosen in (("metric", scored), ("extra", others)):
            if not chosen:
                continue
            keep = [i for i, _ in enumerate(present) if any(e["conditions"][i] is not None for e in chosen)]
            shown = [{**e, "conditions": [e["conditions"][i] for i in keep]} for e in chosen]
            means = [e["metric_mean"] for e in shown if e["metric_mean"] is not None]
            best = (min if page.lower_is_better else max)(means) if means else None
            if best is not None:  # ranked on load, best first (rows without the metric last)
                sign = 1 if page.lower_is_better else -1
                shown.sort(key=lambda e: (e["metric_mean"] is None, sign * (e["metric_mean"] or 0.0)))
            extras = [{"column": c, "label": l, "lower": low} for c, l, low in page.board_columns
                      if kind == "extra" and any(e["extra"].get(c) is not None for e in chosen)]
            title = f"{template} · " + ", ".join(x["label"] for x in extras) if kind == "extra" else template
            text = note if kind == "metric" else (f"Means over episodes, as the run folder's scores give them (the "
                                                  f"viewer computes none); {common}")
            if offline:
                title += f" · offline model ({names})"
                text = (f"Not ranked with the boards above: these episodes' model calls were answered by an offline "
                        f"model backend ({names}), not by the model named; their costs are {NOT_SPENT}. " + text)
            boards.append({"template": template, "title": title,
                           "split": _heading(page.group_column) if split else None,
                           "conditions": [_heading(present[i]) for i in keep], "entries": shown, "note": text,
                           "metric_label": label, "lower_is_better": page.lower_is_better, "extras": extras,
                           "show_metric": kind == "metric", "best": None if offline else best,
                           "offline": offline})
        return boards

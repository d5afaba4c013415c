"""Folder pages of ``harness view`` and the viewer's only writes.

``harness view DIR`` shows a DIR that is no run directory with the first registered
:class:`harness.view.FolderPage` whose ``recognise(DIR)`` is true, at ``folders/<slug>/index.html``.

Writes.  A folder page with ``posts`` is *writable*; its actions are the viewer's only writes, and:

* they are served on a loopback address only: the server routes POST only when bound to one, and
  ``harness view`` refuses another ``--host`` when a writable folder is given;
* a ``POST /folders/<slug>/<action>`` is accepted only when its ``Origin`` header equals the viewer's own
  origin (``http://`` + the request's ``Host``, itself one the server accepts): a missing or a foreign
  Origin is refused (403), so is a wrong or missing ``X-Harness-Token`` header, which must equal the
  per-launch token (:data:`TOKEN_HEADER`; 32 random bytes made when the site is built, embedded only in
  writable pages as ``<meta name="harness-token">``).  Nothing is written on a refusal;
* a ``--bundle`` never includes a writable page (a bundle writes only the site's paths, so nothing a
  writable page reads, such as the file it appends to, is ever copied).

A page's forms post through ``static/view.js``: ``<form data-post="ACTION">`` is sent as a JSON object of
its fields (the clicked button's name and value included) with the token; the page reloads on success and
shows the refusal otherwise.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup, escape

from harness.view.data import slug as file_slug
from harness.view.pages import FolderPage, Panel

TOKEN_HEADER = "X-Harness-Token"


@dataclass(frozen=True)
class Folder:
    """A folder shown by a folder page: its URL slug, its path and the page."""

    slug: str
    root: Path
    page: FolderPage


def recognise(root: Path, pages: list[FolderPage]) -> FolderPage | None:
    """The first of ``pages`` that recognises ``root`` (a recogniser that raises recognises nothing)."""
    for page in pages:
        try:
            if page.recognise(Path(root)):
                return page
        except Exception:  # noqa: BLE001 - a plugin's recogniser never breaks the viewer
            continue
    return None


def split_folders(roots: list[Path], pages: list[FolderPage]) -> tuple[list[Path], list[Folder]]:
    """``roots`` split into run directories (those no folder page recognises) and :class:`Folder` s
    (slugs made unique by a numeric suffix)."""
    runs, folders, seen = [], [], set()
    for root in roots:
        page = recognise(root, pages) if not (Path(root) / "results.parquet").exists() else None
        if page is None:
            runs.append(Path(root))
            continue
        name = file_slug(Path(root).resolve().name)
        unique, n = name, 2
        while unique in seen:
            unique, n = f"{name}-{n}", n + 1
        seen.add(unique)
        folders.append(Folder(unique, Path(root), page))
    return runs, folders


def folder_html(env: jinja2.Environment, folder: Folder, token: str | None, reveal: bool) -> str:
    """The page of ``folder`` (its panels in the site's frame; a render that raises is shown as an error)."""
    try:
        panels = list(folder.page.render(folder.root))
    except Exception as exc:  # noqa: BLE001 - a plugin's page never breaks the viewer
        detail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        panels = [Panel(folder.page.title, Markup(f'<div class="error-box">the {escape(folder.page.kind)} page '
                                                  f'failed: {escape(detail)}</div>'))]
    panels = [Panel(p.title, p.html if isinstance(p.html, Markup) else Markup(p.html)) for p in panels]
    return env.get_template("folder.html").render(
        title=f"{folder.page.title} · {folder.slug}", root="../../", crumbs=[(folder.slug, None)], reveal=reveal,
        heading=folder.page.title, folder=str(folder.root), panels=panels,
        token=token if folder.page.writable else None)


def run_post(folder: Folder, action: str, body: dict[str, Any]) -> tuple[int, Any] | None:
    """``(status, JSON answer)`` of the page's ``action`` handler on ``body`` (None: no such action);
    a ValueError from the handler is ``(400, {"error": message})``."""
    handler = folder.page.posts.get(action)
    if handler is None:
        return None
    try:
        return 200, handler(folder.root, body)
    except ValueError as exc:
        return 400, {"error": str(exc)}

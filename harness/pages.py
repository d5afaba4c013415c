"""``harness view``'s public API: the pages a task template adds (:class:`ViewPage`, :class:`FolderPage`,
:class:`EpisodeView`, :class:`Panel`) and the HTML helpers they render with (:class:`Markup`, escaping, tables,
SVG fan and line charts).  Loaded lazily like the package root (:func:`harness.lazy.public_api`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.lazy import public_api

if TYPE_CHECKING:
    from harness.view import EpisodeText as EpisodeText
    from harness.view import EpisodeView as EpisodeView
    from harness.view import FolderPage as FolderPage
    from harness.view import Panel as Panel
    from harness.view import ViewPage as ViewPage
    from harness.view.html import Markup as Markup
    from harness.view.html import escape as html_escape
    from harness.view.html import fan_svg as fan_svg
    from harness.view.html import stacked_lines_svg as stacked_lines_svg
    from harness.view.html import table as html_table

__getattr__, __dir__ = public_api(globals())

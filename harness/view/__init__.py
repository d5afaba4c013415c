"""``harness view``: a local web viewer for runs, episodes and trajectories.

:mod:`.data` reads run directories (rows, leaderboards, ATIF trajectory
steps, the plots an agent made); :mod:`.calls` reads an episode's raw model
calls from its proxy logs on demand; :mod:`.site` renders every page as a
path -> content mapping (re-reading runs in progress when live); :mod:`.server`
serves it on the loopback interface (foreign ``Host``/``Origin`` refused);
:mod:`.bundle` writes it as a static site.  Task-template plugins add their benchmark pages through the
``register_view_pages`` hook with a :class:`.pages.ViewPage`; a folder that is not a run gets a
:class:`.pages.FolderPage`, which may declare the viewer's only writes (:mod:`.folders`).
"""

from harness.view.pages import EpisodeText, EpisodeView, FolderPage, Panel, ViewPage

__all__ = ["EpisodeText", "EpisodeView", "FolderPage", "Panel", "ViewPage"]

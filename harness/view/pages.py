"""What a task-template plugin contributes to ``harness view``: leaderboard columns and episode panels.

A plugin registers one :class:`ViewPage` per template through the
``register_view_pages`` hook (:mod:`harness.hookspecs`)::

    @hookimpl
    def register_view_pages(register):
        register(ViewPage(template="my-template", metric="accuracy", conditions=("noise",), render=render))

``render(episode)`` receives an :class:`EpisodeView` and returns a list of
:class:`Panel` (HTML fragments shown above the trajectory).  Answers (true
labels, held-out results, document roles) go into a panel only when
``episode.reveal`` is true: the server sets it; a ``--bundle`` export sets it
only with ``--with-answers`` and only for episodes whose ``labels_public(row)``
is true.  A render that raises is shown as an error on the page, never fatal.

A folder that is not a run (e.g. a generated benchmark) gets a page from a :class:`FolderPage` registered
through the same hook; such a page may declare POST handlers, the viewer's only writes (:mod:`.folders`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

if TYPE_CHECKING:  # annotations only: registering a page loads no pandas
    import pandas as pd


@dataclass
class Panel:
    """One section of an episode page: a title and a trusted HTML fragment
    (built with :mod:`harness.view.html`, every value escaped)."""

    title: str
    html: str


@dataclass
class EpisodeView:
    """One results row as the viewer sees it.

    ``row``: the results row (column -> value, NaN as None); ``rows``: every row
    of the same run (a benchmark page may show sibling conditions);
    ``folder``: ``episodes/<episode>/`` when the run has one, else None;
    ``run``: the parsed ``run.json`` (empty when absent); ``reveal``: whether
    answers may be shown.
    """

    run_root: Path
    run: dict
    row: dict
    rows: pd.DataFrame
    folder: Path | None
    reveal: bool

    def file(self, name: str) -> Path | None:
        """``folder/name`` when it is a regular file inside the episode folder reached through no symbolic
        link (the agent writes ``workspace/``); an input kept by reference (:mod:`harness.inputs`) is
        rebuilt into the inputs cache and that copy returned; else None.  Read episode files only through
        this, and never write the file it returns.  Raises :class:`harness.inputs.InputMismatch` (naming the
        run, the episode and the input's source) when a rebuilt input differs from its record."""
        from harness import inputs
        from harness.view.data import regular_file

        found = regular_file(self.folder, name)
        if found is not None or self.folder is None:
            return found
        return inputs.resolve(self.folder, name)

    def listing(self, folder: str) -> list[str]:
        """The names of the files in ``folder`` (relative to the episode folder, e.g.
        ``workspace/test_samples``), the inputs kept by reference included, sorted; read each through
        :meth:`file`."""
        from harness import inputs

        return inputs.listing(self.folder, folder) if self.folder is not None else []

    def read_json(self, name: str) -> Any | None:
        """``folder/name`` parsed, or None when missing, linked or malformed."""
        path = self.file(name)
        try:
            return json.loads(path.read_text(encoding="utf-8")) if path else None
        except (OSError, ValueError):
            return None

    def read_text(self, name: str, limit: int = 200_000) -> str | None:
        """The first ``limit`` characters of ``folder/name``, or None when missing or linked."""
        path = self.file(name)
        if path is None:
            return None
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.read(limit)
        except OSError:
            return None


def _always(row: dict) -> bool:
    return True


@dataclass
class EpisodeText:
    """An episode as text, for exports to other tools (``harness export --format inspect``): ``input`` (what
    the model under test was given; None: the episode's ``prompt.txt``), ``target`` (the answer key, read
    after the episode), ``output`` (what it answered, e.g. ``results.json`` or a rule's predictions) and
    ``failure`` (why a failed episode failed, where the row's ``error`` does not say)."""

    target: str = ""
    output: str = ""
    input: str | None = None
    failure: str | None = None


@dataclass(frozen=True)
class ViewPage:
    """A template's view contribution.

    ``metric``: the results column the leaderboard ranks by (``metric_label``
    shown, ``lower_is_better`` for the sort); ``conditions``: the columns that
    make a condition (e.g. noise, submission); ``agent_column``: who is being
    evaluated (default ``profile``; rows without one fall back to ``profile``); ``render``: episode
    panels, or None; ``labels_public(row)``: whether answers of that row may ever be exported.

    ``group_column``: the leaderboard's ± is the SD within this column's groups (e.g. a
    ``simulator`` column, as a report's main table does) and a second table splits the board by it;
    ``spread``: what the leaderboard's ± is without a ``group_column``: ``sd`` (the sample SD over
    episodes) or ``se`` (the standard error of the mean over the scored episodes, SD / sqrt(n): what a
    report giving mean ± standard error shows, so board and report agree); the board's note says which;
    ``board_columns``: (column, label, lower_is_better) of further per-episode numbers the
    leaderboard averages (e.g. deep-research recall read from the run folder); ``hidden_columns``: results
    columns that reveal answers (left out of every page unless answers are revealed; ``name*`` hides
    every column starting with ``name``);
    ``run_columns(run_root, rows)``: the template's rows of a run with columns added from the run
    folder (returns the same index; read tolerantly: a missing file adds nothing).

    ``facet_columns``: columns the episode list can be filtered on besides status, agent and the
    conditions (e.g. a derived right/wrong outcome).

    ``score_columns``: further results columns (after ``metric`` and the ``board_columns``) that score an
    episode: an export to another tool shows these as its scores; ``text(episode)``: the episode as an
    :class:`EpisodeText` (input, target, output) for such an export (called with ``reveal`` true), or None.

    ``compare_key(row)``: rows of every run with the same key saw the same input (e.g. one
    test batch of a condition), or None; the viewer gives each key a comparison page with the rows
    side by side (differing fields marked) and ``compare(episodes)``'s panels (e.g. each agent's
    answer per test sample beside its plot).  Panels follow ``reveal`` as episode panels do.
    """

    template: str
    metric: str | None = None
    metric_label: str | None = None
    lower_is_better: bool = False
    conditions: tuple[str, ...] = ()
    agent_column: str = "profile"
    render: Callable[[EpisodeView], list[Panel]] | None = None
    labels_public: Callable[[dict], bool] = field(default=_always)
    group_column: str | None = None
    spread: str = "sd"
    board_columns: tuple[tuple[str, str, bool], ...] = ()
    hidden_columns: tuple[str, ...] = ()
    run_columns: Callable[[Path, pd.DataFrame], pd.DataFrame] | None = None
    compare_key: Callable[[dict], str | None] | None = None
    facet_columns: tuple[str, ...] = ()
    compare: Callable[[list[EpisodeView]], list[Panel]] | None = None
    score_columns: tuple[str, ...] = ()
    text: Callable[[EpisodeView], EpisodeText] | None = None

    def scored_columns(self) -> list[str]:
        """``metric``, the ``board_columns`` and ``score_columns``, each once, in that order."""
        names = [self.metric] if self.metric else []
        names += [column for column, _, _ in self.board_columns] + list(self.score_columns)
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class FolderPage:
    """A page for a folder given to ``harness view`` that is not a run directory.

    ``kind``: names the folder kind (unique among folder pages); ``title``: the page heading;
    ``recognise(folder) -> bool``: whether a folder is of this kind; ``render(folder) -> [Panel]``: the
    page's panels (forms included); ``posts``: action -> ``handler(folder, body) -> JSON-able answer``, the
    writes the page may make (``body``: the posted JSON object; a ValueError is answered 400 with its
    message).  A page with ``posts`` is *writable*: served on loopback only, each POST checked for the
    viewer's own Origin and the per-launch token, never part of a ``--bundle`` (:mod:`harness.view.folders`).
    """

    kind: str
    title: str
    recognise: Callable[[Path], bool]
    render: Callable[[Path], list[Panel]]
    posts: Mapping[str, Callable[[Path, dict], Any]] = field(default_factory=dict)

    @property
    def writable(self) -> bool:
        return bool(self.posts)


def _registered() -> dict[str, ViewPage | FolderPage]:
    """Everything registered through ``register_view_pages`` (template pages by template, folder pages by
    ``folder:<kind>``), through the one dispatch path and duplicate rule of every register hook
    (:meth:`harness.plugins.Plugins.collect`: the first registration of a name is kept, a later one is a
    plugin problem naming both plugins)."""
    from harness import plugins as registry

    def make(page: Any) -> tuple[str, ViewPage | FolderPage]:
        if isinstance(page, FolderPage) and page.kind:
            return f"folder:{page.kind}", page
        if not isinstance(page, ViewPage) or not page.template:
            raise TypeError(f"register(page) needs a harness.view.ViewPage with a template or a "
                            f"harness.view.FolderPage with a kind, got {page!r}")
        return page.template, page

    found = registry.plugins().collect("register_view_pages", "view page", make)
    return {name: page for name, (_, page) in found.items()}


def registered_pages() -> dict[str, ViewPage]:
    """Template view pages registered by the loaded plugins, by template."""
    return {name: page for name, page in _registered().items() if isinstance(page, ViewPage)}


def registered_folder_pages() -> list[FolderPage]:
    """Folder pages registered by the loaded plugins, in registration order."""
    return [page for page in _registered().values() if isinstance(page, FolderPage)]

"""The Dr-CiK template's research inputs kept by reference (:mod:`harness.inputs`): the corpus files of a research
episode, referenced and rebuilt by :mod:`.episodes` (:func:`~.episodes.corpus_references`,
:func:`~.episodes.rebuild_document`), which loads on first use (listing the plugins loads no task code)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from harness import lazy_module
from tsagent_plugins.tasks.drcik.columns import RESEARCH

if TYPE_CHECKING:
    from tsagent_plugins.tasks.drcik.dataset.corpus import Corpus
    from tsagent_plugins.tasks.drcik.research import episodes
else:
    episodes = lazy_module("tsagent_plugins.tasks.drcik.research.episodes")


class ResearchInputs:
    """The Dr-CiK template's inputs kept by reference (:meth:`harness.AgentTaskTemplate.input_references`): a
    research episode's corpus files, unless ``keep_corpus``; forecasting episodes run in the harness and have
    none.  Mixed into the template, whose ``tasks(params)`` loads the task folder."""

    def input_references(self, params, episode: str, root: Path) -> dict[str, dict]:
        """:func:`corpus_references` of a research episode (none with ``keep_corpus: true``)."""
        if params.episode_kind != RESEARCH or params.keep_corpus:
            return {}
        return episodes.corpus_references(root, self._corpus(params), f"Dr-CiK tasks {params.tasks}")

    def rebuild_input(self, params, episode: str, reference: dict, dest: Path) -> None:
        """:func:`rebuild_document` from the loaded tasks' corpus."""
        episodes.rebuild_document(self._corpus(params), reference, dest)

    def _corpus(self, params) -> "Corpus":
        """The pooled corpus of the loaded tasks, built once per task folder."""
        corpora = self.__dict__.setdefault("_corpora", {})
        if str(params.tasks_path) not in corpora:
            corpora[str(params.tasks_path)] = episodes.Corpus(self.tasks(params).values())
        return corpora[str(params.tasks_path)]


"""``drcik-research``: research episodes under ``harness run`` (one episode per task).

A thin task template over :mod:`.research`: it loads the tasks (the embedded public
sample with ``tasks: sample``, else a release folder, task file or flat layout), pools
every loaded task's documents into the corpus, and runs one episode per task in
``episodes`` (default: all).  ``metadata`` fills the exported ``metadata.json``.
``keep_corpus`` (default false): the corpus copy is removed from the workspace once the
episode is scored — at the release's 10,342 documents it is about 39 MB per episode
(``benchmarks/research_corpus.py``), and the key's salt and id map reproduce it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.contracts import EpisodeScore, Materialized, TaskTemplate
from plugins.tasks.drcik.loader import SAMPLE_DIR, DrcikTask, load_tasks
from plugins.tasks.drcik.research import materialize_research, score_research


class ResearchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tasks: str = Field("sample", description="'sample' (the embedded public sample) or a path")
    episodes: list[str] | None = Field(None, description="benchmark ids to run (default: every loaded task)")
    metadata: dict[str, str] = Field(default_factory=dict, description="metadata.json fields")
    keep_corpus: bool = Field(False, description="keep the corpus copy in each workspace after scoring")


@lru_cache(maxsize=4)
def _load(where: str) -> tuple[DrcikTask, ...]:
    return tuple(load_tasks(SAMPLE_DIR if where == "sample" else Path(where)))


class ResearchTemplate(TaskTemplate):
    name = "drcik-research"
    params_model = ResearchParams

    def tasks(self, params: ResearchParams) -> list[DrcikTask]:
        return list(_load(params.tasks))

    def episodes(self, params: ResearchParams) -> list[str]:
        ids = [t.benchmark_id for t in self.tasks(params)]
        if params.episodes is None:
            return ids
        unknown = sorted(set(params.episodes) - set(ids))
        if unknown:
            raise ValueError(f"params.episodes: unknown benchmark ids {unknown} (loaded: {ids})")
        return list(params.episodes)

    def materialize(self, params: ResearchParams, episode: str, workspace: Path, key_dir: Path) -> Materialized:
        return materialize_research(self.tasks(params), episode, workspace, key_dir)

    def score(self, params: ResearchParams, episode: str, workspace: Path, key_dir: Path,
              run_submission) -> EpisodeScore:
        return score_research(workspace, key_dir, params.metadata, keep_corpus=params.keep_corpus)

    def rewrite_paths(self, params: ResearchParams, spec_file: Path) -> ResearchParams:
        if params.tasks == "sample" or Path(params.tasks).is_absolute():
            return params
        return params.model_copy(update={"tasks": str((Path(spec_file).parent / params.tasks).resolve())})

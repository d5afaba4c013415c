"""Parameters of the ``drcik`` task template: a TaskSpec under ``tasks/drcik/``.

::

    name: sample-statistical
    description: Statistical baselines on the public sample, no context vs supporting evidence.
    template: drcik
    params:
      episode_kind: forecast        # forecast | research (one task × one deep-research agent, in a sandbox)
      tasks: sample                 # "sample" (the embedded public sample) or a path, relative to this file
      episodes: null                # benchmark ids to run (default: every loaded task)
      forecasters:                  # registered forecaster names, or {name, options}
        - naive
        - {name: chronos, options: {model: models/chronos-t5-small}}   # a local folder of weights
      contexts: [no-context, supporting-evidence]
      samples: 25                   # S, the paper's default (the leaderboard asks for >= 100)
      seed: 0
      time_limit: 600               # seconds per forecast
      agent: null                   # agent profile of model-backed forecasters (llm-dp); else --agent
      model_backend: null           # e.g. scripted (default: the profile's provider)
      script: null                  # script for the scripted backend, relative to this file
      dr_evidence: null             # folder of <benchmark_id>.json DR evidence, relative to this file
      evidence: null                # {run: RUN_DIR, agent: PROFILE}: evidence from a research run (see below)
      budget: {max_cost_usd: 1.0}   # per forecast (task × condition) caps on model use
      submission: {organization: ..., contact: ..., reproduction: ..., notes: ...}

Research episodes (``episode_kind: research``) are one task × one DR agent, the
agent profile given by ``--agent`` or an experiment's ``agents``; they take no
forecasters and only these fields besides ``tasks`` and ``episodes``::

      episode_kind: research
      metadata: {method: ..., type: agentic, base_model: ...}   # the exported metadata.json's fields
      keep_corpus: false            # keep each workspace's corpus copy in the run folder (else kept by
                                    # reference, ~39 MB per episode at the release's 10,342 documents:
                                    # each unchanged file rebuilt on demand and checked, harness.inputs)
      corpus: null                  # a label of the task folder, copied to every row's ``corpus`` column (e.g.
                                    # A / B of Table 10: raw contexts vs the generated corpus)
      judge: lexical                # judge run on the research run when it finishes (dr_scores.jsonl);
                                    # a judge needing no model (null: none; the LLM judge: harness dr-score)

Forecasting episodes are forecaster × context condition × task; they run in the
harness process.  The DR conditions (``dr-evidence``, ``dr-report``, ``verified-dr``)
need an evidence source: ``dr_evidence`` (a folder of claims; ``dr-report`` then
has no report and is empty) or ``evidence`` (a research run directory and the
agent whose episodes produced it, as an experiment stage with ``evidence_from``
sets it; see :class:`harness.config.ExperimentSpec`), read by
:mod:`tsagent_plugins.tasks.drcik.research.as_context`.  The source is recorded in each row
(``evidence_run``, ``evidence_agent``).

Every problem is a :class:`harness.config.ConfigError` naming the file and ``params.<field>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from harness import AgentProfile, Budget, Strict
from tsagent_plugins.tasks.drcik.dataset import contexts as ctx
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR
from tsagent_plugins.tasks.drcik.columns import FORECAST, RESEARCH, TEMPLATE  # noqa: F401 - the spec's values
from tsagent_plugins.tasks.drcik.research.outputs import METADATA_FIELDS

SAMPLE = "sample"
DEFAULT_SAMPLES = 25
#: The profile of model-backed forecasters on the scripted backend (``model_backend: scripted``) when no
#: ``agent`` is given.
SCRIPTED_PROFILE = AgentProfile(name="scripted-dp", agent="llm-dp", provider="custom", model="scripted-model")


class ForecasterEntry(Strict):
    """One forecaster: a registered name and options for its ``configured(**options)``."""

    name: str = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


class SubmissionInfo(Strict):
    """Fields of each submission's ``metadata.json`` the harness cannot know."""

    organization: str = ""
    contact: str = ""
    reproduction: str = ""
    notes: str = ""


class EvidenceSource(Strict):
    """DR evidence from a research run: its run directory and the agent profile whose episodes wrote it."""

    run: str = Field(min_length=1)
    agent: str = Field(min_length=1)


class DrcikParams(Strict):
    """See the module docstring.  Relative paths are resolved against the spec file by the template."""

    episode_kind: Literal["forecast", "research"] = FORECAST
    tasks: str = SAMPLE
    episodes: list[str] | None = None
    forecasters: list[ForecasterEntry] = Field(default_factory=list)
    contexts: list[str] = Field(default_factory=lambda: ["no-context"])
    samples: int = Field(DEFAULT_SAMPLES, ge=1)
    seed: int = 0
    time_limit: float = Field(600.0, gt=0)
    agent: str | None = None
    model_backend: str | None = None
    script: str | None = None
    dr_evidence: str | None = None
    evidence: EvidenceSource | None = None
    budget: Budget = Budget()
    submission: SubmissionInfo = SubmissionInfo()
    metadata: dict[str, str] = Field(default_factory=dict)
    keep_corpus: bool = False
    corpus: str | None = None
    judge: str | None = "lexical"

    @field_validator("forecasters", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("contexts")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("give at least one context condition")
        for name in value:
            ctx.get(name)   # ValueError naming the known conditions, or why one is unavailable
        if len(set(value)) != len(value):
            raise ValueError("a context condition is listed twice")
        return value

    @field_validator("forecasters")
    @classmethod
    def _unique(cls, value: list[ForecasterEntry]) -> list[ForecasterEntry]:
        names = [f.name for f in value]
        if len(set(names)) != len(names):
            raise ValueError("a forecaster is listed twice")
        return value

    @model_validator(mode="after")
    def _kind(self) -> "DrcikParams":
        if self.episode_kind == FORECAST and not self.forecasters:
            raise ValueError("forecasters: forecasting episodes need at least one forecaster")
        if self.episode_kind == RESEARCH and self.forecasters:
            raise ValueError("forecasters: research episodes take no forecasters (the deep-research agent is "
                             "the agent profile: --agent, or agents: in an experiment)")
        if self.episodes is not None and len(set(self.episodes)) != len(self.episodes):
            raise ValueError("episodes: a benchmark id is listed twice")
        unknown = sorted(set(self.metadata) - set(METADATA_FIELDS))
        if unknown:
            raise ValueError(f"metadata: unknown field(s) {unknown} (known: {', '.join(METADATA_FIELDS)})")
        if self.dr_evidence and self.evidence:
            raise ValueError("give dr_evidence (a folder) or evidence (a research run), not both")
        return self

    @property
    def tasks_path(self) -> Path:
        return SAMPLE_DIR if self.tasks == SAMPLE else Path(self.tasks)

    def resolved(self, base: Path) -> "DrcikParams":
        """These params with relative paths (tasks, script, dr_evidence, evidence.run, agent when it is a
        file, a forecaster's ``model`` option naming an existing path) made absolute against ``base``."""
        def absolute(value: str | None) -> str | None:
            if value is None:
                return None
            p = Path(value).expanduser()
            return str(p if p.is_absolute() else (base / p).resolve())

        update: dict[str, Any] = {"script": absolute(self.script), "dr_evidence": absolute(self.dr_evidence)}
        if self.tasks != SAMPLE:
            update["tasks"] = absolute(self.tasks)
        if self.evidence is not None:
            update["evidence"] = self.evidence.model_copy(update={"run": absolute(self.evidence.run)})
        update["forecasters"] = [f.model_copy(update={"options": {**f.options, "model": absolute(f.options["model"])}})
                                 if isinstance(f.options.get("model"), str) and (base / f.options["model"]).exists()
                                 else f for f in self.forecasters]
        if self.agent and Path(self.agent).suffix in (".yaml", ".yml"):
            update["agent"] = absolute(self.agent)
        return self.model_copy(update=update)


@dataclass(frozen=True)
class ForecastEpisode:
    """A forecasting episode id ``<forecaster>/<context>/<benchmark_id>``, parsed once: its parts and the
    params' forecaster entry it names."""

    forecaster: str
    context: str
    task_id: str
    entry: ForecasterEntry

    @classmethod
    def parse(cls, params: DrcikParams, episode: str) -> "ForecastEpisode":
        """ValueError naming the episode when it is not ``<forecaster>/<context>/<benchmark_id>`` of a
        forecaster in ``params.forecasters``."""
        parts = episode.split("/")
        if len(parts) != 3:
            raise ValueError(f"episode {episode!r}: expected <forecaster>/<context>/<benchmark_id>")
        entry = next((f for f in params.forecasters if f.name == parts[0]), None)
        if entry is None:
            raise ValueError(f"episode {episode!r}: no forecaster {parts[0]!r} in params.forecasters")
        return cls(parts[0], parts[1], parts[2], entry)

    @staticmethod
    def id(forecaster: str, context: str, task_id: str) -> str:
        return f"{forecaster}/{context}/{task_id}"


class AuditParams(BaseModel):
    """The ``params`` of the ``drcik-audit`` template (:mod:`.quality.agent_audit`): ``export``, the dr-generate
    output folder (relative to the spec file)."""

    model_config = {"extra": "forbid"}
    export: str

"""The Dr-CiK forecasting experiment spec: forecasters × context conditions over a task set.

A YAML file (``tasks/drcik/*.yaml``) read by ``harness forecast --spec FILE``::

    name: sample-statistical
    description: Statistical baselines on the public sample, no context vs supporting evidence.
    tasks: sample                 # "sample" (the embedded public sample) or a path, relative to this file
    forecasters:                  # registered forecaster names, or {name, options}
      - naive
      - {name: chronos, options: {model: /models/chronos-t5-small}}
    contexts: [no-context, supporting-evidence]
    samples: 25                   # S, the paper's default (the leaderboard asks for >= 100)
    seed: 0
    time_limit: 600               # seconds per forecast
    agent: null                   # agent profile for model-backed forecasters (llm-dp)
    model_backend: null           # e.g. scripted (default: the profile's provider)
    script: null                  # script for the scripted backend, relative to this file
    dr_evidence: null             # a research run directory, or a folder of <benchmark_id>.json DR evidence
    budget: {max_cost_usd: 1.0}   # per forecast (task × condition) caps on model use
    submission: {organization: ..., contact: ..., reproduction: ..., notes: ...}

The same fields may sit under ``params`` of a task-spec-shaped file
(``name``, ``description``, ``template: drcik-forecast``, ``params: {...}``),
the form the shipped ``tasks/drcik/*.yaml`` use so ``harness tasks list`` shows
them; errors then name ``params.<field>``.

Every problem is a :class:`harness.config.ConfigError` naming the file and the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from harness.config import Budget, ConfigError, Strict, parse, read_yaml
from plugins.tasks.drcik import contexts as ctx
from plugins.tasks.drcik.loader import SAMPLE_DIR

SAMPLE = "sample"
TEMPLATE = "drcik-forecast"
DEFAULT_SAMPLES = 25


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


class ExperimentSpec(Strict):
    """See the module docstring.  Paths are relative to the spec file (:meth:`resolve`)."""

    name: str = Field(min_length=1)
    description: str = ""
    tasks: str = SAMPLE
    forecasters: list[ForecasterEntry] = Field(min_length=1)
    contexts: list[str] = Field(min_length=1)
    samples: int = Field(DEFAULT_SAMPLES, ge=1)
    seed: int = 0
    time_limit: float = Field(600.0, gt=0)
    agent: str | None = None
    model_backend: str | None = None
    script: str | None = None
    dr_evidence: str | None = None
    budget: Budget = Budget()
    submission: SubmissionInfo = SubmissionInfo()
    base_dir: str = Field(".", exclude=True)

    @field_validator("forecasters", mode="before")
    @classmethod
    def _names(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("contexts")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
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

    def resolve(self, path: str | None) -> Path | None:
        """``path`` relative to the spec file's folder (absolute paths unchanged)."""
        if path is None:
            return None
        p = Path(path).expanduser()
        return p if p.is_absolute() else Path(self.base_dir) / p

    @property
    def tasks_path(self) -> Path:
        return SAMPLE_DIR if self.tasks == SAMPLE else self.resolve(self.tasks)


def load_spec(path: Path | str) -> ExperimentSpec:
    """Read and validate an experiment spec YAML."""
    path = Path(path)
    data = read_yaml(path)
    prefix = ""
    if "template" in data:
        if data["template"] != TEMPLATE:
            raise ConfigError(path, [f"template: expected {TEMPLATE!r} for a forecasting experiment, "
                                     f"got {data['template']!r}"])
        extra = sorted(set(data) - {"name", "description", "template", "params"})
        if extra:
            raise ConfigError(path, [f"{k}: extra field (experiment fields go under params)" for k in extra])
        params = data.get("params") or {}
        if not isinstance(params, dict):
            raise ConfigError(path, ["params: expected a mapping of experiment fields"])
        data = {"name": data.get("name"), "description": data.get("description", ""), **params}
        prefix = "params"
    if "base_dir" in data:
        raise ConfigError(path, ["base_dir: not a spec field (paths are relative to the spec file)"])
    return parse(ExperimentSpec, {**data, "base_dir": str(path.resolve().parent)}, path, prefix=prefix)


def spec_from_options(data: dict[str, Any], where: str = "command line") -> ExperimentSpec:
    """An :class:`ExperimentSpec` from command-line values (paths relative to the working folder)."""
    return parse(ExperimentSpec, {**data, "base_dir": str(Path.cwd())}, where)

"""Configuration models: TaskSpec, AgentProfile, RunSettings (pydantic, ``extra="forbid"``).

Every loader turns a malformed file into a :class:`ConfigError` naming the file,
the field path and what was expected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError


class ConfigError(ValueError):
    """A configuration file is malformed.  ``str()`` names the file, field and expectation."""

    def __init__(self, file: Path | str, problems: list[str]):
        self.file = str(file)
        self.problems = problems
        super().__init__(f"{file}: " + "; ".join(problems))


class Strict(BaseModel):
    """Base for every config model: unknown fields are errors."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Prices(Strict):
    """USD per 1M tokens (TraceBench Table 21)."""

    input: float = Field(0.0, ge=0)
    cached: float = Field(0.0, ge=0)
    output: float = Field(0.0, ge=0)

    def cost(self, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float:
        """Equation (1): ((T_prompt - T_cached) p_in + T_cached p_cached + T_completion p_out) / 1e6.

        ``prompt_tokens`` includes the cached tokens.
        """
        return ((prompt_tokens - cached_tokens) * self.input + cached_tokens * self.cached
                + completion_tokens * self.output) / 1e6


class AgentProfile(Strict):
    """An evaluated agent configuration (TraceBench Table 19): platform, model, settings, prices."""

    name: str
    agent: str = Field(description="agent plugin name, e.g. claude-code or euclidean-1nn")
    model: str | None = None
    provider: Literal["anthropic", "openai", "google", "openrouter", "custom"] | None = None
    base_url: str | None = None
    reasoning_effort: Literal["low", "medium", "high", "xhigh"] | None = None
    image_support: bool = False
    prices: Prices = Prices()
    options: dict[str, Any] = Field(default_factory=dict)


class Budget(Strict):
    """Per-episode caps enforced by the model proxy (None: no cap)."""

    max_requests: int | None = Field(None, ge=1)
    max_tokens: int | None = Field(None, ge=1)
    max_cost_usd: float | None = Field(None, gt=0)


class RunSettings(Strict):
    """How episodes run.  ``episode_timeout`` defaults to 3,600 s as in the paper."""

    episode_timeout: float = Field(3600.0, gt=0)
    sandbox: str = "auto"
    cpus: float = Field(2.0, gt=0)
    memory_mb: int = Field(4096, ge=64)
    pids: int = Field(512, ge=16)
    tmp_mb: int = Field(1024, ge=16)
    rule_call_timeout: float = Field(30.0, gt=0)
    rule_budget: float = Field(600.0, gt=0)
    rule_memory_mb: int = Field(1024, ge=64)
    infra_retries: int = Field(2, ge=0)
    budget: Budget = Budget()


class TaskSpec(Strict):
    """A YAML task spec under ``tasks/``: a template name and its parameters."""

    name: str
    description: str = ""
    template: str
    params: dict[str, Any] = Field(default_factory=dict)


def format_validation_error(exc: ValidationError, prefix: str = "") -> list[str]:
    """One line per problem: ``field.path: message (got: value)``."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
        got = err.get("input")
        shown = "" if err["type"] == "missing" else f" (got: {got!r})"
        message = err["msg"].removeprefix("Value error, ").removeprefix("Assertion failed, ")
        lines.append(f"{loc or '<root>'}: {message}{shown}")
    return lines


def load_yaml(path: Path | str) -> Any:
    """Read a YAML (or JSON) document; ConfigError naming the file (and line) when unreadable or invalid."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise ConfigError(path, [f"{where}invalid YAML: {getattr(exc, 'problem', exc)}"]) from None
    return data


def read_yaml(path: Path | str) -> dict:
    """Read a YAML mapping; ConfigError when the file is missing, unparsable or not a mapping."""
    data = load_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(path, [f"<root>: expected a mapping of fields, got {type(data).__name__}"])
    return data


def parse(model: type[BaseModel], data: dict, file: Path | str, prefix: str = "") -> Any:
    """Validate ``data`` against ``model``; ConfigError naming ``file`` and each field path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(file, format_validation_error(exc, prefix)) from None


def load_profile(path: Path | str) -> AgentProfile:
    """Load an agent profile YAML."""
    return parse(AgentProfile, read_yaml(path), path)


def load_task_spec(path: Path | str) -> TaskSpec:
    """Load a TaskSpec YAML (the template's ``params`` are validated by :func:`task_params`)."""
    return parse(TaskSpec, read_yaml(path), path)


def task_params(spec: TaskSpec, params_model: type[BaseModel], file: Path | str) -> BaseModel:
    """Validate ``spec.params`` against the template's model; errors name ``params.<field>``."""
    return parse(params_model, spec.params, file, prefix="params")

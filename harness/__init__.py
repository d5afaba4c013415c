"""An evaluation harness for LLM agents on time-series analysis.

The names below are the public API's root, what a plugin author imports first (``from harness import
hookimpl, Simulator``): the contracts of the plugin kinds and their data classes, the errors and configuration
models plugins share, the client in-harness model users call the run's proxy with, and the bounded readers
of agent-controlled output.  The rest of the public API is in topic modules, each with its own short list
(as Inspect AI keeps its root small and its topic APIs in submodules):

- :mod:`harness.wire`: the model proxy's upstreams, wire formats, SSE, token usage and the proxy log (model
  backend plugins);
- :mod:`harness.atif`: agent trajectories in ATIF (agents, metric extractors);
- :mod:`harness.sandboxing`: the sandbox contract and the sandbox backends the engine implements;
- :mod:`harness.reporting`: report tables, figures, statistics and sections (report plugins);
- :mod:`harness.pages`: ``harness view`` pages and their HTML helpers (view plugins);
- :mod:`harness.testing`: the conformance kits.

Every other module under ``harness`` is the engine and may change without notice (import-linter lets the
built-in plugins import only this package and the topic modules).

The ``if TYPE_CHECKING`` block is the one list of the API: type checkers, IDEs and
import-linter read its imports (``py.typed`` marks the package as typed), while at
run time a name is imported on first access (PEP 562 ``__getattr__``, which reads
that block once, see :func:`harness.lazy.resolve`), so ``import harness`` loads nothing but this file:
``harness --version`` stays fast, and a plugin pays only for what it uses.  The topic modules load the same
way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    # -- hooks and the plugin registry ------------------------------------------
    from harness.hookspecs import hookimpl as hookimpl
    from harness.plugins import UnknownPlugin as UnknownPlugin
    from harness.plugins import get as get_plugin
    from harness.plugins import collect as collect_hook
    from harness.lazy import lazy_module as lazy_module
    # -- contracts of the plugin kinds and their data classes -----------------------
    from harness.contracts.simulator import NO_CHANGE as NO_CHANGE
    from harness.contracts.simulator import Channel as Channel
    from harness.contracts.simulator import Configuration as Configuration
    from harness.contracts.simulator import Intervention as Intervention
    from harness.contracts.simulator import Parameter as Parameter
    from harness.contracts.simulator import RuleOutcome as RuleOutcome
    from harness.contracts.simulator import Simulator as Simulator
    from harness.contracts.simulator import Trajectory as SimulatedTrajectory
    from harness.contracts.task import CallResult as CallResult
    from harness.contracts.task import EpisodeScore as EpisodeScore
    from harness.contracts.task import Materialized as Materialized
    from harness.contracts.task import SubmissionRunner as SubmissionRunner
    from harness.contracts.task import TaskTemplate as TaskTemplate
    from harness.contracts.task import AgentTaskTemplate as AgentTaskTemplate
    from harness.contracts.task import InHarnessTaskTemplate as InHarnessTaskTemplate
    from harness.contracts.agent import Agent as Agent
    from harness.contracts.agent import AgentContext as AgentContext
    from harness.contracts.agent import AgentInvocation as AgentInvocation
    from harness.contracts.agent import ImageRecipe as ImageRecipe
    from harness.contracts.forecaster import Forecast as Forecast
    from harness.contracts.forecaster import Forecaster as Forecaster
    from harness.contracts.forecaster import ForecastError as ForecastError
    from harness.contracts.forecaster import ForecastRequest as ForecastRequest
    from harness.contracts.metrics import EpisodeArtifacts as EpisodeArtifacts
    from harness.contracts.metrics import MetricExtractor as MetricExtractor
    from harness.contracts.model import ModelBackend as ModelBackend
    from harness.contracts.judge import ERROR as VERDICT_ERROR
    from harness.contracts.judge import MALFORMED as VERDICT_MALFORMED
    from harness.contracts.judge import OK as VERDICT_OK
    from harness.contracts.judge import Judge as Judge
    from harness.contracts.judge import Verdict as Verdict
    # -- errors and configuration ------------------------------------------------
    from harness.errors import EpisodeError as EpisodeError
    from harness.errors import ErrorKind as ErrorKind
    from harness.errors import HarnessError as HarnessError
    from harness.config import AgentProfile as AgentProfile
    from harness.config import Budget as Budget
    from harness.errors import ConfigError as ConfigError
    from harness.config import Prices as Prices
    from harness.config import Strict as Strict
    from harness.config import format_validation_error as format_validation_error
    from harness.config import load_yaml as load_yaml
    from harness.config import parse as parse_config
    from harness.profiles import resolve_profile as resolve_profile
    # -- in-harness model users (forecasters, judges, generation): one client of the run's proxy ---------
    from harness.model_client import CostCap as CostCap
    from harness.model_client import CostCapReached as CostCapReached
    from harness.model_client import ModelCall as ModelCall
    from harness.model_client import ModelClient as ModelClient
    from harness.model_client import read_run_settings as read_run_settings
    # -- bounded readers of agent-controlled output ------------------------------------------
    from harness import untrusted as untrusted
    # -- results: the one reader of a run's episodes (rows, scores; errors name the file) -------------
    from harness.store import RowError as RowError
    from harness.store import episode_rows as episode_rows
    from harness.store import finished_episodes as finished_episodes
    from harness.store import read_row as read_row
    from harness.store import read_score as read_score


def exports() -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute), read once from this file's ``if TYPE_CHECKING`` block."""
    from harness.lazy import api_exports

    return api_exports(__file__)


def __getattr__(name: str) -> Any:
    from harness.lazy import resolve

    return resolve(globals(), name)  # stores the value: later look-ups skip this function


def __dir__() -> list[str]:
    return sorted(["__version__", *exports()])

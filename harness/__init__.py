"""An evaluation harness for LLM agents on time-series analysis.

The names below are the public API a plugin author imports, always from the
top-level package (``from harness import hookimpl, Simulator``): the contracts
of the plugin kinds and their data classes, the errors and configuration models
plugins share, and the few helpers the built-in plugins share (the model proxy's
upstreams and wire formats, agent trajectories, report tables and figures, view
pages).  Every other module under ``harness`` is the engine and may change
without notice.  The conformance kits live in :mod:`harness.testing`.

The ``if TYPE_CHECKING`` block is the one list of the API: type checkers, IDEs and
import-linter read its imports (``py.typed`` marks the package as typed), while at
run time a name is imported on first access (PEP 562 ``__getattr__``, which reads
that block once), so ``import harness`` loads nothing but this file:
``harness --version`` stays fast, and a plugin pays only for what it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    # -- hooks and the plugin registry ------------------------------------------
    from harness.hookspecs import hookimpl as hookimpl
    from harness.plugins import UnknownPlugin as UnknownPlugin
    from harness.plugins import get as get_plugin
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
    from harness.design import PairedDesign as PairedDesign
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
    from harness.contracts.sandbox import HOME as HOME
    from harness.contracts.sandbox import WORKSPACE as WORKSPACE
    from harness.contracts.sandbox import ExecResult as ExecResult
    from harness.contracts.sandbox import Limits as Limits
    from harness.contracts.sandbox import Sandbox as Sandbox
    from harness.contracts.sandbox import SandboxBackend as SandboxBackend
    from harness.contracts.sandbox import SandboxSpec as SandboxSpec
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
    from harness.config import ConfigError as ConfigError
    from harness.config import Prices as Prices
    from harness.config import Strict as Strict
    from harness.config import format_validation_error as format_validation_error
    from harness.config import load_yaml as load_yaml
    from harness.config import parse as parse_config
    from harness.profiles import resolve_profile as resolve_profile
    # -- the model proxy: upstreams, wire formats, usage, the proxy log ----------
    from harness.proxy.upstream import DUMMY_API_KEY as DUMMY_API_KEY
    from harness.proxy.upstream import KEY_ENV_VARS as KEY_ENV_VARS
    from harness.proxy.upstream import Upstream as Upstream
    from harness.proxy.upstream import UpstreamConfigError as UpstreamConfigError
    from harness.proxy.upstream import UpstreamRequest as UpstreamRequest
    from harness.proxy.upstream import UpstreamResponse as UpstreamResponse
    from harness.proxy.http import HttpUpstream as HttpUpstream
    from harness.proxy.http import key_from_env as key_from_env
    from harness.proxy.sse import encode_event as encode_event
    from harness.proxy.sse import parse_sse as parse_sse
    from harness.proxy.usage import Usage as Usage
    from harness.proxy.wire.anthropic import from_anthropic as from_anthropic
    from harness.proxy.wire import Wire as Wire
    from harness.proxy.wire import WireFormat as WireFormat
    from harness.proxy.wire import Block as WireBlock
    from harness.proxy.wire import ToolSpec as ToolSpec
    from harness.proxy.wire import string_leaves as string_leaves
    from harness.proxy.wire import UsageStream as UsageStream
    from harness.proxy.wire import register_wire_format as register_wire_format
    from harness.proxy.wire import unregister_wire_format as unregister_wire_format
    from harness.proxy.wire import wire_format as wire_format
    from harness.proxy.wire import wire_of_record as wire_of_record
    from harness.proxy.wire import is_completion as is_completion
    from harness.proxy.wire import error_body as error_body
    from harness.proxy.wire.gemini import gemini_target as gemini_target
    from harness.proxy_records import ProxyRecords as ProxyRecords
    from harness.proxy.log import decode_body as decode_body
    from harness.proxy_records import load_log as load_log
    from harness.proxy_records import read_log as read_log
    from harness.proxy.client import request as proxy_request
    from harness.model_session import start_proxy as start_proxy
    # -- in-harness model users (forecasters, judges, generation): one client of the run's proxy ---------
    from harness.model_client import CostCap as CostCap
    from harness.model_client import CostCapReached as CostCapReached
    from harness.model_client import ModelCall as ModelCall
    from harness.model_client import ModelClient as ModelClient
    from harness.model_client import read_run_settings as read_run_settings
    from harness.limits import RunLimits as RunLimits
    # -- agent trajectories (ATIF) -----------------------------------------------
    from harness.trajectory import SCHEMA_VERSION as ATIF_SCHEMA_VERSION
    from harness.trajectory import Exchange as Exchange
    from harness.trajectory import TrajectoryError as TrajectoryError
    from harness.trajectory import content_text as content_text
    from harness.trajectory import exchanges as exchanges
    from harness.trajectory import parse_timestamp as parse_timestamp
    from harness.trajectory import steps as steps
    from harness.trajectory import to_dict as to_dict
    from harness.trajectory import validate_trajectory as validate_trajectory
    # -- sandbox backends the engine implements ----------------------------------
    from harness.sandbox.none import NoneBackend as NoneBackend
    from harness.sandbox.unshare import UnshareBackend as UnshareBackend
    from harness.sandbox.bubblewrap import BubblewrapBackend as BubblewrapBackend
    from harness.sandbox.docker import DockerBackend as DockerBackend
    from harness.image.cache import cache_root as cache_root
    # -- bounded readers of agent-controlled output; who owns a leftover (pid + start time) -----
    from harness import untrusted as untrusted
    from harness.sandbox import owner as process_owner
    # -- report tables, figures and statistics; view pages ----------------------
    from harness.report.load import ReportError as ReportError
    from harness.report.load import episode_dir as episode_dir
    from harness.report.load import read_json as read_json
    from harness.report.sections import Section as Section
    from harness.report.sections import report_options as report_options
    from harness.report.tables import DASH as DASH
    from harness.report.tables import Table as Table
    from harness.report.tables import fmt_change as fmt_change
    from harness.report.tables import fmt_count as fmt_count
    from harness.report.tables import fmt_pm as fmt_pm
    from harness.report.tables import fmt_share as fmt_share
    from harness.report.figures import figure_problems as figure_problems
    from harness.report.figures import fit_ticks as fit_ticks
    from harness.report.figures import format_axis as format_axis
    from harness.report.figures import new_figure as new_figure
    from harness.report.figures import no_data as no_data
    from harness.report.figures import outside_legend as outside_legend
    from harness.report.figures import pad_limits as pad_limits
    from harness.report.figures import series_style as series_style
    from harness.report.figures import set_title as set_title
    from harness.report.figures import spread_coinciding as spread_coinciding
    from harness.report.render import render as render_report
    from harness.report.paired import Contrast as Contrast
    from harness.report.paired import Selector as Selector
    from harness.report.paired import compare as compare_paired
    from harness.report.paired import contrast_record as contrast_record
    from harness.report.paired import effect_text as effect_text
    from harness.report.paired import unbounded_note as unbounded_note
    from harness.report.intervals import mean_interval as mean_interval
    from harness.report.stats import sign_flip_ci as sign_flip_ci
    from harness.report.stats import win_tie_loss as win_tie_loss
    from harness.report.stats import within_simulator_sd as within_simulator_sd
    from harness.view import EpisodeView as EpisodeView
    from harness.view import FolderPage as FolderPage
    from harness.view import Panel as Panel
    from harness.view import ViewPage as ViewPage
    from harness.view.html import Markup as Markup
    from harness.view.html import escape as html_escape
    from harness.view.html import fan_svg as fan_svg
    from harness.view.html import stacked_lines_svg as stacked_lines_svg
    from harness.view.html import table as html_table

_exports: dict[str, tuple[str, str]] | None = None


def exports() -> dict[str, tuple[str, str]]:
    """Public name -> (module, attribute), read once from this file's ``if TYPE_CHECKING`` block."""
    global _exports
    if _exports is None:
        import ast

        with open(__file__, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        block = next(node for node in tree.body if isinstance(node, ast.If)
                     and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        _exports = {alias.asname or alias.name: (node.module or "", alias.name)
                    for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    return _exports


def __getattr__(name: str) -> Any:
    import importlib

    if name == "__all__":
        return ["__version__", *exports()]
    try:
        module, attr = exports()[name]
    except KeyError:
        raise AttributeError(f"module 'harness' has no attribute {name!r}") from None
    parent = importlib.import_module(module) if module != __name__ else None
    value = getattr(parent, attr) if parent is not None and hasattr(parent, attr) \
        else importlib.import_module(f"{module}.{attr}")  # a module exported as a namespace
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(["__version__", *exports()])

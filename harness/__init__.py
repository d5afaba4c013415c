"""An evaluation harness for LLM agents on time-series analysis.

The names below are the public API a plugin author imports, always from the
top-level package (``from harness import hookimpl, Simulator``); every other
module under ``harness`` is the engine and may change without notice.  The
conformance kit lives in :mod:`harness.testing`.

Names resolve on first access (PEP 562 ``__getattr__``), so ``import harness``
loads nothing but this file: ``harness --version`` stays fast, and a plugin
pays only for what it uses.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: public name -> (engine module, attribute in it)
_EXPORTS: dict[str, tuple[str, str]] = {}


def _export(module: str, *names: str, **renamed: str) -> None:
    """Export ``names`` of ``module`` (``renamed``: public name -> attribute).  An attribute of ``""``
    exports the module itself as a namespace (e.g. ``harness.untrusted``)."""
    for name in names:
        _EXPORTS[name] = (module, name)
    for public, attr in renamed.items():
        _EXPORTS[public] = (module, attr)


# -- hooks and the plugin registry ------------------------------------------
_export("harness.hookspecs", "hookimpl", "hookspec")
_export("harness.plugins", "UnknownPlugin", "PluginProblem", get_plugin="get")
# -- contracts of the seven plugin kinds and their data classes --------------
_export("harness.contracts.simulator", "NO_CHANGE", "Channel", "Configuration", "Intervention", "Parameter",
        "RuleOutcome", "Simulator", SimulatedTrajectory="Trajectory")
_export("harness.contracts.task", "CallResult", "EpisodeScore", "Materialized", "SubmissionRunner", "TaskTemplate")
_export("harness.contracts.agent", "Agent", "AgentContext", "AgentInvocation", "ImageRecipe")
_export("harness.contracts.forecaster", "Forecast", "Forecaster", "ForecastError", "ForecastRequest")
_export("harness.contracts.metrics", "EpisodeArtifacts", "MetricExtractor")
_export("harness.contracts.sandbox", "HOME", "WORKSPACE", "ExecResult", "Limits", "Sandbox", "SandboxBackend",
        "SandboxSpec")
_export("harness.contracts.model", "ModelBackend")
_export("harness.contracts.judge", "Judge", "Verdict", VERDICT_ERROR="ERROR", VERDICT_MALFORMED="MALFORMED",
        VERDICT_OK="OK")
# -- errors and configuration ------------------------------------------------
_export("harness.errors", "ErrorKind", "HarnessError", "EpisodeError")
_export("harness.config", "ConfigError", "AgentProfile", "Budget", "Prices", "Strict", "format_validation_error",
        "load_yaml", "read_yaml", parse_config="parse")
# -- the model proxy: upstreams, wire formats, usage, the proxy log ----------
_export("harness.proxy.upstream", "DUMMY_API_KEY", "KEY_ENV_VARS", "MissingApiKey", "Secret", "Upstream",
        "UpstreamConfigError", "UpstreamRequest", "UpstreamResponse")
_export("harness.proxy.http", "HttpUpstream", "key_from_env")
_export("harness.proxy.sse", "encode_event", "parse_sse")
_export("harness.proxy.usage", "Usage", "from_anthropic")
_export("harness.proxy.wire", "Wire", "detect_wire", "error_body", "gemini_target")
_export("harness.proxy.log", "ProxyRecords", "load_log", "read_log", "decode_body")
_export("harness.proxy.client", proxy_request="request")
_export("harness.model_session", "ProxySession", "start_proxy")
# -- agent trajectories (ATIF) -----------------------------------------------
_export("harness.trajectory", "Exchange", "TrajectoryError", "content_text", "exchanges",
        "parse_timestamp", "steps", "to_dict", "validate_trajectory", "load_trajectory", "save_trajectory",
        AgentTrajectory="Trajectory", ATIF_SCHEMA_VERSION="SCHEMA_VERSION")
# -- sandbox backends the engine implements ----------------------------------
_export("harness.sandbox.none", "NoneBackend")
_export("harness.sandbox.unshare", "UnshareBackend")
_export("harness.sandbox.bubblewrap", "BubblewrapBackend")
_export("harness.sandbox.docker", "DockerBackend")
# -- bounded readers of agent-controlled output (results.json, rule.py returns, logs, evidence) -----
_export("harness._untrusted", untrusted="")
# -- who owns a leftover: pid + process start time (to remove what a killed process left) -----
_export("harness.sandbox.owner", process_owner="")
# -- runs, results and reports -----------------------------------------------
_export("harness.store", "RunStore", "versions")
_export("harness.profiles", "resolve_profile")
_export("harness.image.cache", "cache_root")
_export("harness.cli._console", "console")
_export("harness.report.load", "ReportError", "episode_dir", "read_json")
_export("harness.report.sections", "Section", "ReportOptions", "report_options")
_export("harness.report.tables", "Table", "DASH", "fmt", "fmt_pm", "fmt_change", "fmt_count", "fmt_share")
_export("harness.report.figures", "new_figure", "set_title", "format_axis", "pad_limits", "series_style",
        "spread_coinciding", "no_data", "outside_legend", "fit_ticks", "figure_problems")
_export("harness.view", "EpisodeView", "Panel", "ViewPage")
_export("harness.view.html", "Markup", "fan_svg", "stacked_lines_svg", html_escape="escape", html_table="table")
_export("harness.report.render", render_report="render")
_export("harness.report.stats", "sign_flip_ci", "sign_flip_pvalue", "win_tie_loss", "within_simulator_sd")

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'harness' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr:
        value = getattr(value, attr)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

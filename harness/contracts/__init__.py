"""The contract of each plugin kind.  Plugins subclass these; the host validates against them."""

from harness.contracts.agent import Agent, AgentContext, AgentInvocation, ImageRecipe
from harness.contracts.forecaster import Forecast, Forecaster, ForecastError, ForecastRequest
from harness.contracts.judge import Judge, Verdict
from harness.contracts.metrics import EpisodeArtifacts, MetricExtractor
from harness.contracts.model import ModelBackend
from harness.contracts.sandbox import HOME, WORKSPACE, ExecResult, Limits, Sandbox, SandboxBackend, SandboxSpec
from harness.contracts.simulator import (
    NO_CHANGE,
    Channel,
    Configuration,
    Intervention,
    Parameter,
    RuleOutcome,
    Simulator,
    Trajectory,
)
from harness.contracts.task import (AgentTaskTemplate, CallResult, EpisodeScore, InHarnessTaskTemplate, Materialized,
                                    SubmissionRunner, TaskTemplate)

__all__ = [
    "Agent", "AgentContext", "AgentInvocation", "ImageRecipe",
    "Forecast", "Forecaster", "ForecastError", "ForecastRequest",
    "Judge", "Verdict",
    "EpisodeArtifacts", "MetricExtractor", "ModelBackend",
    "HOME", "WORKSPACE", "ExecResult", "Limits", "Sandbox", "SandboxBackend", "SandboxSpec",
    "NO_CHANGE", "Channel", "Configuration", "Intervention", "Parameter", "RuleOutcome", "Simulator",
    "Trajectory", "CallResult", "EpisodeScore", "Materialized", "SubmissionRunner", "TaskTemplate", "AgentTaskTemplate",
    "InHarnessTaskTemplate",
]

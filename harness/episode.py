"""One episode's lifecycle: materialize -> sandbox -> agent -> collect -> score -> metrics.

The answer key is written to the episode's ``key/`` folder, which is never
mounted into a sandbox.  Agent failures (timeout, crash, invalid output) are
scored; infrastructure failures raise :class:`EpisodeError` with an infra kind
so the caller can retry them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from harness.config import AgentProfile, RunSettings
from harness.contracts import (
    HOME,
    WORKSPACE,
    Agent,
    AgentContext,
    EpisodeArtifacts,
    EpisodeScore,
    Limits,
    MetricExtractor,
    SandboxBackend,
    SandboxSpec,
    SubmissionRunner,
    TaskTemplate,
)
from harness.errors import EpisodeError, ErrorKind
from harness.proxy.log import last_request_seq
from harness.sandbox.errors import SandboxError
from harness.store import EpisodePaths, write_json
from harness.trajectory_floor import with_prompt


@dataclass
class EpisodePlan:
    """Everything needed to run one episode.  ``key``: the episode folder (``<label>-<episode_id>``);
    ``agent``/``backend`` are None for in-harness episodes (``in_harness``)."""

    key: str
    task_name: str
    template: TaskTemplate
    params: BaseModel
    episode: str
    profile: AgentProfile | None
    agent: Agent | None
    backend: SandboxBackend | None
    settings: RunSettings
    run_id: str
    extractors: list[MetricExtractor] = field(default_factory=list)
    model_channel: Any = None  # set by the run when the agent needs a model (proxy socket + URL)
    episode_id: str = ""
    in_harness: bool = False
    task_file: str = ""


def limits(settings: RunSettings) -> Limits:
    return Limits(cpus=settings.cpus, memory_mb=settings.memory_mb, pids=settings.pids,
                  tmp_mb=settings.tmp_mb)


def run_episode(
    plan: EpisodePlan,
    paths: EpisodePaths,
    runner_factory: Callable[[], SubmissionRunner],
) -> dict[str, Any]:
    """Run one episode and return its results row (also written to ``row.json``)."""
    paths.create()
    started = time.time()
    materialized = plan.template.materialize(plan.params, plan.episode, paths.workspace, paths.key)
    if plan.agent.privileged_inputs:
        plan.template.write_privileged(plan.params, plan.episode, paths.workspace, paths.key)
    (paths.root / "prompt.txt").write_text(materialized.prompt)

    channel = plan.model_channel
    ctx = AgentContext(
        workspace=WORKSPACE,
        home=HOME,
        prompt=materialized.prompt,
        profile=plan.profile,
        task_info=materialized.task_info,
        model_base_url=getattr(channel, "base_url", None),
        timeout=plan.settings.episode_timeout,
    )
    invocation = plan.agent.command(ctx)
    spec = SandboxSpec(
        workspace=paths.workspace,
        home=paths.home,
        ro_binds=list(invocation.ro_binds),
        env={"HOME": HOME, **invocation.env},
        limits=limits(plan.settings),
        proxy_socket=getattr(channel, "socket_path", None),
        labels={"harness.run": plan.run_id, "harness.episode": plan.key},
    )
    handed = time.time()  # the prompt's timestamp in a trajectory the harness writes (see with_prompt)
    try:
        sandbox = plan.backend.create(spec)
    except Exception as exc:  # noqa: BLE001 - any start failure is infrastructure
        raise EpisodeError(ErrorKind.SANDBOX_START, f"{plan.backend.name}: {exc}") from exc
    try:
        result = sandbox.exec(
            invocation.argv,
            env=invocation.env,
            cwd=invocation.cwd or WORKSPACE,
            stdin=invocation.stdin,
            timeout=plan.settings.episode_timeout,
        )
    finally:
        sandbox.destroy()
    (paths.root / "agent.stdout").write_text(result.stdout)
    (paths.root / "agent.stderr").write_text(result.stderr)

    usage = channel.close() if channel is not None else None
    signature = plan.agent.classify_failure(result.stdout, result.stderr, result.returncode)
    status, error_kind, error = _status(result, usage, signature, paths.root / "proxy.jsonl")

    try:
        score = plan.template.score(plan.params, plan.episode, paths.workspace, paths.key, runner_factory())
    except SandboxError as exc:  # the rule sandbox could not start: infrastructure, retried
        raise EpisodeError(ErrorKind.SANDBOX_START, f"rule evaluation: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - nothing an agent produces may stop the run
        score = EpisodeScore(metrics={}, warnings=[f"scoring failed: {type(exc).__name__}: {exc}"])
        status, error_kind, error = "failed", ErrorKind.SCORING.value, f"scoring raised {type(exc).__name__}: {exc}"
    write_json(paths.score, {"metrics": score.metrics, "details": score.details, "warnings": score.warnings})

    proxy_log = paths.root / "proxy.jsonl"
    metrics: dict[str, Any] = {}
    try:
        trajectory = plan.agent.trajectory(paths.home, result.stdout, proxy_log if proxy_log.exists() else None)
        if plan.agent.needs_model:  # at least the prompt and what the proxy saw, however early the agent stopped
            trajectory = with_prompt(trajectory, materialized.prompt, handed, error or "it exited 0",
                                     agent=plan.agent.name, version=plan.agent.version, model=plan.profile.model,
                                     proxy_log=proxy_log if proxy_log.exists() else None, usage=usage)
        if trajectory is not None:
            write_json(paths.root / "trajectory.json", trajectory)
        artifacts = EpisodeArtifacts(trajectory, proxy_log if proxy_log.exists() else None, paths.workspace,
                                     plan.profile)
        for extractor in plan.extractors:
            metrics.update(extractor.extract(artifacts))
    except Exception as exc:  # noqa: BLE001 - the score stands; the metrics say why they are missing
        metrics = {"metrics_error": f"{type(exc).__name__}: {exc}"[:300]}
    failures = list(getattr(usage, "assertion_failures", None) or [])
    if failures and status != "ok":
        error = f"{error}; model script assertion failed: {failures[0]}"

    row: dict[str, Any] = {
        "run_id": plan.run_id,
        "episode": plan.key,
        "episode_id": plan.episode_id,
        "task": plan.task_name,
        "template": plan.template.name,
        **_flat_params(plan.params),
        "profile": plan.profile.name,
        "agent": plan.agent.name,
        "model": plan.profile.model,
        "sandbox": plan.backend.name,
        "status": status,
        "error_kind": error_kind,
        "error": one_line(error),
        "exit_code": result.returncode,
        "agent_seconds": round(result.duration, 3),
        "episode_seconds": round(time.time() - started, 3),
        **score.metrics,
        **metrics,
    }
    if usage is not None:
        row.update(_usage_columns(usage))
    write_json(paths.row, row)
    return row


def run_harness_episode(plan: EpisodePlan, paths: EpisodePaths) -> dict[str, Any]:
    """Run one in-harness episode (no sandbox, no agent: e.g. a forecaster on a forecasting task) and return
    its results row (also written to ``row.json``); the template's metrics fill the row."""
    paths.root.mkdir(parents=True, exist_ok=True)
    started = time.time()
    status, error_kind, error = "ok", None, None
    try:
        score = plan.template.run_in_harness(plan.params, plan.episode, paths.root, plan.profile)
    except EpisodeError:
        raise
    except Exception as exc:  # a template bug must not stop the run: a typed failure of this episode
        score = EpisodeScore(metrics={})
        status, error_kind, error = "failed", ErrorKind.SCORING.value, f"{type(exc).__name__}: {exc}"
    write_json(paths.score, {"metrics": score.metrics, "details": score.details, "warnings": score.warnings})
    row: dict[str, Any] = {
        "run_id": plan.run_id,
        "episode": plan.key,
        "episode_id": plan.episode_id,
        "task": plan.task_name,
        "template": plan.template.name,
        "profile": None,
        "status": status,
        **score.metrics,
        "error_kind": error_kind,
        "error": one_line(error),
        "episode_seconds": round(time.time() - started, 3),
    }
    write_json(paths.row, row)
    return row


def one_line(text: str | None, limit: int = 300) -> str | None:
    """A reason as one line of at most ``limit`` characters (the summary table and results.parquet)."""
    if text is None:
        return None
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def _usage_columns(usage) -> dict[str, Any]:
    """Proxy-measured usage as results columns (lists as JSON text)."""
    data = usage.to_dict()
    data.pop("episode_id", None)
    data["proxy_errors"] = json.dumps(data.pop("errors", []), default=str)
    data["assertion_failures"] = json.dumps(data.pop("assertion_failures", []))
    return data


PROXY_ERROR_KINDS = {"rate_limited": ErrorKind.RATE_LIMIT, "upstream_error": ErrorKind.UPSTREAM,
                     "upstream_unreachable": ErrorKind.UPSTREAM}


def _status(result, usage, signature: str | None, proxy_log: Path) -> tuple[str, str | None, str | None]:
    """(status, error kind, message) of a finished agent run; raises EpisodeError for infra failures.

    Order: a budget cap; an agent that failed right after the provider failed
    (the last proxied request was an upstream error) is infrastructure; a
    failure signature the agent plugin reports; a timeout; a non-zero exit.
    """
    budget = getattr(usage, "budget_exceeded", None)
    if budget:
        return "failed", ErrorKind.BUDGET.value, f"budget exceeded: {budget}"
    failed = result.timed_out or result.returncode != 0 or signature is not None
    errors = list(getattr(usage, "errors", None) or [])
    infra_signature = signature is None or ErrorKind(signature).infra
    if failed and errors and infra_signature and errors[-1].seq == last_request_seq(proxy_log):
        last = errors[-1]
        raise EpisodeError(PROXY_ERROR_KINDS.get(str(last.kind), ErrorKind.UPSTREAM), last.message)
    if signature is not None and ErrorKind(signature).infra:
        raise EpisodeError(ErrorKind(signature), "the agent reported a provider or proxy failure")
    if result.timed_out:
        return "failed", ErrorKind.TIMEOUT.value, f"agent killed after {result.duration:.0f} s wall-clock limit"
    if signature is not None:
        return "failed", signature, f"the agent's output shows a failure ({signature})"
    if result.returncode != 0:
        tail = result.stderr.strip().splitlines()[-1:] or [""]
        return "failed", ErrorKind.CRASH.value, f"agent exited with code {result.returncode}: {tail[0][:300]}"
    return "ok", None, None


def _flat_params(params: BaseModel) -> dict[str, Any]:
    out = {}
    for key, value in params.model_dump(mode="json").items():
        out[key] = value if isinstance(value, (str, int, float, bool)) or value is None else json.dumps(value)
    return out


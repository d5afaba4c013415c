"""One episode's lifecycle: materialize -> sandbox -> agent -> collect -> score -> metrics.

The answer key is written to the episode's ``key/`` folder, which is never
mounted into a sandbox.  Agent failures (timeout, crash, invalid output) are
scored; infrastructure failures raise :class:`EpisodeError` with an infra kind
so the caller can retry them.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel

from harness.columns import CORE, Part, RowBuilder, row_parts
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
from harness import interrupt
from harness.diskfull import check_room, is_disk_full, reason as disk_full_reason, release_reserves, stopped
from harness.errors import EpisodeError, ErrorKind
from harness.native_logs import compress_home
from harness.proxy_records import last_request_seq, one_parse_per_episode, proxy_log as find_proxy_log
from harness.sandbox.errors import SandboxError
from harness.store import EpisodePaths, write_json
from harness.trajectory_floor import with_prompt
from harness.workspace_cap import WorkspaceCap


#: Episodes writing their inputs at once (``materialize`` and the inputs record): one per two CPUs this process
#: may use, at least one.  Writing inputs is CPU work, mostly under the GIL, and the sandboxes and agents of the
#: episodes that have written theirs start meanwhile on the other CPUs, at about the same cost: more writers
#: than that only share the same CPUs between more episodes, which then all finish late.  At ``--jobs 8`` on
#: two cores the first eight episodes started together and each spent 1.5 s on harness work (0.26 s alone),
#: and the episodes after them kept starting in step for several rounds (``benchmarks/scale.py``).  With one
#: writer per CPU they started in pairs, and each pair's writers slowed each other: 0.30-0.37 s of overhead per
#: episode against 0.26-0.33 s with one writer (two cores, same runs alternated).
_WRITING_INPUTS = threading.BoundedSemaphore(max(1, len(os.sched_getaffinity(0)) // 2))


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
    model_client: Any = None  # set by the run when an in-harness episode calls a model (harness.ModelClient)
    episode_id: str = ""
    in_harness: bool = False
    task_file: str = ""
    spec_sha256: str | None = None  # the task spec as run (harness.provenance.spec_sha256)
    model_backend: str | None = None  # set by the run with the proxy: the backend the episode's model calls reach
    model_billed: bool | None = None  # whether that backend costs money (harness.billing)


def limits(settings: RunSettings) -> Limits:
    return Limits(cpus=settings.cpus, memory_mb=settings.memory_mb, pids=settings.pids,
                  tmp_mb=settings.tmp_mb, workspace_mb=settings.workspace_mb)


def stops_on_full_disk(run: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Decorate ``run(plan, paths, ..., attempt)``: ``ENOSPC``/``EDQUOT`` while it runs writes the episode's
    row (``failed``, ``disk_full``, ``disk full: ...``) into the room the run's reserve gives back (no row when
    even that does not fit; a resume runs the episode again either way) and raises
    :class:`harness.diskfull.DiskFull`, which stops the run (see :mod:`harness.diskfull`)."""

    @functools.wraps(run)
    def episode(plan: EpisodePlan, paths: EpisodePaths, *args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return run(plan, paths, *args, **kwargs)
        except OSError as exc:
            if not is_disk_full(exc):
                raise
            release_reserves()
            attempt = kwargs.get("attempt", args[-1] if args and isinstance(args[-1], int) else 0)
            try:
                infra_failed_row(plan, paths, attempt, EpisodeError(ErrorKind.DISK_FULL, str(exc)),
                                 status="failed", error=disk_full_reason(exc))
            except OSError:
                pass
            raise stopped(paths.root, exc) from None

    return episode


@stops_on_full_disk
def run_episode(
    plan: EpisodePlan,
    paths: EpisodePaths,
    runner_factory: Callable[[], SubmissionRunner],
    attempt: int = 0,
) -> dict[str, Any]:
    """Run one episode and return its results row (also written to ``row.json``, once).  ``attempt``:
    infrastructure retries spent before this one (the row's ``infra_retries``).  The inputs the template
    can rebuild are recorded once written and, at the end (also of a failed episode), those the agent left
    unchanged are dropped from the folder (:mod:`harness.inputs`; ``RunSettings.keep_inputs`` keeps them)."""
    paths.create()
    try:
        return _run_agent_episode(plan, paths, runner_factory, attempt)
    finally:
        _release_inputs(plan, paths)


def _release_inputs(plan: EpisodePlan, paths: EpisodePaths) -> None:
    """:func:`harness.inputs.release` of the episode folder; a failure is a warning on stderr, never the
    episode's result (its files then stay as they are, which loses nothing)."""
    from harness import inputs

    try:
        inputs.release(paths.root, keep=plan.settings.keep_inputs)
    except Exception as exc:  # noqa: BLE001 - keeping an input costs disk, never a result
        _warn(f"episode {plan.key}: its inputs were kept in full: releasing them failed: "
              f"{type(exc).__name__}: {one_line(str(exc), 300)}")


def _warn(text: str) -> None:
    import sys

    with contextlib.suppress(Exception):
        print(f"warning: {text}", file=sys.stderr, flush=True)


def _record_inputs(plan: EpisodePlan, paths: EpisodePaths) -> None:
    """:func:`harness.inputs.record` of the episode's inputs; a failure is a warning and keeps them in full."""
    from harness import inputs

    try:
        inputs.record(plan.template, plan.params, plan.episode, paths.root)
    except Exception as exc:  # noqa: BLE001 - keeping an input costs disk, never a result
        (paths.root / inputs.INPUTS_FILE).unlink(missing_ok=True)
        _warn(f"episode {plan.key}: its inputs are kept in full: recording them failed: "
              f"{type(exc).__name__}: {one_line(str(exc), 300)}")


def _run_agent_episode(plan: EpisodePlan, paths: EpisodePaths, runner_factory: Callable[[], SubmissionRunner],
                       attempt: int) -> dict[str, Any]:
    started = time.time()  # the wait for a slot below is part of the episode's time
    with _WRITING_INPUTS:
        materialized = plan.template.materialize(plan.params, plan.episode, paths.workspace, paths.key)
        if plan.agent.privileged_inputs:
            plan.template.write_privileged(plan.params, plan.episode, paths.workspace, paths.key)
        _record_inputs(plan, paths)
    (paths.root / "prompt.txt").write_text(materialized.prompt)
    inputs = inputs_digest(plan, paths.key)

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
    interrupt.check()
    handed = time.time()  # the prompt's timestamp in a trajectory the harness writes (see with_prompt)
    try:
        sandbox = plan.backend.create(spec)
    except Exception as exc:  # noqa: BLE001 - any start failure is infrastructure
        raise EpisodeError(ErrorKind.SANDBOX_START, f"{plan.backend.name}: {exc}") from exc
    try:
        with interrupt.guard(sandbox.destroy), WorkspaceCap([paths.workspace, paths.home], spec.limits.workspace_mb,
                                                             sandbox.destroy) as cap:
            result = sandbox.exec(
                invocation.argv,
                env=invocation.env,
                cwd=invocation.cwd or WORKSPACE,
                stdin=invocation.stdin,
                timeout=plan.settings.episode_timeout,
            )
    finally:
        sandbox.destroy()
    interrupt.check()  # stopped during the agent phase: no scoring
    check_room(paths.root)  # an agent that filled the disk: a disk-full episode (harness.diskfull), not its score
    (paths.root / "agent.stdout").write_text(result.stdout)
    (paths.root / "agent.stderr").write_text(result.stderr)

    usage = channel.close() if channel is not None else None
    signature = plan.agent.classify_failure(result.stdout, result.stderr, result.returncode)
    status, error_kind, error = _status(result, usage, signature, find_proxy_log(paths.root))
    if cap.over is not None:  # stopped for writing past workspace_mb: that, not how it died, is the reason
        status, error_kind, error = "failed", ErrorKind.WORKSPACE_LIMIT.value, cap.reason()

    score, failure = score_episode(plan, paths, runner_factory)
    if failure is not None:
        status, error_kind, error = "failed", ErrorKind.SCORING.value, failure

    metrics = _metrics(plan, paths, result.stdout, (materialized.prompt, handed, error or "it exited 0", usage))
    compress_home(paths.home)  # the native logs, read above, kept compressed (a file it cannot do stays plain)
    failures = list(getattr(usage, "assertion_failures", None) or [])
    if failures and status != "ok":
        error = f"{error}; model script assertion failed: {failures[0]}"

    return write_row(plan, paths, attempt, [
        ("harness", _key(plan)),
        ("template", {k: v for k, v in _flat_params(plan.params).items() if k not in CORE}),
        ("harness", {"profile": plan.profile.name, "agent": plan.agent.name, "model": plan.profile.model,
                     "sandbox": plan.backend.name, "status": status, "error_kind": error_kind, "error": one_line(error),
                     "exit_code": result.returncode, "agent_seconds": round(result.duration, 3),
                     "episode_seconds": round(time.time() - started, 3)}),
        ("template", score.metrics),
        *metrics,
        ("proxy", _usage_columns(usage) if usage is not None else {}),
        ("harness", provenance(plan, inputs)),
    ])


def score_episode(plan: EpisodePlan, paths: EpisodePaths,
                  runner_factory: Callable[[], SubmissionRunner]) -> tuple[EpisodeScore, str | None]:
    """Score what the agent left in the episode's workspace (the template's
    :meth:`~harness.contracts.AgentTaskTemplate.score`) and write ``score.json``; returns the score and, when
    the scoring raised, why (``scoring raised Type: message``; the score is then empty).  A rule sandbox that
    cannot start raises :class:`EpisodeError` (``sandbox_start``, infrastructure)."""
    try:
        score = plan.template.score(plan.params, plan.episode, paths.workspace, paths.key, runner_factory())
        failure = None
    except SandboxError as exc:  # the rule sandbox could not start: infrastructure, retried
        interrupt.check()
        raise EpisodeError(ErrorKind.SANDBOX_START, f"rule evaluation: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - nothing an agent produces may stop the run
        score = EpisodeScore(metrics={}, warnings=[f"scoring failed: {type(exc).__name__}: {exc}"])
        failure = f"scoring raised {type(exc).__name__}: {exc}"
    write_json(paths.score, {"metrics": score.metrics, "details": score.details, "warnings": score.warnings})
    return score, failure


def _metrics(plan: EpisodePlan, paths: EpisodePaths, stdout: str,
             floor: tuple[str, float, str, Any]) -> list[tuple[Any, dict[str, Any]]]:
    """The extractors' columns as ``(owner, values)`` parts of the row (:func:`write_row`; owner None: the
    metrics loop's own ``metrics_error``).  Each extractor runs on its own: one that raises leaves its own
    columns None and is named in ``metrics_error`` (``name: Type: message``, ``; ``-separated), the others' columns
    stand; a trajectory that cannot be built is named there too (``trajectory: ...``) and the extractors run
    without one.  Nothing here touches the proxy's usage columns (tokens, cost), which the row takes from
    the proxy.  ``floor``: (prompt, time it was handed over, how the agent ended, proxy usage): an agent that
    uses a model always has a trajectory, at least the prompt and what the proxy saw (:func:`with_prompt`).
    The converter, the floor and the extractors share one parse of the proxy log."""
    with one_parse_per_episode():
        return _metrics_once(plan, paths, stdout, floor)


def _metrics_once(plan: EpisodePlan, paths: EpisodePaths, stdout: str,
                  floor: tuple[str, float, str, Any]) -> list[tuple[Any, dict[str, Any]]]:
    log = find_proxy_log(paths.root)
    errors: list[str] = []
    trajectory = None
    try:
        trajectory = plan.agent.trajectory(paths.home, stdout, log)
    except Exception as exc:  # noqa: BLE001 - the score stands; the row says why the trajectory is missing
        trajectory = None
        errors.append(f"trajectory: {type(exc).__name__}: {one_line(str(exc), 200)}")
    try:
        if plan.agent.needs_model:  # at least the prompt and what the proxy saw, however early the agent stopped
            prompt, handed, ended, usage = floor
            trajectory = with_prompt(trajectory, prompt, handed, ended, agent=plan.agent.name,
                                     version=plan.agent.version, model=plan.profile.model, proxy_log=log, usage=usage)
    except Exception as exc:  # noqa: BLE001 - the agent's own trajectory (if any) stands, and is written below
        errors.append(f"trajectory floor: {type(exc).__name__}: {one_line(str(exc), 200)}")
    try:
        if trajectory is not None:
            write_json(paths.root / "trajectory.json", trajectory)
    except Exception as exc:  # noqa: BLE001 - the score stands; the row says why the trajectory is missing
        trajectory = None
        errors.append(f"trajectory: {type(exc).__name__}: {one_line(str(exc), 200)}")
    artifacts = EpisodeArtifacts(trajectory, log, paths.workspace, plan.profile)
    return run_extractors(plan.extractors, artifacts, errors)


def run_extractors(extractors: list[MetricExtractor], artifacts: EpisodeArtifacts,
                   errors: list[str]) -> list[tuple[Any, dict[str, Any]]]:
    """Each extractor's columns on ``artifacts`` as ``(extractor, values)`` parts of the row, then ``(None,
    {"metrics_error": ...})`` when ``errors`` (earlier problems, e.g. the trajectory's) or an extractor raised:
    one that raises leaves its own columns None and is named there (``name: Type: message``)."""
    metrics: list[tuple[Any, dict[str, Any]]] = []
    for extractor in extractors:
        try:
            metrics.append((extractor, extractor.extract(artifacts)))
        except Exception as exc:  # noqa: BLE001 - this extractor's columns only
            metrics.append((extractor, dict.fromkeys(getattr(extractor, "columns", ()) or ())))
            errors.append(f"{getattr(extractor, 'name', type(extractor).__name__)}: {type(exc).__name__}: "
                          f"{one_line(str(exc), 200)}")
    if errors:
        metrics.append((None, {"metrics_error": "; ".join(errors)}))
    return metrics


@stops_on_full_disk
def run_harness_episode(plan: EpisodePlan, paths: EpisodePaths, attempt: int = 0) -> dict[str, Any]:
    """Run one in-harness episode (no sandbox, no agent: e.g. a forecaster on a forecasting task) and return
    its results row (also written to ``row.json``); the template's metrics fill the row (its ``status`` among
    them; ``failed`` when the template raises).  ``attempt``: infrastructure retries spent before this one."""
    paths.root.mkdir(parents=True, exist_ok=True)
    started = time.time()
    error_kind, error = None, None
    try:
        if plan.model_client is not None:
            score = plan.template.run_in_harness(plan.params, plan.episode, paths.root, plan.profile,
                                                 model=plan.model_client)
        else:
            score = plan.template.run_in_harness(plan.params, plan.episode, paths.root, plan.profile)
    except EpisodeError:
        raise
    except Exception as exc:  # a template bug must not stop the run: a typed failure of this episode
        score = EpisodeScore(metrics={"status": "failed"})
        error_kind, error = ErrorKind.SCORING.value, f"{type(exc).__name__}: {exc}"
    write_json(paths.score, {"metrics": score.metrics, "details": score.details, "warnings": score.warnings})
    return write_row(plan, paths, attempt, [
        ("harness", _key(plan)),
        ("template", {"status": "ok", **score.metrics}),
        ("harness", {"error_kind": error_kind, "error": one_line(error),
                     "episode_seconds": round(time.time() - started, 3),
                     **provenance(plan, inputs_digest(plan, None))}),
    ])


def infra_failed_row(plan: EpisodePlan, paths: EpisodePaths, attempt: int, exc: EpisodeError,
                     status: str = "infra_failed", error: str | None = None) -> dict[str, Any]:
    """The row of an episode whose infrastructure failed after the allowed retries (also written to
    ``row.json``): ``status`` ``infra_failed`` (an in-harness template's own ``status`` column); ``status``
    and ``error`` (default ``str(exc)``) for another failure of the harness's own (a full disk)."""
    paths.root.mkdir(parents=True, exist_ok=True)
    failure = {"error_kind": exc.kind.value, "error": error or str(exc), **provenance(plan, None, scored=False)}
    if plan.in_harness:
        return write_row(plan, paths, attempt, [("harness", _key(plan)), ("template", {"status": status}),
                                                ("harness", failure)])
    return write_row(plan, paths, attempt, [("harness", {
        **_key(plan), "profile": plan.profile.name if plan.profile else None,
        "agent": plan.agent.name if plan.agent else None, "sandbox": plan.backend.name if plan.backend else None,
        "status": status, **failure})])


def write_row(plan: EpisodePlan, paths: EpisodePaths, attempt: int,
              values: list[tuple[Any, dict[str, Any]]]) -> dict[str, Any]:
    """Build the episode's results row from its owners' values and write it to ``row.json`` (once).

    The one place a results row is made.  ``values``: ``(owner, values)`` in row order, the owner being
    ``"harness"``, ``"template"``, ``"proxy"`` (the measured usage) or a metric extractor (None: the metrics
    loop itself, e.g. ``metrics_error``); the model backend (``model_backend``, ``model_billed``:
    :mod:`harness.billing`) and the harness's ``infra_retries`` (``attempt``) end the row.  A value
    for a column another owner declares raises :class:`harness.columns.ColumnCollision` naming both
    (see :mod:`harness.columns` for the parts and the duplicate rule)."""
    parts = row_parts(plan.template, plan.extractors, plan.in_harness)
    by_owner = {"harness": parts[0], "template": parts[1], "proxy": parts[-1],
                **{id(e): p for e, p in zip(plan.extractors, parts[2:-1])}}
    loop = Part("the metrics loop", {})
    builder = RowBuilder(parts)
    for owner, part_values in values:
        part = loop if owner is None else by_owner[owner if isinstance(owner, str) else id(owner)]
        builder.add(part, part_values)
    builder.add(parts[0], {"model_backend": plan.model_backend, "model_billed": plan.model_billed})
    builder.add(parts[0], {"infra_retries": attempt})
    write_json(paths.row, builder.row)
    return builder.row


def provenance(plan: EpisodePlan, inputs: str | None, scored: bool = True) -> dict[str, Any]:
    """The row's provenance columns (:data:`harness.columns.PROVENANCE`): the spec hash, ``inputs`` (the
    template's inputs digest), the harness version and commit and, for a row the template scored
    (``scored``), the scorer's and the extractors' versions."""
    from harness.provenance import code_columns

    code = code_columns(plan.template, [] if plan.in_harness else plan.extractors)
    if not scored:
        code.update(scorer_version=None, extractor_versions=None)
    return {**code, "spec_sha256": plan.spec_sha256, "inputs_digest": inputs, "rescored_at": None}


def inputs_digest(plan: EpisodePlan, key_dir: Path | None) -> str | None:
    """The template's :meth:`~harness.contracts.TaskTemplate.inputs_digest` of the episode (None when it gives
    none, or fails: a digest never stops an episode)."""
    try:
        digest = plan.template.inputs_digest(plan.params, plan.episode, key_dir)
    except Exception:  # noqa: BLE001 - provenance is a record, not a condition of the episode
        return None
    return str(digest) if digest is not None else None


def _key(plan: EpisodePlan) -> dict[str, Any]:
    return {"run_id": plan.run_id, "episode": plan.key, "episode_id": plan.episode_id, "task": plan.task_name,
            "template": plan.template.name}


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


def _status(result, usage, signature: str | None, proxy_log: Path | None) -> tuple[str, str | None, str | None]:
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
    if failed and errors and infra_signature and proxy_log is not None and errors[-1].seq == last_request_seq(proxy_log):
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
    """The params as row values (nested ones as JSON text).  A param named like a harness column (e.g. a
    template's ``agent`` param) is left out of agent-episode rows: the harness's column stands there."""
    out = {}
    for key, value in params.model_dump(mode="json").items():
        out[key] = value if isinstance(value, (str, int, float, bool)) or value is None else json.dumps(value)
    return out


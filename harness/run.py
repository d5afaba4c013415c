"""A run: one task spec x one agent profile x repetition seeds -> a run directory.

Episodes already finished in the run directory are skipped (resume).
Infrastructure failures are retried with exponential backoff up to
``RunSettings.infra_retries`` and reported apart from agent failures.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from harness import plugins as plugin_registry
from harness.config import (
    AgentProfile,
    ConfigError,
    RunSettings,
    TaskSpec,
    load_profile,
    load_task_spec,
    task_params,
)
from harness.contracts import SandboxBackend, TaskTemplate
from harness.episode import EpisodePlan, run_episode
from harness.errors import EpisodeError, HarnessError
from harness.store import RunStore, versions, write_json

REPO_ROOT = Path(__file__).resolve().parent.parent


def profile_dirs() -> list[Path]:
    """Where ``--agent NAME`` is looked up: ``$HARNESS_PROFILES`` (os.pathsep-separated),
    ``./agent_profiles``, then the profiles shipped beside the harness."""
    dirs = [Path(p) for p in os.environ.get("HARNESS_PROFILES", "").split(os.pathsep) if p]
    return dirs + [Path("agent_profiles"), REPO_ROOT / "agent_profiles"]


def resolve_profile(name: str) -> AgentProfile:
    """Load the profile named ``name`` (or at path ``name``)."""
    candidate = Path(name)
    if candidate.suffix in (".yaml", ".yml") and candidate.exists():
        return load_profile(candidate)
    for d in profile_dirs():
        for suffix in (".yaml", ".yml"):
            path = d / f"{name}{suffix}"
            if path.exists():
                return load_profile(path)
    known = sorted({p.stem for d in profile_dirs() if d.is_dir() for p in d.glob("*.y*ml")})
    raise HarnessError(f"no agent profile named {name!r} (known: {', '.join(known) or 'none'})")


@dataclass
class LoadedTask:
    path: Path
    spec: TaskSpec
    template: TaskTemplate
    params: Any


def load_task(path: Path | str) -> LoadedTask:
    """Load and validate a TaskSpec and its template params."""
    path = Path(path)
    spec = load_task_spec(path)
    try:
        template = plugin_registry.get("task_template", spec.template)
    except plugin_registry.UnknownPlugin as exc:
        raise ConfigError(path, [f"template: {exc}"]) from None
    params = task_params(spec, template.params_model, path)
    params = template.rewrite_paths(params, path)
    return LoadedTask(path, spec, template, params)


def with_seed(task: LoadedTask, seed: int | None) -> Any:
    """The task's params with the repetition seed replaced (when the template has one)."""
    if seed is None:
        return task.params
    if "seed" not in type(task.params).model_fields:
        raise HarnessError(f"template {task.template.name!r} has no 'seed' parameter; drop --seed")
    return task.params.model_copy(update={"seed": seed})


def choose_backend(name: str, agent) -> SandboxBackend:
    """The sandbox backend for this agent (see :func:`harness.sandbox.choose_backend`)."""
    from harness.sandbox import choose_backend as choose

    backend = choose(name, prefer_image=agent.needs_image)
    if backend.runs_images and not agent.image_capable:
        raise HarnessError(f"agent {agent.name!r} runs on the host's Python and cannot run in the "
                           f"{backend.name!r} sandbox: use --sandbox auto, bubblewrap, unshare or none")
    return backend


def preflight(task: LoadedTask, profile: AgentProfile, settings: RunSettings, model_backend: str | None = None,
              model_options: dict | None = None) -> None:
    """Check everything a run needs before anything is written: the agent, the sandbox backend and,
    for LLM agents, the model backend's options (script, key).  Raises a user-facing error."""
    agent = plugin_registry.get("agent", profile.agent)
    choose_backend(settings.sandbox, agent)
    if agent.needs_model:
        name = model_backend or profile.provider
        if not name:
            raise HarnessError(f"profile {profile.name!r} names no provider; pass --model-backend")
        opts = {"base_url": profile.base_url, "model": profile.model, **(model_options or {})}
        plugin_registry.get("model_backend", name).upstream(opts)


def execute(
    task: LoadedTask,
    profile: AgentProfile,
    seeds: list[int | None],
    store: RunStore,
    settings: RunSettings,
    on_event: Callable[[str, dict], None] = lambda event, data: None,
    model_backend: str | None = None,
    model_options: dict | None = None,
) -> list[dict[str, Any]]:
    """Run every episode of ``task`` for each seed with ``profile``; return the rows."""
    agent = plugin_registry.get("agent", profile.agent)
    backend = choose_backend(settings.sandbox, agent)
    extractors = list(r.obj for r in plugin_registry.plugins().registry("metric_extractor").values())
    from harness.submission import make_runner

    def runner_factory():
        return make_runner(backend, limits=None, call_timeout=settings.rule_call_timeout,
                           memory_mb=settings.rule_memory_mb, budget=settings.rule_budget)

    plans = []
    for seed in seeds:
        params = with_seed(task, seed)
        for episode in task.template.episodes(params):
            rep = getattr(params, "seed", None)
            suffix = f"-seed{rep}" if rep is not None else ""
            key = f"{task.spec.name}{suffix}" + (f"-{episode}" if episode != "0" else "")
            plans.append(EpisodePlan(key, task.spec.name, task.template, params, episode, profile, agent,
                                     backend, settings, store.run_id, extractors))

    identity = {"task": task.spec.model_dump(mode="json"), "profile": profile.model_dump(mode="json")}
    previous = store.read_run_json()
    if previous is not None:
        before = {"task": {k: v for k, v in previous.get("task", {}).items() if k != "file"},
                  "profile": previous.get("profile")}
        if before != identity:
            raise HarnessError(f"{store.root} holds a run of another task or agent profile "
                               f"({before['task'].get('name')} with {(before['profile'] or {}).get('name')}): "
                               "resume it with the same --task and --agent, or choose another --out")
        on_event("resume", {"finished": sum(store.episode(p.key).row.exists() for p in plans)})
    store.write_run_json({
        "run_id": store.run_id,
        "task": {"file": str(task.path), **task.spec.model_dump(mode="json")},
        "episodes": [{"key": p.key, "params": p.params.model_dump(mode="json")} for p in plans],
        "profile": profile.model_dump(mode="json"),
        "settings": settings.model_dump(mode="json"),
        "sandbox": backend.name,
        "sandbox_details": backend.describe(),
        "rule_budget_seconds": settings.rule_budget,
        "agent": {"name": agent.name, "version": agent.version},
        "model_backend": model_backend,
        "versions": versions(),
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    })
    details = backend.describe()
    on_event("start", {"episodes": len(plans), "sandbox": backend.name,
                       "limits_not_enforced": details.get("limits_not_enforced") or ""})
    for params in {id(p.params): p.params for p in plans}.values():
        try:
            task.template.prepare(params, lambda done, total, text: on_event(
                "message", {"text": f"{text} {done}/{total}"}))
        except ValueError as exc:
            raise HarnessError(f"{task.path}: cannot prepare the task: {exc}") from exc

    proxy = None
    if agent.needs_model:
        from harness.model_session import start_proxy

        proxy = start_proxy(profile, model_backend, model_options or {})
    rows = []
    try:
        for plan in plans:
            paths = store.episode(plan.key)
            done = _read(paths.row) if paths.row.exists() else None
            if done is not None and done.get("status") != "infra_failed":
                rows.append(done)
                on_event("skip", {"key": plan.key})
                continue
            on_event("episode", {"key": plan.key})
            rows.append(_with_retries(plan, paths, runner_factory, settings, proxy, on_event))
            on_event("done", {"key": plan.key, "row": rows[-1]})
    finally:
        if proxy is not None:
            proxy.stop()
    store.write_results()
    return rows


def _with_retries(plan, paths, runner_factory, settings, proxy, on_event) -> dict[str, Any]:
    attempt = 0
    while True:
        if paths.root.exists():  # an interrupted or failed attempt: start the episode afresh
            shutil.rmtree(paths.root)
        try:
            if proxy is not None:
                plan.model_channel = proxy.open(plan.key, paths.root, settings.budget)
            row = run_episode(plan, paths, runner_factory)
            row["infra_retries"] = attempt
            return row
        except EpisodeError as exc:
            if not exc.kind.infra:
                raise
            if attempt >= settings.infra_retries:
                row = {"run_id": plan.run_id, "episode": plan.key, "task": plan.task_name,
                       "profile": plan.profile.name, "agent": plan.agent.name, "sandbox": plan.backend.name,
                       "status": "infra_failed", "error_kind": exc.kind.value, "error": str(exc),
                       "infra_retries": attempt}
                write_json(paths.row, row)
                return row
            attempt += 1
            on_event("retry", {"key": plan.key, "error": str(exc), "attempt": attempt})
            time.sleep(min(60.0, 2.0 ** attempt))


def _read(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())

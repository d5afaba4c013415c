"""A run: units (task spec after overrides × agent profile × seed, see :mod:`harness.experiment`) -> a run
directory.

Each episode is keyed by a content hash (:func:`harness.experiment.episode_id`);
episodes already finished in the run directory are skipped (resume by id).
Agent episodes run in a sandbox; a template whose episodes run in the harness
process (:meth:`~harness.contracts.TaskTemplate.runs_in_harness`, e.g.
forecasting) gets the same run directory, resume, retries and results.
Infrastructure failures are retried with exponential backoff up to
``RunSettings.infra_retries`` and reported apart from agent failures.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness import plugins as plugin_registry
from harness import interrupt, runlock
from harness.untrusted import remove_tree
from harness.billing import backend_billed
from harness.columns import ColumnCollision, owners, row_parts
from harness.config import ConfigError, RunSettings, TaskSpec, load_task_spec, task_params
from harness.contracts import SandboxBackend, TaskTemplate
from harness.episode import EpisodePlan, infra_failed_row, run_episode, run_harness_episode
from harness.experiment import Unit, apply_overrides, canonical, episode_id, with_seed
from harness.errors import EpisodeError, HarnessError
from harness.provenance import run_provenance, spec_sha256
from harness.resume import resume_summary
from harness.store import RunStore, keep_earlier, kept_row, versions


@dataclass
class LoadedTask:
    path: Path
    spec: TaskSpec
    template: TaskTemplate
    params: Any
    overrides: dict[str, Any] = field(default_factory=dict)


def load_task(path: Path | str, overrides: dict[str, Any] | None = None) -> LoadedTask:
    """Load and validate a TaskSpec and its template params, with dotted-path ``overrides`` of params
    applied first (``--set``, experiment ``set``/``grid``)."""
    path = Path(path)
    spec = load_task_spec(path)
    if overrides:
        spec = spec.model_copy(update={"params": apply_overrides(spec.params, overrides)})
    try:
        template = plugin_registry.get("task_template", spec.template)
    except plugin_registry.UnknownPlugin as exc:
        raise ConfigError(path, [f"template: {exc}"]) from None
    try:
        params = task_params(spec, template.params_model, path)
    except ConfigError as exc:
        if overrides:
            exc.problems.append(f"(after the overrides {canonical(overrides)})")
            exc.args = (f"{exc.file}: " + "; ".join(exc.problems),)
        raise
    params = template.rewrite_paths(params, path)
    return LoadedTask(path, spec, template, params, dict(overrides or {}))


def choose_backend(name: str, agent) -> SandboxBackend:
    """The sandbox backend for this agent (see :func:`harness.sandbox.choose_backend`)."""
    from harness.sandbox import choose_backend as choose

    backend = choose(name, needs_image=agent.needs_image)
    if backend.runs_images and not agent.image_capable:
        raise HarnessError(f"agent {agent.name!r} runs on the host's Python and cannot run in the "
                           f"{backend.name!r} sandbox: use --sandbox auto, bubblewrap, unshare or none")
    return backend


def preflight(units: list[Unit], settings: RunSettings, model_backend: str | None = None,
              model_options: dict | None = None) -> None:
    """Check everything a run needs before anything is written (no run directory is created for a run
    this refuses): each unit's params (the seed, :meth:`~harness.contracts.TaskTemplate.validate`, the
    episode list), that sandboxed episodes have an agent profile and in-harness ones can run with the one given
    (:meth:`~harness.contracts.InHarnessTaskTemplate.profile_problem`), each agent, its sandbox backend and, for LLM
    agents, the model backend's options (script, key).  ``model_backend`` must be a registered model backend
    and, like a ``model_options`` script, is refused when no agent of ``units`` calls a model (it would be
    ignored).  ``units``: every stage's, so a backend that one stage uses is accepted.  Raises a user-facing
    error naming the task file."""
    if model_backend is not None:
        try:
            plugin_registry.get("model_backend", model_backend)
        except plugin_registry.UnknownPlugin as exc:
            raise HarnessError(f"--model-backend: {exc}") from None
    checked, validated, model_agents = set(), set(), []
    for unit in units:
        profile, task = unit.profile, unit.task
        params = with_seed(task, unit.seed)
        in_harness = task.template.runs_in_harness(params)
        if (id(task), unit.seed) not in validated:
            validated.add((id(task), unit.seed))
            try:
                task.template.validate(params)
                task.template.episodes(params)
            except ValueError as exc:
                raise HarnessError(f"{task.path}: {exc}") from None
        if in_harness:
            reason = task.template.profile_problem(params, profile)
            if reason:
                raise HarnessError(f"{task.path}: {reason}")
            from harness.model_client import calls_model_in_harness

            if calls_model_in_harness(task.template, params, profile):
                model_agents.append(task.template.name)
            continue
        if profile is None:
            raise HarnessError(f"{task.path}: template {task.template.name!r} runs an agent: give an agent "
                               "profile (--agent, or agents: in the experiment)")
        if (profile.name, task.path) in checked:
            continue
        checked.add((profile.name, task.path))
        agent = plugin_registry.get("agent", profile.agent)
        choose_backend(settings.sandbox, agent)
        reason = agent.refusal(task.params)
        if reason:
            raise HarnessError(f"{task.path}: agent {agent.name!r} refuses this task: {reason}")
        if agent.privileged_inputs and not task.template.privileged_inputs:
            raise HarnessError(f"{task.path}: agent {agent.name!r} needs privileged inputs, which template "
                               f"{task.template.name!r} does not provide")
        if agent.needs_model:
            model_agents.append(agent.name)
            name = model_backend or profile.provider
            if not name:
                raise HarnessError(f"profile {profile.name!r} names no provider; pass --model-backend")
            opts = {"base_url": profile.base_url, "model": profile.model, **(model_options or {}),
                    **unit.model_options}
            plugin_registry.get("model_backend", name).upstream(opts)
    unused = [o for o, given in (("--model-backend", model_backend), ("--script", (model_options or {}).get("script")))
              if given]
    if unused and not model_agents:
        agents = sorted({u.profile.agent for u in units if u.profile is not None and not
                         u.task.template.runs_in_harness(with_seed(u.task, u.seed))})
        who = f"its agents ({', '.join(agents)}) call no model" if agents else "its episodes run in the harness"
        raise HarnessError(f"{' and '.join(unused)} would be ignored: no episode of this run reaches a model "
                           f"through the harness's proxy ({who}; in-harness episodes take their model settings "
                           "from the task's params)")


def limits_not_enforced(backends: dict[str, SandboxBackend]) -> dict[str, str]:
    """Backend name -> what it says it does not enforce (``describe()["limits_not_enforced"]``, whole: the
    text is a sentence that may hold commas and parentheses), for the backends that say anything."""
    out = {name: str(backends[name].describe().get("limits_not_enforced") or "") for name in sorted(backends)}
    return {name: text for name, text in out.items() if text}


def plan_episodes(units: list[Unit], settings: RunSettings, run_id: str, sandboxes: bool = True) -> list[EpisodePlan]:
    """Every episode of ``units`` in order, each id once (a unit repeating another's content adds nothing).
    ``sandboxes=False``: no sandbox backend is chosen and a unit without a profile is allowed (``harness plan``)."""
    extractors = list(r.obj for r in plugin_registry.plugins().registry("metric_extractor").values())
    agents: dict[str, tuple[Any, SandboxBackend]] = {}
    plans: dict[str, EpisodePlan] = {}
    spec_hashes: dict[int, str] = {}
    for unit in units:
        task = unit.task
        params = with_seed(task, unit.seed)
        in_harness = task.template.runs_in_harness(params)
        agent = backend = None
        if not in_harness and sandboxes and unit.profile is None:
            raise HarnessError(f"{task.path}: template {task.template.name!r} runs an agent: give an agent "
                               "profile (--agent, or agents: in the experiment)")
        if not in_harness and unit.profile is not None:
            if unit.profile.agent not in agents:
                found = plugin_registry.get("agent", unit.profile.agent)
                agents[unit.profile.agent] = (found, choose_backend(settings.sandbox, found) if sandboxes else None)
            agent, backend = agents[unit.profile.agent]
        try:
            episodes = task.template.episodes(params)
            owners(row_parts(task.template, extractors, in_harness))
        except ValueError as exc:
            raise HarnessError(f"{task.path}: {exc}") from exc
        except ColumnCollision as exc:
            raise ColumnCollision(f"{task.path}: {exc}") from None
        for episode in episodes:
            eid = episode_id(task.spec.name, task.template, params, episode, unit.profile)
            label = _SAFE.sub("_", task.template.episode_label(task.spec.name, params, episode))[:80]
            if eid not in plans:
                plans[eid] = EpisodePlan(f"{label}-{eid}", task.spec.name, task.template, params, episode,
                                         unit.profile, agent, backend, settings, run_id, extractors,
                                         episode_id=eid, in_harness=in_harness, task_file=str(task.path),
                                         spec_sha256=spec_hashes.setdefault(id(task), spec_sha256(task.spec)))
    return list(plans.values())


class InvalidExports(HarnessError):
    """Raised by :func:`execute` after the run's results are written, when a template's
    :meth:`~harness.contracts.TaskTemplate.finish` found files it exports invalid (e.g. a submission
    of an incomplete cell).  ``rows``: the results rows of the plan, as :func:`execute` would return them."""

    def __init__(self, message: str, rows: list[dict[str, Any]] = ()):
        super().__init__(message)
        self.rows = list(rows)


@runlock.one_writer  # the run folder's lock: ``wait`` (keyword) waits for another run writing there
def execute(
    units: list[Unit],
    store: RunStore,
    settings: RunSettings,
    on_event: Callable[[str, dict], None] = lambda event, data: None,
    model_backend: str | None = None,
    model_options: dict | None = None,
    identity: dict[str, Any] | None = None,
    executor: Any = None,
) -> list[dict[str, Any]]:
    """Run every episode of ``units`` not yet finished in ``store``; return the rows of this plan.

    ``identity``: what the run directory holds (e.g. ``{"task": name, "profile": name}`` or
    ``{"experiment": name}``); resuming a directory holding another identity is refused.
    Episodes are found again by id: a finished episode is skipped, any other is run afresh (an event
    ``resume`` first, :func:`harness.resume.resume_summary`: what is kept, and whether other code made it).
    ``executor``: where episodes run (default :class:`LocalExecutor`; :class:`harness.dask_executor.DaskExecutor`
    on a Dask cluster).  After the episodes each template's :meth:`~harness.contracts.TaskTemplate.finish` summary is stored
    in ``run.json`` under ``finished.<task name>`` (its ``messages`` are sent as ``message`` events); when
    some of them found their exports invalid, :class:`InvalidExports` is raised once the results are written.
    """
    plans = plan_episodes(units, settings, store.run_id)
    identity = identity or {}
    previous = store.read_run_json()
    if previous is not None:
        before = previous.get("identity")
        if before is not None and _same_run(before) != _same_run(identity):
            what = "another task or agent profile" if "task" in identity else "another experiment"
            raise HarnessError(f"{store.root} holds a run of {what} ({_describe(before)}): resume it with the "
                               "same command, or choose another --out")
        on_event("resume", resume_summary(plans, store, settings.retry_failed))
    distinct = {id(p.params): p for p in plans}
    for plan in distinct.values():  # before run.json: a task that cannot be prepared leaves a new run empty
        try:
            plan.template.prepare(plan.params, lambda done, total, text: on_event(
                "message", {"text": f"{text} {done}/{total}", "label": text, "done": done, "total": total}))
        except ValueError as exc:
            raise HarnessError(f"{plan.task_file}: cannot prepare the task: {exc}") from exc
    episodes = {e["key"]: e for e in (previous or {}).get("episodes", []) if isinstance(e, dict) and "key" in e}
    for p in plans:
        episodes[p.key] = {"key": p.key, "id": p.episode_id, "task": p.task_name, "template": p.template.name,
                           "task_file": p.task_file,
                           "episode": p.episode, "profile": p.profile.name if p.profile else None,
                           "params": p.params.model_dump(mode="json")}
    backends = {p.backend.name: p.backend for p in plans if p.backend is not None}
    profiles = {p.profile.name: p.profile.model_dump(mode="json") for p in plans if p.profile is not None}
    agents = {p.agent.name: p.agent.version for p in plans if p.agent is not None}
    store.write_run_json(keep_earlier(previous, {  # what earlier runs into this folder recorded is kept
        "run_id": store.run_id,
        "identity": identity,
        "tasks": sorted({p.task_file for p in plans}),
        "episodes": list(episodes.values()),
        "profiles": profiles,
        "settings": settings.model_dump(mode="json"),
        "sandbox": ", ".join(sorted(backends)) or None,
        "sandbox_details": {name: b.describe() for name, b in backends.items()},
        "agents": agents,
        "rule_budget_seconds": settings.rule_budget,
        "model_backend": model_backend,
        "versions": versions(),
        "provenance": run_provenance(plans),
        "started_at": (previous or {}).get("started_at") or time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "resumed_at": time.strftime("%Y-%m-%dT%H:%M:%S%z") if previous else None,
    }))
    on_event("start", {"episodes": len(plans), "sandbox": ", ".join(sorted(backends)) or "none (in harness)",
                       "limits_not_enforced": limits_not_enforced(backends)})

    own_options = {u.profile.name: u.model_options for u in units if u.profile is not None and u.model_options}
    rows = run_plans(plans, store, settings, on_event, model_backend, model_options or {}, executor,
                      profile_options=own_options)
    invalid = finish_tasks([(plan.task_name, plan.template, plan.params,
                             [rows[p.key] for p in plans if p.params is plan.params and p.key in rows])
                            for plan in distinct.values()], store, on_event)
    store.write_results()
    if invalid:  # the episodes' results are written; the files meant for others are not fit to hand over
        raise InvalidExports(f"{len(invalid)} invalid export(s) (see the messages above): " + ", ".join(invalid[:5])
                             + (", ..." if len(invalid) > 5 else ""), [rows[p.key] for p in plans if p.key in rows])
    return [rows[p.key] for p in plans if p.key in rows]


def finish_tasks(groups: list[tuple[str, TaskTemplate, Any, list[dict[str, Any]]]], store: RunStore,
                 on_event: Callable[[str, dict], None], stamp: bool = True) -> list[str]:
    """Call each template's :meth:`~harness.contracts.TaskTemplate.finish` on its rows, ``groups`` being
    ``(task name, template, params, rows)``; store the summaries in ``run.json`` under ``finished.<task
    name>`` (merged into what is there), send their ``messages`` as ``message`` events and, with ``stamp``,
    set ``finished_at``.  Returns the invalid exports' paths (``invalid_exports``, under the run folder)."""
    data = store.read_run_json() or {}
    finished = data.setdefault("finished", {})
    invalid: list[str] = []   # exports a template's finish() found invalid (``invalid_exports``)
    for task_name, template, params, mine in groups:
        summary = template.finish(params, mine, store.root)
        invalid += [str(store.root / path) for path in summary.pop("invalid_exports", [])]
        for text in summary.pop("messages", []):
            on_event("message", {"text": text, "final": True})
        mine_before = finished.setdefault(task_name, {})
        for key, value in summary.items():
            if isinstance(value, dict) and isinstance(mine_before.get(key), dict):
                mine_before[key].update(value)
            else:
                mine_before[key] = value
    if stamp:
        data["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    store.write_run_json(data)
    return invalid


class _BoundedBackend:
    """A sandbox backend whose ``create`` waits for one of ``RunSettings.sandbox_starts`` slots."""

    def __init__(self, backend: SandboxBackend, slots: threading.Semaphore):
        self._backend, self._slots = backend, slots

    def __getattr__(self, name: str) -> Any:
        return getattr(self._backend, name)

    def create(self, spec, *args: Any, **kwargs: Any):
        with self._slots:
            return self._backend.create(spec, *args, **kwargs)


class LocalExecutor:
    """Episodes on threads of this process (``--jobs``); the interface :func:`execute` drives
    (``start``, ``submit``, ``wait``, ``result``, ``close``; see :class:`harness.dask_executor.DaskExecutor`)."""

    name = "local"

    def start(self, jobs: int, run_one: Callable[[EpisodePlan], dict[str, Any]], store: RunStore,
              settings: RunSettings, model_backend: str | None, model_options: dict) -> None:
        self._run_one = run_one
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="episode")

    def submit(self, plan: EpisodePlan) -> Any:
        return self._pool.submit(self._run_one, plan)

    def wait(self, futures: list, timeout: float) -> list:
        return list(wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)[0])

    def result(self, future: Any, plan: EpisodePlan) -> dict[str, Any]:
        return future.result()

    def close(self, futures: list) -> None:
        for future in futures:
            future.cancel()
        self._pool.shutdown(wait=True, cancel_futures=True)


def run_plans(plans: list[EpisodePlan], store: RunStore, settings: RunSettings, on_event,
              model_backend: str | None, model_options: dict, executor: Any = None,
              limits_: Any = None, profile_options: dict[str, dict] | None = None) -> dict[str, dict[str, Any]]:
    """Run the plans not yet finished, ``settings.jobs`` at a time; rows by episode key.  The entry point
    below :func:`execute` (which plans, records ``run.json`` and writes ``results.parquet``): an executor
    running one planned episode elsewhere (:mod:`harness.dask_executor`'s workers) calls it too.

    ``profile_options``: model options of one profile (e.g. an experiment stage's per-profile script)
    over ``model_options``.

    Finished episodes are kept (:func:`harness.store.keeps`: not an infrastructure failure, nor with
    ``settings.retry_failed`` a failed one); the others run afresh.  No episode starts once the cost of
    the finished ones reaches ``settings.max_run_cost_usd`` (event ``budget``).  Events come from this
    thread only (``episode``, ``done``, ``skip``, ``retry``, ``budget``).
    """
    from harness.model_session import ProxyPool

    executor = executor or LocalExecutor()
    slots = threading.Semaphore(settings.sandbox_starts)
    bounded: dict[int, _BoundedBackend] = {}
    events: queue.Queue = queue.Queue()
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for plan in plans:
        paths = store.episode(plan.key)
        done = kept_row(paths.row, settings.retry_failed)
        if done is not None:
            rows[plan.key] = done
            on_event("skip", {"key": plan.key, "row": done})
        else:
            if plan.backend is not None:
                plan.backend = bounded.setdefault(id(plan.backend), _BoundedBackend(plan.backend, slots))
            todo.append(plan)
    spent = sum(_cost(r) for r in rows.values())

    proxies = ProxyPool(settings, limits_, model_backend, model_options, profile_options)  # the run's caps

    def one(plan):
        emit = lambda event, data: events.put((event, data))  # noqa: E731 - events go to the main thread
        return _with_retries(plan, store.episode(plan.key), runner_factory(settings, plan.backend), settings,
                             proxies.for_plan(plan), emit)

    capped = False
    interrupt.reset()
    executor.start(settings.jobs, one, store, settings, model_backend, model_options)
    running: dict[Any, EpisodePlan] = {}
    try:
        pending = list(todo)
        while pending or running:
            while pending and len(running) < settings.jobs and not capped:
                if settings.max_run_cost_usd is not None and spent >= settings.max_run_cost_usd:
                    capped = True
                    on_event("budget", {"spent": spent, "cap": settings.max_run_cost_usd,
                                        "not_started": len(pending), "running": len(running)})
                    break
                plan = pending.pop(0)
                running[executor.submit(plan)] = plan
                on_event("episode", {"key": plan.key, "running": len(running)})
            if not running:
                break
            finished = executor.wait(list(running), timeout=0.2)
            _drain(events, on_event)
            for future in finished:
                plan = running.pop(future)
                row = executor.result(future, plan)
                rows[plan.key] = row
                spent += _cost(row)
                on_event("done", {"key": plan.key, "row": row, "running": len(running)})
        _drain(events, on_event)
    except BaseException:  # Ctrl-C, SIGTERM: every sandbox still running goes now, the threads unwind
        interrupt.stop_all()
        raise
    finally:
        executor.close(list(running))
        proxies.stop()
    return rows


def _drain(events: queue.Queue, on_event) -> None:
    while True:
        try:
            event, data = events.get_nowait()
        except queue.Empty:
            return
        on_event(event, data)


def _cost(row: dict[str, Any]) -> float:
    value = row.get("cost_usd")
    return float(value) if isinstance(value, (int, float)) and value == value else 0.0


def runner_factory(settings: RunSettings, backend: SandboxBackend | None):
    """Makes the sandboxed runner of submitted functions (programmatic answers: ``rule.py``)."""
    from harness.submission import make_runner

    def make():
        if backend is None:
            raise HarnessError("in-harness episodes run no submitted code")
        return make_runner(backend, limits=None, call_timeout=settings.rule_call_timeout,
                           memory_mb=settings.rule_memory_mb, budget=settings.rule_budget)

    return make


def _same_run(identity: dict[str, Any]) -> dict[str, Any]:
    """What must match to resume a run directory: its identity without the ``--set`` overrides (resuming with
    other overrides adds their episodes to the run, as before overrides were recorded)."""
    return {k: v for k, v in identity.items() if k != "overrides"}


def _describe(identity: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in identity.items())


_SAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def _with_retries(plan, paths, runner_factory, settings, proxy, on_event) -> dict[str, Any]:
    attempt = 0
    while True:
        if paths.root.exists():  # an interrupted or failed attempt: start the episode afresh
            remove_tree(paths.root)
        if proxy is not None:  # recorded in the row: a cost an offline backend answered is marked as not spent
            plan.model_backend = getattr(proxy, "backend", None)
            plan.model_billed = backend_billed(plan.model_backend) if plan.model_backend else None
        try:
            if proxy is not None and plan.in_harness:  # the template's model users call through it
                from harness.model_client import episode_client

                plan.model_client = episode_client(plan.template, plan.params, proxy, paths.root, settings.budget)
            elif proxy is not None:
                plan.model_channel = proxy.open(plan.key, paths.root, settings.budget)
            return (run_harness_episode(plan, paths, attempt) if plan.in_harness
                    else run_episode(plan, paths, runner_factory, attempt))
        except EpisodeError as exc:
            interrupt.check()  # a sandbox destroyed by the stop is no infrastructure failure to retry
            if not exc.kind.infra:
                raise
            if attempt >= settings.infra_retries:
                return infra_failed_row(plan, paths, attempt, exc)
            attempt += 1
            on_event("retry", {"key": plan.key, "error": str(exc), "attempt": attempt})
            time.sleep(min(60.0, settings.infra_backoff_s * 2.0 ** (attempt - 1)))

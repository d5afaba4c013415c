"""Episodes on an existing Dask cluster (``harness run --executor dask --scheduler ADDRESS``).

The client (the ``harness run`` process) keeps the run directory: it plans the
episodes, skips finished ones, applies the run's cost cap (it sees each row as
it arrives) and writes every episode folder.  Each episode is one Dask task
(``distributed.Client.submit``); the worker rebuilds the episode from plain data
(template name, params, profile, settings: no shared filesystem and no pickled
plugin objects), runs it in a private temporary run directory with its own
model proxy, and returns its ``row`` and the episode folder as a ``.tar.gz``
(bytes).  The client unpacks it next to the run's ``episodes/`` folder and
renames it into place, so a killed client leaves either the whole folder or
none (resume as for local runs).  Workers never write into the run directory: the
client holding its lock (:mod:`harness.runlock`, checked when the executor starts) is
its one writer.

Each worker needs the harness (with the plugins the run uses) installed and a
sandbox backend; with a real model, the provider's key in its environment.

Limits across workers (the ``RunSettings.rate_limits`` of the run):

* ``max_concurrent`` holds across the cluster: every model request takes a
  lease of a ``distributed.Semaphore`` named after the run and provider.
* ``requests_per_min`` / ``tokens_per_min`` are split evenly between the
  workers present when the run starts (each worker process runs its own
  :class:`harness.limits.RateLimiter` with its share, rounded down, at least 1),
  so their sum never exceeds the run's limit.  Workers added later get a share
  too and may then exceed it: fix the cluster size for rate-limited runs.
* The run's cost cap (``max_run_cost_usd``) is applied by the client.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import tempfile
import threading
from pathlib import Path
from typing import Any

from harness.config import AgentProfile, RateLimit, RunSettings
from harness.episode import EpisodePlan
from harness.errors import HarnessError
from harness.store import RunStore

#: Per worker process: run id -> its limiters (a worker runs many episodes of a run).
_WORKER_LIMITS: dict[str, Any] = {}
_WORKER_LOCK = threading.Lock()


def _payload(plan: EpisodePlan) -> dict[str, Any]:
    return {"key": plan.key, "task_name": plan.task_name, "template": plan.template.name,
            "params": plan.params.model_dump(mode="json"), "episode": plan.episode,
            "profile": plan.profile.model_dump(mode="json") if plan.profile else None,
            "run_id": plan.run_id, "episode_id": plan.episode_id, "in_harness": plan.in_harness,
            "task_file": plan.task_file, "spec_sha256": plan.spec_sha256}


class _SharedLimiter:
    """A worker's :class:`harness.limits.RateLimiter` plus a cluster-wide ``distributed.Semaphore`` lease
    per request in flight (``max_concurrent``)."""

    def __init__(self, local: Any, semaphore: Any):
        self.local, self.semaphore = local, semaphore
        self._leases: dict[object, bool] = {}

    async def acquire(self, key: object) -> None:
        import asyncio

        if self.semaphore is not None:
            while not await asyncio.to_thread(self.semaphore.acquire, 1.0):
                pass
            self._leases[key] = True
        if self.local is not None:
            await self.local.acquire(key)

    def settle(self, key: object, tokens: int) -> None:
        if self.local is not None:
            self.local.settle(key, tokens)
        if self._leases.pop(key, False):
            self.semaphore.release()


def _worker_limits(run_id: str, rate_limits: dict[str, dict], workers: int):
    from harness.limits import RateLimiter

    with _WORKER_LOCK:
        if run_id not in _WORKER_LIMITS:
            from distributed import Semaphore

            out = {}
            for provider, data in rate_limits.items():
                limit = RateLimit.model_validate(data)
                share = limit.model_copy(update={
                    "requests_per_min": None if limit.requests_per_min is None else
                    max(1, limit.requests_per_min // workers),
                    "tokens_per_min": None if limit.tokens_per_min is None else max(1, limit.tokens_per_min // workers),
                    "max_concurrent": None})
                local = RateLimiter(share) if (share.requests_per_min or share.tokens_per_min) else None
                semaphore = (Semaphore(max_leases=limit.max_concurrent, name=f"harness-{run_id}-{provider}")
                             if limit.max_concurrent else None)
                out[provider] = _SharedLimiter(local, semaphore)
            _WORKER_LIMITS[run_id] = _Limits(out)
        return _WORKER_LIMITS[run_id]


class _Limits:
    def __init__(self, by_provider: dict[str, Any]):
        self._by = by_provider

    def for_provider(self, name: str | None):
        return self._by.get(name or "")


def run_on_worker(payload: dict[str, Any], settings_data: dict, model_backend: str | None,
                  model_options: dict, workers: int) -> dict[str, Any]:
    """Run one episode on a Dask worker; returns ``{"row": row, "folder": <episode folder as tar.gz bytes>}``."""
    from harness import plugins as registry
    from harness.run import choose_backend, run_plans

    settings = RunSettings.model_validate({**settings_data, "jobs": 1, "max_run_cost_usd": None})
    template = registry.get("task_template", payload["template"])
    params = template.params_model.model_validate(payload["params"])
    profile = AgentProfile.model_validate(payload["profile"]) if payload["profile"] else None
    agent = backend = None
    if not payload["in_harness"]:
        agent = registry.get("agent", profile.agent)
        backend = choose_backend(settings.sandbox, agent)
    extractors = list(r.obj for r in registry.plugins().registry("metric_extractor").values())
    plan = EpisodePlan(payload["key"], payload["task_name"], template, params, payload["episode"], profile,
                       agent, backend, settings, payload["run_id"], extractors, episode_id=payload["episode_id"],
                       in_harness=payload["in_harness"], task_file=payload["task_file"],
                       spec_sha256=payload.get("spec_sha256"))
    template.prepare(params, lambda done, total, text: None)
    limits = _worker_limits(payload["run_id"], settings_data.get("rate_limits") or {}, workers)
    with tempfile.TemporaryDirectory(prefix="harness-dask-") as tmp:
        store = RunStore(Path(tmp) / payload["run_id"])
        rows = run_plans([plan], store, settings, lambda event, data: None, model_backend, model_options,
                          limits_=limits)
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            tar.add(store.episode(plan.key).root, arcname=plan.key)
    return {"row": rows[plan.key], "folder": buf.getvalue()}


class DaskExecutor:
    """Submits episodes to the Dask scheduler at ``address`` (or a given ``distributed.Client``); see the
    module docstring for what runs where and how limits hold across workers."""

    name = "dask"

    def __init__(self, address: str | None = None, client: Any = None):
        try:
            import distributed  # noqa: F401
        except ImportError as exc:
            raise HarnessError("--executor dask needs the 'distributed' package: pip install "
                               "'tsagent-harness[dask]'") from exc
        if client is None and not address:
            raise HarnessError("--executor dask needs --scheduler ADDRESS (e.g. tcp://host:8786)")
        self.address, self._client, self._own = address, client, client is None

    def start(self, jobs: int, run_one, store: RunStore, settings: RunSettings, model_backend: str | None,
              model_options: dict) -> None:
        from distributed import Client

        if self._client is None:
            try:
                self._client = Client(self.address, timeout="30s")
            except OSError as exc:
                raise HarnessError(f"cannot reach the Dask scheduler at {self.address}: {exc}") from exc
        from harness.runlock import require_held

        require_held(store.root)  # one writer per run folder: the client holding its lock unpacks every episode
        self.store = store
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})))
        self._args = (settings.model_dump(mode="json"), model_backend, model_options, self.workers)

    def submit(self, plan: EpisodePlan) -> Any:
        return self._client.submit(run_on_worker, _payload(plan), *self._args, pure=False, key=f"episode-{plan.key}")

    def wait(self, futures: list, timeout: float) -> list:
        from distributed import wait as dask_wait

        try:
            done, _ = dask_wait(futures, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return []
        return list(done)

    def result(self, future: Any, plan: EpisodePlan) -> dict[str, Any]:
        """The worker's row; its episode folder is unpacked into the run directory first (atomically)."""
        out = future.result()
        target = self.store.episode(plan.key).root
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=target.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(out["folder"]), mode="r:gz") as tar:
                tar.extractall(staging, filter="data")
            if target.exists():
                shutil.rmtree(target)
            os.replace(staging / plan.key, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return out["row"]

    def close(self, futures: list) -> None:
        if self._client is None:
            return
        for future in futures:
            future.cancel()
        if self._own:
            self._client.close()

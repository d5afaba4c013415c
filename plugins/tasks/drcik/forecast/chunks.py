"""Forecasting a condition's tasks in chunks, for a forecaster declaring ``batch_size`` > 1 (the forecaster
contract's capability; e.g. the pretrained models, option ``batch_size``, default 16) that calls no model.

The condition's forecastable tasks (in episode order; those a DR condition has no evidence for are left
out) are cut in chunks of ``batch_size``: the first episode of a chunk forecasts the whole chunk in one
``forecast_batch`` call (:func:`tsagent_plugins.tasks.drcik.forecast.experiment.forecast_tasks`) and each episode of
the chunk takes its own forecast, so rows, samples and failures stay per task (the contract makes a task's
paths the same as alone; a task that fails in a batch fails alone) and ``seconds`` is the chunk's wall
time shared equally.  Episodes may run in parallel threads: one lock per chunk.  A resumed run forecasts
the finished tasks of a chunk again, unrecorded; a retried episode is forecast alone.
"""

from __future__ import annotations

import json
import threading
from typing import Any, Callable

from tsagent_plugins.tasks.drcik.forecast.experiment import forecast_tasks


class ChunkedForecasts:
    """The forecasts of chunks not yet taken by their episodes (one instance per template)."""

    def __init__(self) -> None:
        self._ready: dict[str, tuple] = {}
        self._taken: set[str] = set()
        self._ids: dict[str, list[str]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def result(self, params, entry, forecaster, cond, task_id: str, tasks: dict[str, Any],
               evidence: Callable[[str], Any]) -> tuple:
        """Task ``task_id``'s forecast result (as :func:`~tsagent_plugins.tasks.drcik.forecast.experiment.forecast_task`
        gives it) under condition ``cond``.  ``tasks``: the run's tasks by benchmark id (in episode order);
        ``evidence(task_id)``: the task's DR evidence or None."""
        def key(tid: str) -> str:
            return json.dumps([entry.model_dump(mode="json"), str(params.tasks_path), tid, params.samples,
                               params.seed, params.time_limit, cond.name if forecaster.uses_context else None])

        with self._lock:                # the condition's forecastable tasks, listed once
            listed = json.dumps([str(params.tasks_path), list(tasks), cond.name, params.dr_evidence,
                                 params.evidence.model_dump(mode="json") if params.evidence else None])
            if listed not in self._ids:
                self._ids[listed] = [t for t in tasks if not (cond.needs_dr and evidence(t) is None)]
            ids, size = self._ids[listed], forecaster.batch_size
            first = ids.index(task_id) // size * size
            chunk = ids[first:first + size]
            lock = self._locks.setdefault(key(chunk[0]), threading.Lock())
        with lock:                      # another episode of the chunk may be forecasting it right now
            if key(task_id) not in self._ready:
                todo = [t for t in chunk if t == task_id or (key(t) not in self._ready and key(t) not in self._taken)]
                items = [(tasks[t], cond.text_for(tasks[t], evidence(t)).text) for t in todo]
                results = forecast_tasks(forecaster, items, params.samples, params.seed, params.time_limit)
                self._ready.update({key(t): r for t, r in zip(todo, results)})
            self._taken.add(key(task_id))
            return self._ready.pop(key(task_id))

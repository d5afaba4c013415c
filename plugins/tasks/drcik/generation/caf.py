"""The input of ``harness dr-generate``: context-aided forecasting (CAF) tasks, one JSON file each.

A CAF task is what Context is Key and GIFT-CTX give a forecaster (Dr-CiK Section 4.1: the pipeline's
input), with the context split as they split it::

    {
      "task_id": "caf_pump_station",              # [A-Za-z0-9_-]+, unique in the folder
      "origin": "real",                           # real | synthetic: real series get the window shift
      "frequency": "1 hour",                      # as the release writes it (parse_frequency)
      "prediction_length": 24,                    # = len(future_values)
      "seasonal_period": 24,                      # >= 1
      "target_description": "Hourly water flow (m3/h) out of a pumping station.",
      "series": {"history_timestamps": ["2021-03-01 00:00:00", ...], "history_values": [1.0, ...],
                 "future_timestamps": [...], "future_values": [...]},
      "context": {"background": "...", "scenario": "...", "constraints": "..."}
    }

Timestamps are ``YYYY-MM-DD HH:MM:SS``, strictly increasing, the future after the history, at the task's
frequency; values are finite numbers.  ``context.background`` is required; ``scenario`` and
``constraints`` may be empty (CiK tasks without them).  Dates named in the context (``YYYY-MM-DD``, with a
time or not) are the events the window shift moves (:mod:`.window`).

:func:`read_folder` reads every ``*.json`` of a folder in name order and raises
:class:`harness.ConfigError` naming the file and the field of every problem.
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from harness import ConfigError, Strict, format_validation_error
from tsagent_plugins.tasks.drcik.dataset.frequency import FrequencyError, parse_frequency

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"


class CafSeries(Strict):
    """History and future of the target series (timestamps as text, values as floats)."""

    history_timestamps: list[str] = Field(min_length=2)
    history_values: list[float] = Field(min_length=2)
    future_timestamps: list[str] = Field(min_length=1)
    future_values: list[float] = Field(min_length=1)

    @field_validator("history_timestamps", "future_timestamps")
    @classmethod
    def _stamps(cls, stamps: list[str]) -> list[str]:
        for i, text in enumerate(stamps):
            try:
                datetime.strptime(text, TIMESTAMP_FORMAT)
            except ValueError:
                raise ValueError(f"item {i}: {text!r} is not YYYY-MM-DD HH:MM:SS") from None
        return stamps

    @field_validator("history_values", "future_values")
    @classmethod
    def _finite(cls, values: list[float]) -> list[float]:
        for i, v in enumerate(values):
            if not math.isfinite(v):
                raise ValueError(f"item {i}: {v} is not finite")
        return values

    @model_validator(mode="after")
    def _aligned(self) -> "CafSeries":
        if len(self.history_timestamps) != len(self.history_values):
            raise ValueError(f"history_values: {len(self.history_values)} values for "
                             f"{len(self.history_timestamps)} history_timestamps")
        if len(self.future_timestamps) != len(self.future_values):
            raise ValueError(f"future_values: {len(self.future_values)} values for "
                             f"{len(self.future_timestamps)} future_timestamps")
        stamps = [datetime.strptime(t, TIMESTAMP_FORMAT) for t in self.history_timestamps + self.future_timestamps]
        for i in range(1, len(stamps)):
            if stamps[i] <= stamps[i - 1]:
                where = (f"history_timestamps[{i}]" if i < len(self.history_timestamps)
                         else f"future_timestamps[{i - len(self.history_timestamps)}]")
                raise ValueError(f"{where}: timestamps must increase strictly (history, then future)")
        return self

    def datetimes(self) -> list[datetime]:
        return [datetime.strptime(t, TIMESTAMP_FORMAT) for t in self.history_timestamps + self.future_timestamps]


class CafContext(Strict):
    """The context text as CiK and GIFT-CTX split it."""

    background: str = Field(min_length=1)
    scenario: str = ""
    constraints: str = ""

    def text(self) -> str:
        """Background, scenario and constraints, one paragraph each (empty parts left out)."""
        return "\n\n".join(p.strip() for p in (self.background, self.scenario, self.constraints) if p.strip())


class CafTask(Strict):
    """One CAF task (module docstring)."""

    task_id: str = Field(pattern=r"^[A-Za-z0-9_-]+$")
    origin: Literal["real", "synthetic"]
    frequency: str
    prediction_length: int = Field(ge=1)
    seasonal_period: int = Field(ge=1)
    target_description: str = Field(min_length=1)
    series: CafSeries
    context: CafContext

    @field_validator("frequency")
    @classmethod
    def _frequency(cls, text: str) -> str:
        try:
            parse_frequency(text)
        except FrequencyError as exc:
            raise ValueError(str(exc)) from None
        return text

    @model_validator(mode="after")
    def _lengths(self) -> "CafTask":
        if self.prediction_length != len(self.series.future_values):
            raise ValueError(f"prediction_length: {self.prediction_length}, but series.future_values has "
                             f"{len(self.series.future_values)} values")
        step = parse_frequency(self.frequency).offset
        stamps = self.series.datetimes()
        import pandas as pd

        expected = pd.date_range(stamps[0], periods=len(stamps), freq=step)
        wrong = [i for i, (a, b) in enumerate(zip(stamps, expected)) if a != b.to_pydatetime()]
        if wrong:
            raise ValueError(f"series: timestamp {wrong[0]} ({stamps[wrong[0]]}) is off the frequency "
                             f"{self.frequency!r} grid starting {stamps[0]}")
        return self

    def window(self) -> tuple[datetime, datetime]:
        """First and last timestamp of the task (history start, future end)."""
        stamps = self.series.datetimes()
        return stamps[0], stamps[-1]


def parse_task(data: object, source: Path | str) -> CafTask:
    """Validate one task's data; :class:`harness.ConfigError` naming ``source`` and each field."""
    if not isinstance(data, dict):
        raise ConfigError(source, [f"<root>: expected a JSON object, got {type(data).__name__}"])
    try:
        return CafTask.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, format_validation_error(exc)) from None


def read_task(path: Path | str) -> CafTask:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(path, [f"<root>: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]) from None
    return parse_task(data, path)


def read_folder(folder: Path | str) -> list[CafTask]:
    """Every ``*.json`` CAF task of ``folder`` in file-name order; ConfigError for a missing or empty folder,
    a bad file, or a task id used twice (naming both files)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, ["<folder>: no such folder of CAF tasks"])
    files = sorted(folder.glob("*.json"))
    if not files:
        raise ConfigError(folder, ["<folder>: no *.json CAF task in it"])
    tasks, seen = [], {}
    for path in files:
        task = read_task(path)
        if task.task_id in seen:
            raise ConfigError(path, [f"task_id: {task.task_id!r} is also the id of {seen[task.task_id].name}"])
        seen[task.task_id] = path
        tasks.append(task)
    return tasks



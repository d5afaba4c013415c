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

``series`` may instead name a CSV file beside the task file (``{"csv": "flow.csv", "timestamp_column":
"timestamp", "value_column": "value", "forecast_start": null}``): :mod:`.caf_csv` reads it into the form
above before any check.  The fields' reference (generated from these models) and a worked example are in
``docs/benchmarks/drcik-own-data.md``.

Timestamps are ``YYYY-MM-DD HH:MM:SS``, strictly increasing, the future after the history, at the task's
frequency; values are finite numbers.  ``context.background`` is required; ``scenario`` and
``constraints`` may be empty (CiK tasks without them).  Dates named in the context (``YYYY-MM-DD``, with a
time or not) are the events the window shift moves (:mod:`.window`); each must be a calendar date
(``2023-02-30`` is refused) that the shift keeps within the calendar (``9999-12-01`` is refused).

Bounds (checked before any model call, so a bad input costs nothing):

* ``task_id`` at most :data:`MAX_TASK_ID` characters (it names the task file, the units' folders and
  the proxy episodes; a file name has at most 255 bytes);
* the context (background + scenario + constraints + objective) at most :data:`MAX_CONTEXT_CHARS`
  characters.  Every generator and judge prompt of a task embeds its context (about 30 calls a task),
  so the cost grows with it: CiK contexts are a few hundred characters, the longest GIFT-CTX ones a
  few thousand; 20,000 characters (about 5,000 tokens) leaves room for any of them and refuses a dump
  of a document (the held-back 10 MB case, whose dry run estimated $79 for one task).  The refusal
  names the file, the field and the dry-run estimate of the task.

:func:`read_folder` reads every ``*.json`` of a folder in name order and raises :class:`CafFolderError`
naming every bad file, each with the field of its problems (one line a file; the commands print each as an
``error:`` line and exit 2).
"""

from __future__ import annotations

import json
import math
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Callable, Literal

from pydantic import Field, PrivateAttr, ValidationError, field_validator, model_validator

from harness import ConfigError, Strict, format_validation_error
from tsagent_plugins.tasks.drcik.dataset.frequency import FrequencyError, parse_frequency
from tsagent_plugins.tasks.drcik.generation import caf_csv

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
#: an ISO date with an optional time in a context text (the dates the window shift moves, :mod:`.window`)
DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:([ T])(\d{2}:\d{2}(?::\d{2})?))?\b")
MAX_TASK_ID = 100
MAX_CONTEXT_CHARS = 20_000


class CafSeries(Strict):
    """History and future of the target series (timestamps as text, values as floats)."""

    history_timestamps: list[str] = Field(min_length=2, description="Timestamps of the history (at least 2), "
                                                                   "YYYY-MM-DD HH:MM:SS, strictly increasing.")
    history_values: list[float] = Field(min_length=2, description="One finite value per history timestamp.")
    future_timestamps: list[str] = Field(min_length=1, description="Timestamps of the forecast horizon, after "
                                                                  "the history, at the task's frequency.")
    future_values: list[float] = Field(min_length=1, description="The true future: one finite value per future "
                                                                "timestamp.")

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

    background: str = Field(min_length=1, description="What the series is and how it behaves (required).")
    scenario: str = Field("", description="What happens around the forecast window, e.g. dated events "
                                          "(YYYY-MM-DD [HH:MM[:SS]], moved by the window shift).")
    constraints: str = Field("", description="Constraints on the future values, e.g. 'the load cannot be "
                                             "negative'.")

    @field_validator("background", "scenario", "constraints")
    @classmethod
    def _dates(cls, text: str) -> str:
        bad = bad_dates(text)
        if bad:
            raise ValueError(f"{bad[0]!r} is not a calendar date (YYYY-MM-DD [HH:MM[:SS]])")
        return text

    def text(self) -> str:
        """Background, scenario and constraints, one paragraph each (empty parts left out)."""
        return "\n\n".join(p.strip() for p in (self.background, self.scenario, self.constraints) if p.strip())


class CafTask(Strict):
    """One CAF task: one JSON file of the input folder of ``harness dr-generate``."""

    task_id: str = Field(pattern=r"^[A-Za-z0-9_-]+$", max_length=MAX_TASK_ID,
                         description="Letters, digits, _ and -; at most 100 characters; unique in the folder "
                                     "(it names files and folders).")
    origin: Literal["real", "synthetic"] = Field(description="real: a measured series, moved by the spec's "
                                                             "window shift; synthetic: a made-up one, kept.")
    frequency: str = Field(description="The step between timestamps as the release writes it: '1 hour', "
                                       "'1 day', '5 minutes', or a pandas code ('h', 'D').")
    prediction_length: int = Field(ge=1, description="The forecast horizon in steps (= the number of future "
                                                     "values).")
    seasonal_period: int = Field(ge=1, description="Steps per season (24 hourly, 7 daily, 12 monthly).")
    target_description: str = Field(min_length=1, description="The forecasting objective every agent sees; "
                                                              "anonymised by step 3 like the context.")
    series: CafSeries = Field(description="The series inline, or a CSV file beside the task file "
                                          "(CafCsvSeries).")
    context: CafContext = Field(description="The context text, split as Context is Key splits it.")
    _source: Path | None = PrivateAttr(default=None)

    @property
    def source(self) -> Path | None:
        """The file the task was read from (None when built in memory)."""
        return self._source

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
    """The task of one CAF file (its series inline or in a CSV file beside it, :mod:`.caf_csv`);
    :class:`harness.ConfigError` naming the file and field, or the CSV's line and column."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(path, [f"<root>: not UTF-8 text (byte {exc.start})"]) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(path, [f"<root>: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"]) from None
    if isinstance(data, dict) and caf_csv.is_reference(data.get("series")):
        data = {**data, "series": caf_csv.inline_series(data["series"], path, data.get("prediction_length"),
                                                        data.get("frequency"))}
    task = parse_task(data, path)
    task._source = path
    return task


class CafFolderError(ConfigError):
    """Every bad file of a CAF folder (:func:`read_folder`): ``errors``, one :class:`harness.ConfigError` per
    file in file-name order; ``str()`` and :meth:`lines` give one line each (``file: field: problem``)."""

    def __init__(self, errors: list[ConfigError]):
        self.errors = list(errors)
        super().__init__(self.errors[0].file, self.errors[0].problems)

    def lines(self) -> list[str]:
        return [str(e) for e in self.errors]

    def __str__(self) -> str:
        return "\n".join(self.lines())


#: text addressed to a model rather than describing the series (prompt injection); flagged, never rewritten
#: (the decision and its evidence: docs/benchmarks/drcik-own-data.md, "Prompt-injection text in a context")
INJECTION = re.compile(
    r"\b(ignore|disregard|forget)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|preceding)\s+"
    r"(instructions?|prompts?|messages?|rules?)|\b(you are now|act as|new instructions?:|system prompt|"
    r"as an ai\b|assistant:|<\|im_start\|>)", re.IGNORECASE)


def injection_warnings(task: CafTask) -> list[str]:
    """``field: ...`` for every context part (and the objective) holding text addressed to a model."""
    parts = {f"context.{k}": getattr(task.context, k) for k in ("background", "scenario", "constraints")}
    parts["target_description"] = task.target_description
    return [f"{name}: {m.group(0)!r} reads as an instruction to a model; kept verbatim and flagged "
            "(docs/benchmarks/drcik-own-data.md)" for name, text in parts.items() for m in [INJECTION.search(text)] if m]


def size_problems(task: CafTask, estimate_usd: float | None = None) -> list[str]:
    """The context bound of the module docstring: ``field: ...`` problems (empty when within it), with the
    dry-run estimate of the task's first-pass cost when given."""
    sizes = {f"context.{k}": len(getattr(task.context, k)) for k in ("background", "scenario", "constraints")}
    sizes["target_description"] = len(task.target_description)
    total = sum(sizes.values())
    if total <= MAX_CONTEXT_CHARS:
        return []
    largest = max(sizes, key=sizes.get)
    return [f"{largest}: the task's context has {total:,} characters, more than the bound of "
            f"{MAX_CONTEXT_CHARS:,}"
            + (f" (estimated ${estimate_usd:,.2f} for this task alone at first pass)" if estimate_usd is not None
               else "") + "; shorten it to what a forecaster is given"]


def read_folder(folder: Path | str, shift_weeks: int = 0,
                check: Callable[[CafTask], list[str]] | None = None) -> list[CafTask]:
    """Every ``*.json`` CAF task of ``folder`` in file-name order.  ConfigError for a missing or empty folder;
    :class:`CafFolderError` naming every bad file: a file :func:`read_task` refuses, a date the window shift
    of ``shift_weeks`` weeks would move off the calendar, a task id used twice (naming both files), or the
    ``field: problem`` lines ``check`` returns for a task (e.g. :func:`size_problems`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(folder, ["<folder>: no such folder of CAF tasks"])
    files = sorted(folder.glob("*.json"))
    if not files:
        raise ConfigError(folder, ["<folder>: no *.json CAF task in it"])
    tasks, seen, errors = [], {}, []
    for path in files:
        try:
            task = read_task(path)
        except ConfigError as exc:
            errors.append(exc)
            continue
        problems = shift_problems(task, shift_weeks)
        if task.task_id in seen:
            problems.append(f"task_id: {task.task_id!r} is also the id of {seen[task.task_id].name}")
        seen.setdefault(task.task_id, path)
        problems = problems or (check(task) if check else [])
        if problems:
            errors.append(ConfigError(path, problems))
        else:
            tasks.append(task)
    if errors:
        raise CafFolderError(errors)
    return tasks


def parse_date(match: re.Match) -> datetime:
    clock = match.group(3) or "00:00:00"
    return datetime.strptime(f"{match.group(1)} {clock if clock.count(':') == 2 else clock + ':00'}",
                             TIMESTAMP_FORMAT)


def bad_dates(text: str) -> list[str]:
    """The ISO dates (and date-times) of ``text`` that are no calendar date or time (``2023-02-30``)."""
    out = []
    for m in DATE.finditer(text):
        try:
            parse_date(m)
        except ValueError:
            out.append(m.group(0))
    return out


def shift_problems(task: CafTask, weeks: int) -> list[str]:
    """``field: ...`` for every timestamp of ``task`` that a shift of ``weeks`` weeks moves off the calendar
    (before year 1 or after 9999); empty when the shift is possible (or the task does not move)."""
    if task.origin != "real" or weeks == 0:
        return []
    offset = timedelta(weeks=weeks)
    fields = {"series.history_timestamps": task.series.history_timestamps,
              "series.future_timestamps": task.series.future_timestamps,
              **{f"context.{k}": [m.group(0) for m in DATE.finditer(getattr(task.context, k))]
                 for k in ("background", "scenario", "constraints")}}
    problems = []
    for name, stamps in fields.items():
        for text in stamps:
            moved = None
            try:
                moved = parse_date(DATE.match(text)) + offset
            except (OverflowError, ValueError):
                pass
            if moved is None or not 1 <= moved.year <= 9999:
                problems.append(f"{name}: {text!r} moved by the window shift of {weeks} weeks leaves the calendar "
                                "(years 1-9999); fix the date or set the spec's window_shift_weeks")
                break
    return problems

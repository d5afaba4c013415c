"""A CAF task's series read from a CSV file beside the task file: ``"series": {"csv": "FILE.csv", ...}``.

Most own data is a CSV of one time series (a timestamp column and a value column).  A CAF task file may
point at such a file instead of listing the series inline; :func:`.caf.read_task` reads the CSV here,
splits it into history and future, and then validates the task as one written inline (one format, one set
of checks: :class:`.caf.CafTask`)::

    {"task_id": "caf_bakery_loaves", "frequency": "1 day", "prediction_length": 7, ...,
     "series": {"csv": "bakery_loaves.csv", "timestamp_column": "date", "value_column": "loaves"}}

The CSV (read with pandas): UTF-8, comma-separated, a header row; other columns are ignored, and so are
blank lines.  Timestamps are ISO 8601 dates or date-times (``2024-03-01``, ``2024-03-01 09:00``,
``2024-03-01T09:00:00``) without a time-zone offset (the context's dates are the series' clock times) and
without fractions of a second; values are finite numbers, none missing.  Rows are in time order, each
timestamp once, at the task's ``frequency`` with no gap.

The forecast starts at ``forecast_start`` (a timestamp of the CSV) when given, else
``prediction_length`` rows before the end: the future is the ``prediction_length`` rows from there, the
history every row before it (at least 2); rows after the future are not used.

Errors (:class:`harness.ConfigError`): a problem of the CSV's content names the CSV and its line (the
header is line 1, as a spreadsheet numbers its rows) and column, e.g.
``bakery_loaves.csv: line 9, column 'loaves': 'n/a' is not a number``; a problem of the reference (no such
file, no such column, a ``forecast_start`` not in the CSV, too few rows) names the task file and the field.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import Field, ValidationError

from harness import ConfigError, Strict, format_validation_error
from tsagent_plugins.tasks.drcik.dataset.frequency import FrequencyError, parse_frequency

if TYPE_CHECKING:  # pandas loads when a CSV is read
    import pandas as pd

#: the timestamp format of a CAF task (= :data:`.caf.TIMESTAMP_FORMAT`; this module does not import .caf)
CAF_TIMESTAMP = "%Y-%m-%d %H:%M:%S"
_OFFSET = re.compile(r"[+-]\d{2}(:?\d{2})?$")   # after a clock time: a UTC offset
_ZONE = re.compile(r"\dZ$", re.IGNORECASE)
_HAS_TIME = re.compile(r"\d[T ]\d")


class CafCsvSeries(Strict):
    """``series`` of a CAF task file as a reference to a CSV file (the inline form is ``CafSeries``)."""

    csv: str = Field(min_length=1, description="The CSV file of the series, relative to the task file "
                                               "(UTF-8, comma-separated, a header row).")
    timestamp_column: str = Field("timestamp", min_length=1,
                                  description="The column of the timestamps (ISO 8601 dates or date-times, "
                                              "no time-zone offset).")
    value_column: str = Field("value", min_length=1, description="The column of the values (finite numbers).")
    forecast_start: str | None = Field(None, description="The first future timestamp, one of the CSV's; "
                                                         "default: the last prediction_length rows are the "
                                                         "future.")


def is_reference(series: object) -> bool:
    """Whether a task file's ``series`` value is the CSV form (an object with a ``csv`` key)."""
    return isinstance(series, dict) and "csv" in series


def inline_series(reference: object, task_file: Path, prediction_length: object, frequency: object) -> dict:
    """The inline ``series`` (``history_timestamps``, ``history_values``, ``future_timestamps``,
    ``future_values``; timestamps as ``YYYY-MM-DD HH:MM:SS``) of the CSV that ``reference`` names,
    relative to ``task_file``; ConfigError (module docstring) when it cannot be built."""
    try:
        ref = CafCsvSeries.model_validate(reference)
    except ValidationError as exc:
        raise ConfigError(task_file, format_validation_error(exc, "series")) from None
    if not isinstance(prediction_length, int) or isinstance(prediction_length, bool) or prediction_length < 1:
        raise ConfigError(task_file, [f"prediction_length: {prediction_length!r} is no whole number >= 1; it "
                                      "sets how many rows of series.csv are the future"])
    path = Path(ref.csv) if Path(ref.csv).is_absolute() else task_file.parent / ref.csv
    table = _read(path, ref, task_file)
    stamps = _timestamps(table, path, ref.timestamp_column)
    values = _values(table, path, ref.value_column)
    _increasing(table, stamps, path, ref.timestamp_column)
    start = _forecast_start(ref, stamps, path, task_file, prediction_length)
    end = start + prediction_length
    if end > len(stamps):
        raise ConfigError(task_file, [f"prediction_length: {prediction_length}, but {path.name} has "
                                      f"{len(stamps) - start} row(s) from the forecast start "
                                      f"{stamps.iloc[start]:{CAF_TIMESTAMP}}"])
    _on_grid(table, stamps.iloc[:end], frequency, path, ref.timestamp_column)
    text = [f"{t:{CAF_TIMESTAMP}}" for t in stamps.iloc[:end]]
    numbers = [float(v) for v in values.iloc[:end]]
    return {"history_timestamps": text[:start], "history_values": numbers[:start],
            "future_timestamps": text[start:], "future_values": numbers[start:]}


def _line(table: "pd.DataFrame", row: int) -> int:
    """The file line of the table's ``row``-th row (header = line 1; blank lines were kept when read)."""
    return int(table.index[row]) + 2


def _read(path: Path, ref: CafCsvSeries, task_file: Path) -> "pd.DataFrame":
    """The CSV's rows as text (blank lines dropped, the index keeping each row's place in the file)."""
    import pandas as pd

    if not path.is_file():
        raise ConfigError(task_file, [f"series.csv: no such file {str(path)!r} (relative to the task file)"])
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=False, encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, [f"not UTF-8 text (byte {exc.start})"]) from None
    except pd.errors.EmptyDataError:
        raise ConfigError(path, ["line 1: no header row (the file is empty)"]) from None
    except pd.errors.ParserError as exc:
        raise ConfigError(path, [f"not a comma-separated table: {str(exc).strip()}"]) from None
    table.columns = [str(c).strip() for c in table.columns]
    missing = [c for c in (ref.timestamp_column, ref.value_column) if c not in table.columns]
    if missing:
        field = "series.timestamp_column" if missing[0] == ref.timestamp_column else "series.value_column"
        raise ConfigError(task_file, [f"{field}: no column {missing[0]!r} in {path.name} (its header: "
                                      f"{', '.join(map(repr, table.columns))})"])
    table = table[[ref.timestamp_column, ref.value_column]].apply(lambda col: col.str.strip())
    table = table[(table != "").any(axis=1)]
    if table.empty:
        raise ConfigError(path, ["no data row under the header"])
    return table


def _first(mask: "pd.Series") -> int | None:
    """The position of the first True of ``mask`` (None when there is none)."""
    hits = mask.to_numpy().nonzero()[0]
    return int(hits[0]) if len(hits) else None


def _refuse(table: "pd.DataFrame", row: int | None, path: Path, column: str, problem: str) -> None:
    """ConfigError naming the CSV, the line of ``row`` and ``column``; ``{text}`` in ``problem`` is the cell,
    quoted.  Nothing when ``row`` is None."""
    if row is not None:
        text = repr(table[column].iloc[row])
        raise ConfigError(path, [f"line {_line(table, row)}, column {column!r}: " + problem.replace("{text}", text)])


def _timestamps(table: "pd.DataFrame", path: Path, column: str) -> "pd.Series":
    import pandas as pd

    raw = table[column]
    _refuse(table, _first(raw == ""), path, column, "empty; every row needs a timestamp")
    offset = raw.map(lambda text: bool(_ZONE.search(text) or (_HAS_TIME.search(text) and _OFFSET.search(text))))
    _refuse(table, _first(offset), path, column, "{text} has a time-zone offset; CAF timestamps are the series' "
            "clock times without one (drop it, converting first if you need another zone)")
    try:
        stamps = pd.to_datetime(raw, format="ISO8601", errors="coerce")
    except (ValueError, OverflowError):  # a form pandas cannot put in one column: find its row
        stamps = pd.Series([_parse_one(text) for text in raw], index=raw.index, dtype="datetime64[us]")
    _refuse(table, _first(stamps.isna()), path, column,
            "{text} is not an ISO 8601 date or date-time (YYYY-MM-DD, YYYY-MM-DD HH:MM[:SS])")
    _refuse(table, _first(stamps != stamps.dt.floor("s")), path, column,
            "{text} has fractions of a second; CAF timestamps are whole seconds")
    _refuse(table, _first(stamps.dt.year > 9999), path, column, "{text} is after the year 9999")
    return stamps


def _parse_one(text: str) -> "pd.Timestamp | None":
    import pandas as pd

    try:
        stamp = pd.to_datetime(text, format="ISO8601")
    except (ValueError, OverflowError):
        return None
    return None if stamp.tzinfo is not None else stamp


def _values(table: "pd.DataFrame", path: Path, column: str) -> "pd.Series":
    import numpy as np
    import pandas as pd

    raw = table[column]
    _refuse(table, _first(raw == ""), path, column, "empty; a CAF series has no missing value (fill it, or "
            "choose a stretch without gaps)")
    values = pd.to_numeric(raw, errors="coerce")
    spelled_nan = raw.str.lower().isin(("nan", "+nan", "-nan"))
    _refuse(table, _first(values.isna() & ~spelled_nan), path, column, "{text} is not a number")
    _refuse(table, _first(~np.isfinite(values)), path, column, "{text} is not a finite number")
    return values


def _increasing(table: "pd.DataFrame", stamps: "pd.Series", path: Path, column: str) -> None:
    import pandas as pd

    row = _first(stamps.diff().iloc[1:] <= pd.Timedelta(0))
    if row is not None:
        _refuse(table, row + 1, path, column, "{text} is not after "
                f"{table[column].iloc[row]!r} of line {_line(table, row)} (rows in time order, each timestamp once)")


def _forecast_start(ref: CafCsvSeries, stamps: "pd.Series", path: Path, task_file: Path,
                    prediction_length: int) -> int:
    """The row of the first future value."""
    import pandas as pd

    if ref.forecast_start is None:
        start = len(stamps) - prediction_length
        where = f"prediction_length: {prediction_length}, but {path.name} has {len(stamps)} row(s)"
    else:
        wanted = pd.to_datetime(pd.Series([ref.forecast_start]), format="ISO8601", errors="coerce").iloc[0]
        if pd.isna(wanted) or wanted.tzinfo is not None:
            raise ConfigError(task_file, [f"series.forecast_start: {ref.forecast_start!r} is not an ISO 8601 date "
                                          "or date-time without a time-zone offset"])
        hits = [i for i, t in enumerate(stamps) if t == wanted]
        if not hits:
            raise ConfigError(task_file, [f"series.forecast_start: {ref.forecast_start!r} is no timestamp of "
                                          f"{path.name} (its rows run from {stamps.iloc[0]:{CAF_TIMESTAMP}} to "
                                          f"{stamps.iloc[-1]:{CAF_TIMESTAMP}})"])
        start = hits[0]
        where = f"series.forecast_start: {ref.forecast_start!r} is row {start + 1} of {path.name}"
    if start < 2:
        raise ConfigError(task_file, [f"{where}: a task needs at least 2 history rows before the forecast start"])
    return start


def _on_grid(table: "pd.DataFrame", stamps: "pd.Series", frequency: object, path: Path, column: str) -> None:
    """The used rows at the task's frequency from the first (a bad frequency is left to the task's own check)."""
    import pandas as pd

    try:
        step = parse_frequency(frequency).offset if isinstance(frequency, str) else None
    except FrequencyError:
        step = None
    if step is None:
        return
    expected = pd.date_range(stamps.iloc[0], periods=len(stamps), freq=step)
    row = _first(pd.Series(stamps.to_numpy() != expected.to_numpy()))
    if row is not None:
        _refuse(table, row, path, column, f"{{text}} is off the {frequency!r} grid from "
                f"{stamps.iloc[0]:{CAF_TIMESTAMP}} (expected {expected[row]:{CAF_TIMESTAMP}}: a missing row, or "
                "another frequency)")

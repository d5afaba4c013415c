"""Frequency strings and seasonal periods of Dr-CiK tasks (paper Appendix G "Forecasters").

The release writes frequencies as words ("1 day", "5 minutes", "1 hour") and
``seasonal_period`` either as an integer or as a frequency code ("D", "5T",
"1h"), several of which current pandas rejects ("5T", "H", "M", "A", ...).
Every such string goes through the single alias table :data:`UNIT_ALIASES`.

Seasonal period rule (SARIMA's m): "set from each task's sampling frequency
(m = 24 hourly, m = 7 daily, m = 12 monthly), deferring to explicit
seasonal-period metadata when available".  Sub-daily steps use the daily cycle
(steps per day: 24 hourly, 288 for 5 minutes, 1,440 per minute); one day uses
the weekly cycle (7); longer fixed steps use the yearly cycle
(round(365.25 days / step): 52 weekly, 13 for 28 days, 12 for 31 days, 4 for
90 days, 1 yearly); calendar offsets map directly (month 12, quarter 4,
year 1, week 52, business day 5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas loads when a frequency is parsed, not when the plugin registers
    import pandas as pd

# One table: alias (code or word) -> current pandas unit code.  Codes are matched
# case-sensitively first ("MS" is month start, "ms" millisecond), then words
# case-insensitively.
UNIT_ALIASES: dict[str, str] = {
    # legacy or current pandas codes
    "N": "ns", "ns": "ns", "U": "us", "us": "us", "L": "ms", "ms": "ms",
    "S": "s", "s": "s", "T": "min", "min": "min", "H": "h", "h": "h",
    "D": "D", "B": "B", "W": "W", "M": "ME", "ME": "ME", "MS": "MS",
    "Q": "QE", "QE": "QE", "QS": "QS", "A": "YE", "Y": "YE", "YE": "YE",
    "AS": "YS", "YS": "YS",
}
_WORDS: dict[str, str] = {
    "nanosecond": "ns", "nanoseconds": "ns", "microsecond": "us", "microseconds": "us",
    "millisecond": "ms", "milliseconds": "ms",
    "second": "s", "seconds": "s", "sec": "s", "secs": "s",
    "minute": "min", "minutes": "min", "mins": "min",
    "hour": "h", "hours": "h", "hr": "h", "hrs": "h", "hourly": "h",
    "day": "D", "days": "D", "daily": "D",
    "business day": "B", "business days": "B",
    "week": "W", "weeks": "W", "weekly": "W",
    "month": "MS", "months": "MS", "monthly": "MS",
    "quarter": "QS", "quarters": "QS", "quarterly": "QS",
    "year": "YS", "years": "YS", "yearly": "YS", "annual": "YS",
}
UNIT_ALIASES.update(_WORDS)

_PATTERN = re.compile(r"^\s*(\d+)?\s*([A-Za-z][A-Za-z ]*?)(-[A-Za-z]{3})?\s*$")

_CALENDAR_PERIODS = {"B": 5, "W": 52, "ME": 12, "MS": 12, "QE": 4, "QS": 4, "YE": 1, "YS": 1}


class FrequencyError(ValueError):
    """A frequency string the alias table cannot read."""


@dataclass(frozen=True)
class ParsedFrequency:
    """``raw``: the string as written; ``code``: a pandas offset alias pandas accepts
    (``"5min"``); ``offset``: the pandas DateOffset; ``rewritten``: whether the raw
    string was not already a code current pandas accepts."""

    raw: str
    code: str
    offset: pd.DateOffset
    rewritten: bool


def parse_frequency(text: str) -> ParsedFrequency:
    """Parse ``"1 day"``, ``"5 minutes"``, ``"5T"``, ``"H"``, ``"W-SUN"``, ... into a pandas offset.

    Raises :class:`FrequencyError` naming the string when it cannot be read.
    """
    if not isinstance(text, str) or not text.strip():
        raise FrequencyError(f"frequency must be a non-empty string, got {text!r}")
    match = _PATTERN.match(text)
    if not match:
        raise FrequencyError(f"cannot read frequency {text!r}")
    count, unit, anchor = match.group(1), match.group(2).strip(), match.group(3) or ""
    code = UNIT_ALIASES.get(unit) or _WORDS.get(unit.lower())
    if code is None:
        raise FrequencyError(
            f"cannot read frequency {text!r}: unknown unit {unit!r} "
            f"(known: {', '.join(sorted(set(UNIT_ALIASES)))})"
        )
    n = int(count) if count else 1
    if n < 1:
        raise FrequencyError(f"frequency {text!r} must have a positive multiple")
    import pandas as pd  # imported on use: pandas is slow to load

    full = f"{n if n != 1 else ''}{code}{anchor.upper() if anchor else ''}"
    try:
        offset = pd.tseries.frequencies.to_offset(full)
    except ValueError as exc:
        raise FrequencyError(f"cannot read frequency {text!r} (as {full!r}): {exc}") from None
    try:
        accepted = pd.tseries.frequencies.to_offset(text.strip()) == offset
    except ValueError:
        accepted = False
    return ParsedFrequency(raw=text, code=full, offset=offset, rewritten=not accepted)


#: a fixed naive instant (a Monday) to measure one step of an offset from
_ANCHOR = "2000-01-03"


def period_for(freq: ParsedFrequency) -> tuple[int, str]:
    """The seasonal period m implied by a frequency, and a one-line reason.

    See the module docstring for the rule.  Always returns m >= 1.
    """
    import pandas as pd  # imported on use: pandas is slow to load

    offset = freq.offset
    base = offset.rule_code  # e.g. "min", "h", "D", "ME", "W-SUN"
    root = base.split("-")[0]
    if root in _CALENDAR_PERIODS:
        m = max(1, round(_CALENDAR_PERIODS[root] / offset.n))
        return m, f"calendar frequency {freq.code}: m = {_CALENDAR_PERIODS[root]} / {offset.n}"
    # One step from a fixed naive instant: works whether Day is a Tick (pandas < 3.0 and >= 3.1) or a
    # calendar offset (pandas 3.0, which aeon's pin can select).
    anchor, day = pd.Timestamp(_ANCHOR), pd.Timedelta(days=1)
    step = (anchor + offset) - anchor
    if step < day:
        exact = day / step
        m = max(1, round(exact))
        note = "" if exact == m else f" (rounded from {exact:.2f})"
        return m, f"sub-daily step {freq.code}: {m} steps per day{note}"
    if step == day:
        return 7, "daily step: weekly cycle, 7"
    exact = pd.Timedelta(days=365.25) / step
    m = max(1, round(exact))
    return m, f"step {freq.code}: yearly cycle, round({exact:.2f}) = {m}"


def seasonal_period(value: object, task_frequency: ParsedFrequency) -> tuple[int, str | None]:
    """Resolve the release's ``seasonal_period`` field into an integer m >= 1.

    An int is used as given.  A string of digits is read as that int.  Any
    other string is a frequency code and m is derived from it (:func:`period_for`);
    a missing value derives m from the task's own frequency.  Returns ``(m, note)``
    where ``note`` records the rule applied (None when the int was used as given).
    Raises :class:`FrequencyError` for an unreadable value or an int < 1.
    """
    if isinstance(value, bool):
        raise FrequencyError(f"seasonal_period must be an int or a frequency code, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int):
        if value < 1:
            raise FrequencyError(f"seasonal_period must be >= 1, got {value}")
        return value, None
    if value is None:
        m, why = period_for(task_frequency)
        return m, f"seasonal_period missing: derived from frequency {task_frequency.raw!r}, m={m} ({why})"
    if isinstance(value, str):
        if value.strip().isdigit():
            m = int(value.strip())
            if m < 1:
                raise FrequencyError(f"seasonal_period must be >= 1, got {value!r}")
            return m, f"seasonal_period {value!r} is a string of digits: m={m}"
        parsed = parse_frequency(value)
        m, why = period_for(parsed)
        return m, f"seasonal_period {value!r} is a frequency code: m={m} ({why})"
    raise FrequencyError(f"seasonal_period must be an int or a frequency code, got {type(value).__name__}")

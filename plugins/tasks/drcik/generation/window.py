"""The time-window shift of Dr-CiK Section 4.1 step 3: a real series moves to another window, and every
timestamp of its context moves by the same offset, while the values stay.

Choices the paper leaves open (written down here once):

* the offset is a whole number of weeks (the spec's ``window_shift_weeks``, default 156: three years
  minus three days later), so the weekday and the time of day of every point stay, and with them the
  weekly and daily seasonality and statements such as "on weekends";
* only ``origin: real`` tasks move (synthetic series have no real window to be remembered);
* context timestamps are the ISO dates ``YYYY-MM-DD`` with an optional ``HH:MM`` or ``HH:MM:SS`` (the
  CAF format asks for events dated so); each is rewritten in the form it was written in.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from tsagent_plugins.tasks.drcik.generation.caf import TIMESTAMP_FORMAT, CafTask

DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:([ T])(\d{2}:\d{2}(?::\d{2})?))?\b")
DEFAULT_WEEKS = 156


def shift_text(text: str, offset: timedelta) -> str:
    """``text`` with every ISO date (and date-time) moved by ``offset``, each in its own format."""
    def move(match: re.Match) -> str:
        day, sep, clock = match.group(1), match.group(2), match.group(3)
        if clock is None:
            return (datetime.strptime(day, "%Y-%m-%d") + offset).strftime("%Y-%m-%d")
        fmt = "%Y-%m-%d %H:%M:%S" if clock.count(":") == 2 else "%Y-%m-%d %H:%M"
        moved = datetime.strptime(f"{day} {clock}", fmt) + offset
        return moved.strftime(fmt.replace(" ", sep))
    return DATE.sub(move, text)


def _parse(match: re.Match) -> datetime:
    clock = match.group(3) or "00:00:00"
    return datetime.strptime(f"{match.group(1)} {clock if clock.count(':') == 2 else clock + ':00'}",
                             TIMESTAMP_FORMAT)


def bad_dates(text: str) -> list[str]:
    """The ISO dates (and date-times) of ``text`` that are no calendar date or time (``2023-02-30``)."""
    out = []
    for m in DATE.finditer(text):
        try:
            _parse(m)
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
                moved = _parse(DATE.match(text)) + offset
            except (OverflowError, ValueError):
                pass
            if moved is None or not 1 <= moved.year <= 9999:
                problems.append(f"{name}: {text!r} moved by the window shift of {weeks} weeks leaves the calendar "
                                "(years 1-9999); fix the date or set the spec's window_shift_weeks")
                break
    return problems


def dates_in(text: str) -> list[datetime]:
    """Every ISO date or date-time named in ``text`` (a bare date at midnight)."""
    return [_parse(m) for m in DATE.finditer(text)]


def shift_task(task: CafTask, weeks: int) -> CafTask:
    """The task moved by ``weeks`` weeks (series timestamps and context dates); the values are the same
    objects' copies, unchanged.  Synthetic tasks and ``weeks == 0`` come back as they are."""
    if task.origin != "real" or weeks == 0:
        return task
    offset = timedelta(weeks=weeks)
    s = task.series

    def move(stamps: list[str]) -> list[str]:
        return [(datetime.strptime(t, TIMESTAMP_FORMAT) + offset).strftime(TIMESTAMP_FORMAT) for t in stamps]

    series = s.model_copy(update={"history_timestamps": move(s.history_timestamps),
                                  "future_timestamps": move(s.future_timestamps)})
    c = task.context
    context = c.model_copy(update={k: shift_text(getattr(c, k), offset)
                                   for k in ("background", "scenario", "constraints")})
    return task.model_copy(update={"series": series, "context": context})

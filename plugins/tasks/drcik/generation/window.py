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

from tsagent_plugins.tasks.drcik.generation.caf import DATE, TIMESTAMP_FORMAT, CafTask, parse_date

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


def dates_in(text: str) -> list[datetime]:
    """Every ISO date or date-time named in ``text`` (a bare date at midnight)."""
    return [parse_date(m) for m in DATE.finditer(text)]


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

"""A paper's summaries of a simulator's retained pool (:class:`ReferenceTables`), which the TraceBench pool
summary compares a generated pool with."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ReferenceTables:
    """A paper's summaries of a simulator's retained pool, to compare a generated pool with.

    ``ranges``: variable name (state variable or parameter) -> ``(min, median, max)`` over
    the retained samples.  ``snr``: channel name -> ``((low mean, low sd), (high mean,
    high sd))`` in dB at ``kappa_ref`` and TraceBench's ``kappa_high`` (4 ``kappa_ref``).  ``source``: where the numbers
    come from, e.g. a paper's table numbers.
    """

    ranges: Mapping[str, tuple[float, float, float]]
    snr: Mapping[str, tuple[tuple[float, float], tuple[float, float]]]
    source: str = ""

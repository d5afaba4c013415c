"""How a task template's episodes pair up for paired comparisons (``harness report --compare``, ``--ci``)
and for the power analysis of ``harness plan --power``.

A template declares its design as the class attribute
:attr:`harness.contracts.TaskTemplate.paired_design`; templates that declare
none get :data:`DEFAULT_DESIGN`.  The statistics that use it are in
:mod:`harness.report.paired` (comparisons), :mod:`harness.report.intervals`
(intervals on table cells) and :mod:`harness.power` (planning); see
``docs/results/statistics.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class PairedDesign:
    """The results columns that identify an episode and how they nest.

    ``metrics``: label -> results column compared (the first is the primary one, e.g.
    ``{"score": "score"}``); values in [0, 1] when ``trials`` is set.
    ``factors``: columns that together identify one episode's condition and unit (agent, condition,
    task, seed...); two episodes pair when they agree on every factor the compared groups do not name.
    ``clusters``: the factors whose combinations are the independent units (e.g. task and seed):
    paired differences are averaged within a cluster first, and the tests and intervals treat the
    cluster means as the observations.
    ``strata``: factors reported separately (one row each); every other unnamed factor is averaged
    within the cluster (e.g. noise levels, or agents for a condition effect).
    ``trials``: column (and task parameter) holding the number of scored items an episode's metric is a
    proportion of, for the binomial model of ``harness plan --power`` (None: no such model).
    ``replicate``: the factor whose values are independent repetitions of the same condition (seeds).
    ``prepare``: turns a template's raw result rows into the frame these columns refer to (derived
    columns, types); identity when None.
    """

    metrics: Mapping[str, str]
    factors: tuple[str, ...]
    clusters: tuple[str, ...]
    strata: tuple[str, ...] = ()
    trials: str | None = None
    replicate: str = "seed"
    prepare: "Callable[[pd.DataFrame], pd.DataFrame] | None" = field(default=None, compare=False)

    def __post_init__(self) -> None:
        stray = [c for c in (*self.clusters, *self.strata) if c not in self.factors]
        if stray:
            raise ValueError(f"paired design: cluster/stratum column(s) {', '.join(stray)} are not factors")
        if not self.metrics:
            raise ValueError("paired design: no metric")

    @property
    def primary(self) -> str:
        """The primary metric's column."""
        return next(iter(self.metrics.values()))


#: The design of a template that declares none: episodes of one task and seed pair up; tasks × seeds
#: are the clusters; the metric is the ``score`` column.
DEFAULT_DESIGN = PairedDesign(metrics={"score": "score"}, factors=("profile", "task", "seed"),
                              clusters=("task", "seed"))


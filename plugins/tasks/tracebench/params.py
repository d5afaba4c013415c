"""The ``params`` block of a ``template: tracebench`` TaskSpec (:class:`TracebenchParams`, pydantic) and the
pool sizes it is bounded by.

Imported when a spec is first validated (:attr:`.template.TracebenchTemplate.params_model`), not when the
plugin registers its template: loading the plugins needs no pydantic.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tsagent_plugins.tasks.tracebench.conditions import PAPER_CONDITIONS, paper_slug

#: Pool size per class (Appendix C.1: 142 held-out per class plus test and support).
DEFAULT_POOL_PER_CLASS = 160
#: Upper bound on the pool size per class a task may need, directly (``pool_per_class``) or through
#: its batch sizes (``heldout_per_class + examples_per_class + ceil(n_test / classes)``): four times
#: the default pool, which holds the paper's batches (Section 4.5: 10 test samples and 3 labeled
#: examples per class; Appendix C.1: 142 held-out per class).  The harness process generates and holds
#: the whole pool in memory, about 1.9 MB per unit of ``per_class`` for BallDrop (five classes of
#: 3999-step trajectories; peak RSS of one generating process measured 348 MB at 40, 572 MB at 160,
#: 1.46 GB at 640; BounceBall 1.31 GB at 640), where an unbounded ``n_test`` asked for tens of gigabytes
#: (``n_test: 100000``: 20145 per class, killed at 24 GB).  Larger pools: ``harness generate``.
MAX_POOL_PER_CLASS = 4 * DEFAULT_POOL_PER_CLASS


class ReleasedPoolRef(BaseModel):
    """``params.pool``: run on a downloaded TraceBench release instead of a generated pool.

    ``path``: the simulator's released directory (``questions.json``, ``sample_manifest.json``,
    ``dataframes/``; :mod:`tsagent_plugins.tasks.tracebench.released`).  ``condition``: the paper's
    condition slug whose sample assignment to use (default: the slug of this task's settings,
    e.g. ``gentle-cloud`` for direct / low noise).  ``noise`` is fixed text recorded in the
    run's parameters: the noise on these clean samples is this harness's model.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use

    path: str
    condition: str | None = None
    noise: Literal[
        "clean samples and assignments from the released dataset; observation noise from this "
        "harness's model (the released noise code is not public)"
    ] = ("clean samples and assignments from the released dataset; observation noise from this "
         "harness's model (the released noise code is not public)")


class TracebenchParams(BaseModel):
    """The ``params`` block of a ``template: tracebench`` TaskSpec.

    ``simulator``: a registered simulator name.  ``noise``: ``low`` (kappa_ref)
    or ``high`` (kappa_high).  ``context``: domain context in the prompt.
    ``examples_per_class``: labeled support samples per class (the paper uses
    3, or 0 in the no-examples ablation).  ``submission``: ``direct``
    (results.json) or ``programmatic`` (rule.py).  ``n_test``: test batch size
    (10 in the paper).  ``seed``: repetition seed (test, support and held-out
    selection, file names and noise).  ``pool_seed``: which generated sample
    pool.  ``heldout_per_class``: held-out samples per class for programmatic
    submission (142 in the paper, Appendix C.1).  ``pool_per_class``: samples
    per class in the generated pool (default 160, raised when the batches
    need more; a smaller pool makes quick demos and tests cheap).  The pool
    these sizes need may not exceed :data:`MAX_POOL_PER_CLASS` (640) per class.
    ``pool``: a released TraceBench directory to use instead (:class:`ReleasedPoolRef`).
    ``noise_seeds``: ``episode`` (one observation-noise seed for every sample of the episode, the kept
    reading: :func:`tsagent_plugins.tasks.tracebench.files.noise_seed` gives the evidence) or ``sample``
    (a seed of its own per sample, :func:`~tsagent_plugins.tasks.tracebench.files.sample_noise_seed`: the
    other reading, run by ``benchmarks/baselines.py --reading noise-seeds=sample``); a released pool takes
    its manifest's seeds and accepts only ``episode``.

    ``slug``: the paper's condition slug (:data:`PAPER_CONDITIONS`, Section 4.5),
    derived from ``noise``, ``submission``, ``context`` and whether
    ``examples_per_class > 0`` (None for a combination the paper does not run), so a
    spec need not state it and an override of a setting (``--set noise=high``, an
    experiment grid) re-derives it.  A slug stated in a spec (or set) is a check: it
    must name the condition of the params after overrides, else a ValueError says
    which; the shipped specs state none and name their condition in ``description``.

    Raises ValueError (a pydantic ValidationError) naming the field on bad values.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built on first use

    simulator: str
    noise: Literal["low", "high"]
    context: bool = True
    examples_per_class: int = Field(3, ge=0, le=MAX_POOL_PER_CLASS)
    submission: Literal["direct", "programmatic"]
    n_test: int = Field(10, ge=1)
    seed: int = Field(0, ge=0)
    pool_seed: int = Field(0, ge=0)
    heldout_per_class: int = Field(142, ge=0, le=MAX_POOL_PER_CLASS)
    pool_per_class: int | None = Field(None, ge=1, le=MAX_POOL_PER_CLASS)
    slug: str | None = None

    pool: ReleasedPoolRef | None = None
    noise_seeds: Literal["episode", "sample"] = "episode"

    @field_validator("simulator")
    @classmethod
    def _registered(cls, name: str) -> str:
        from harness import UnknownPlugin, get_plugin as get

        try:
            get("simulator", name)
        except UnknownPlugin as exc:
            raise ValueError(str(exc)) from None
        return name

    @model_validator(mode="after")
    def _paper_condition(self) -> "TracebenchParams":
        if self.pool is not None and self.noise_seeds != "episode":
            raise ValueError("noise_seeds: a released pool's manifest gives the noise seeds; only 'episode' applies")
        if not self.context and self.examples_per_class == 0:
            raise ValueError(
                "context: false with examples_per_class: 0 is not a TraceBench condition (the no-context "
                "ablation keeps the labeled examples); set context: true or examples_per_class > 0"
            )
        self._check_sizes()
        derived = paper_slug(self.noise, self.submission, self.context, self.examples_per_class)
        if self.slug is None:
            object.__setattr__(self, "slug", derived)  # frozen model: set once, while validating
        elif self.slug not in PAPER_CONDITIONS:
            raise ValueError(f"slug {self.slug!r} is not a paper condition (known: {sorted(PAPER_CONDITIONS)})")
        elif self.slug != derived:
            noise, submission, context, examples = PAPER_CONDITIONS[self.slug]
            raise ValueError(
                f"slug {self.slug!r} is noise: {noise}, submission: {submission}, context: "
                f"{str(context).lower()}, {'with' if examples else 'without'} labeled examples; these params set "
                f"noise: {self.noise}, submission: {self.submission}, context: {str(self.context).lower()}, "
                f"examples_per_class: {self.examples_per_class}. The slug is derived from these settings: "
                "leave 'slug' out of the spec (or --set slug=null) to take the settings' condition")
        return self

    def _check_sizes(self) -> None:
        """The pool these batch sizes need fits :data:`MAX_POOL_PER_CLASS` (ValueError naming the fields)."""
        from harness import get_plugin as get

        n_classes = len(get("simulator", self.simulator).labels)
        need = needed_per_class(self, n_classes)
        if need > MAX_POOL_PER_CLASS:
            raise ValueError(
                f"n_test: {self.n_test}, examples_per_class: {self.examples_per_class} and heldout_per_class: "
                f"{self.heldout_per_class} need a pool of {need} samples per class (heldout_per_class + "
                f"examples_per_class + ceil(n_test / {n_classes} classes)); at most {MAX_POOL_PER_CLASS} per class "
                f"(four times the default pool; the paper uses n_test 10, examples_per_class 3, heldout_per_class "
                "142)")


def needed_per_class(params: TracebenchParams, n_classes: int) -> int:
    """Pool samples per class the batches of ``params`` need: held-out + support + the test batch's share."""
    return params.heldout_per_class + params.examples_per_class + math.ceil(params.n_test / n_classes)

"""TraceBench's two noise regimes: ``low`` observes at the simulator's reference noise scale ``kappa_ref``
(``kappa_low = kappa_ref``), ``high`` at ``kappa_high = 4 kappa_ref``.  The factor is the benchmark's, not the
simulator's: a simulator only says what its reference scale is."""

from __future__ import annotations

from typing import Any

#: ``kappa_high / kappa_ref``
HIGH_NOISE_FACTOR = 4.0

#: the ``noise`` values of a TraceBench task
LEVELS = ("low", "high")


def kappa_high(sim: Any) -> float:
    """The high noise scale of ``sim``: ``HIGH_NOISE_FACTOR * sim.kappa_ref``."""
    return HIGH_NOISE_FACTOR * float(sim.kappa_ref)


def kappa(sim: Any, noise: str) -> float:
    """The noise scale of condition ``noise`` (``low`` | ``high``) for ``sim``; ValueError naming the value
    otherwise."""
    if noise == "low":
        return float(sim.kappa_ref)
    if noise == "high":
        return kappa_high(sim)
    raise ValueError(f"noise: {noise!r} is not a noise condition (expected one of {', '.join(LEVELS)})")

"""Appendix E preprocessing and Euclidean 1-nearest-neighbour classification (TraceBench).

Each trajectory is a DataFrame whose last column is time.  Preprocessing, the
same for every classical baseline: keep the original time grid, drop the time
column, no interpolation or standardisation; for a privileged baseline
subtract the clean paired no-intervention trajectory channel by channel; then
divide each impulse/force channel (the simulator's channels flagged
``impulse``, named by the task's ``impulse_columns``) by that trajectory's
maximum absolute value when nonzero.

That maximum is the one of the trajectory being prepared -- for a privileged baseline the residual
after the subtraction -- as Appendix E orders the steps ("After noise addition and privileged
subtraction, we divide ... by that trajectory's maximum absolute impulse force when nonzero").  For
a no-intervention sample the residual is its noise alone, stretched to a peak of 1; with the
episode's single noise seed (``tsagent_plugins.tasks.tracebench.files.noise_seed``) two such
residuals share one noise pattern and lie close together, so the class is still recognised.  The
other reading divides the residual by the observed trajectory's peak (``peak="observed"``, the
profile option ``options.impulse_peak``; ``benchmarks/baselines.py --reading impulse-peak=observed``
runs it beside the paper's cells).  Both were run (pool seed 0, 5 seeds, one noise seed per episode,
low / high noise; Table 22 in brackets): privileged Euclidean 1-NN on BallDrop 0.26 / 0.26 against
0.42 / 0.42 with the residual's peak (0.42 / 0.42), privileged MiniRocket + ridge on BallDrop
0.48 / 0.38 against 0.58 / 0.64 (0.60 / 0.60) and on BounceBall 0.30 / 0.26 against 0.44 / 0.40
(0.72 / 0.68); 7 of the 12 cells it touches lie outside the paper's spread, 4 with the residual's
peak.  The residual's peak is kept.

Euclidean distance: root-mean-square difference over the flattened
multichannel trajectory (over the common prefix when lengths differ).  Ties
are broken by distance, then class index (position in the allowed-label
order), then support-sample id.

This module is self-contained (numpy only) because its source is embedded into
the ``rule.py`` the agent submits in programmatic mode.
"""

import numpy as np


PEAKS = ("residual", "observed")


def features(values, impulse_columns, clean=None, peak="residual"):
    """Appendix E features of one trajectory.

    ``values``: array (T, C+1), time last.  ``clean``: the clean paired
    no-intervention trajectory, same shape (privileged variants only).  ``peak``: whose maximum
    absolute impulse divides the impulse channels: ``"residual"`` (the trajectory being prepared, the
    kept reading) or ``"observed"`` (the observed trajectory before the subtraction; the same without
    ``clean``).  Returns a float array (T, C).  Raises ValueError when ``clean`` has another shape or
    ``peak`` is unknown.
    """
    if peak not in PEAKS:
        raise ValueError("peak must be one of %s, got %r" % (PEAKS, peak))
    x = np.asarray(values, dtype=float)[:, :-1].copy()
    observed = x.copy()
    if clean is not None:
        c = np.asarray(clean, dtype=float)
        if c.shape != (x.shape[0], x.shape[1] + 1):
            raise ValueError("clean pair has shape %s, expected %s" % (c.shape, (x.shape[0], x.shape[1] + 1)))
        x = x - c[:, :-1]
    for col in impulse_columns:
        source = x if peak == "residual" else observed
        top = np.max(np.abs(source[:, col])) if len(x) else 0.0
        if top > 0:
            x[:, col] = x[:, col] / top
    return x


def rms_distance(a, b):
    """Root-mean-square difference of two (T, C) arrays over their common prefix."""
    n = min(len(a), len(b))
    return float(np.sqrt(np.mean((a[:n] - b[:n]) ** 2)))


def nearest(x, support, distance=rms_distance):
    """Index into ``support`` (a list of (features, class_index, sample_id)) of the nearest neighbour;
    ties by distance, then class index, then sample id."""
    keyed = [(distance(x, s[0]), s[1], s[2], i) for i, s in enumerate(support)]
    return min(keyed)[3]


def seed_of(data):
    """A 32-bit seed from text or bytes (FNV-1a), stable across processes and Python versions."""
    h = 2166136261
    for byte in data.encode() if isinstance(data, str) else bytes(data):
        h = ((h ^ byte) * 16777619) & 0xFFFFFFFF
    return h


def random_label(labels, seed):
    """One label drawn uniformly from ``labels`` with ``numpy.random.default_rng(seed)``."""
    return labels[int(np.random.default_rng(seed).integers(len(labels)))]

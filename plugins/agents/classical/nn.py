"""Euclidean 1-nearest-neighbour classification (TraceBench Appendix E).

Each trajectory is a DataFrame whose last column is time.  Features: the
remaining columns, no interpolation or standardisation; each impulse column is
divided by that trajectory's maximum absolute value when nonzero.  Distance:
root-mean-square difference over the flattened multichannel trajectory (over
the common prefix when lengths differ).  Ties are broken by distance, then
class index (position in the allowed-label order), then support-sample id.

This module is self-contained (numpy only) because its source is embedded into
the ``rule.py`` the agent submits in programmatic mode.
"""

import numpy as np


def features(values, impulse_columns):
    """``values``: array (T, C+1) with time last -> float array (T, C), impulse columns scaled."""
    x = np.asarray(values, dtype=float)[:, :-1].copy()
    for c in impulse_columns:
        peak = np.max(np.abs(x[:, c])) if len(x) else 0.0
        if peak > 0:
            x[:, c] = x[:, c] / peak
    return x


def rms_distance(a, b):
    """Root-mean-square difference of two (T, C) arrays over their common prefix."""
    n = min(len(a), len(b))
    return float(np.sqrt(np.mean((a[:n] - b[:n]) ** 2)))


def nearest(x, support):
    """Index into ``support`` (a list of (features, class_index, sample_id)) of the nearest neighbour."""
    keyed = [(rms_distance(x, s[0]), s[1], s[2], i) for i, s in enumerate(support)]
    return min(keyed)[3]

"""One pool sample drawn as in TraceBench Figures 3 and 5-7: channels stacked, clean and the
low- and high-noise observations side by side, the intervention time marked."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness import Simulator, SimulatedTrajectory as Trajectory
from tsagent_plugins.tasks.tracebench.noise import kappa_high


def plot_sample(sim: Simulator, clean: Trajectory, noisy_low: np.ndarray, noisy_high: np.ndarray, out: Path,
                title: str = "", t_int: float | None = None, dpi: int = 110) -> Path:
    """Write a PNG: one row per channel (``sim.channels``), columns clean / low noise
    (``kappa_ref``) / high noise (``kappa_high``); a dashed line at ``t_int`` (s) when given.
    ``noisy_*``: shape (T, C) like ``clean.values``.  Returns ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = np.asarray(clean.values, float)
    cols = [("clean", values), (f"low noise (kappa={sim.kappa_ref:g})", np.asarray(noisy_low, float)),
            (f"high noise (kappa={kappa_high(sim):g})", np.asarray(noisy_high, float))]
    for name, v in cols:
        if v.shape != values.shape:
            raise ValueError(f"{name}: shape {v.shape} differs from the clean values {values.shape}")
    n = len(sim.channels)
    fig, axes = plt.subplots(n, 3, figsize=(13, 2.2 * n + 0.8), sharex=True, squeeze=False)
    for j, (name, v) in enumerate(cols):
        for i, ch in enumerate(sim.channels):
            ax = axes[i, j]
            ax.plot(clean.time, v[:, i], lw=0.7, color="C0" if j == 0 else ("C1" if j == 1 else "C3"))
            if t_int is not None:
                ax.axvline(t_int, color="k", ls="--", lw=0.9)
            if i == 0:
                ax.set_title(name)
            if j == 0:
                ax.set_ylabel(f"{ch.name}\n[{ch.unit}]")
            if j > 0:  # same y-range across a row, set by the noisiest column
                ax.sharey(axes[i, 2])
        axes[-1, j].set_xlabel("time [s]")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi)
    plt.close(fig)
    return out

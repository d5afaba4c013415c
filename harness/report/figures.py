"""Report figures: matplotlib ``Figure`` objects drawn by the Agg canvas (no pyplot state), saved as PNG."""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure


def new_figure(**kwargs) -> Figure:
    """A Figure drawn by the Agg canvas (no GUI backend, no pyplot global state)."""
    fig = Figure(layout="constrained", **kwargs)
    FigureCanvasAgg(fig)
    return fig


def save_figures(figures: dict[str, Figure], folder: Path) -> dict[str, Path]:
    """Write each figure as ``<folder>/<key>.png``; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, fig in figures.items():
        path = folder / f"{key}.png"
        fig.savefig(path, dpi=110)
        paths[key] = path
    return paths

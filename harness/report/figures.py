"""Report figures: matplotlib ``Figure`` objects drawn by the Agg canvas (no pyplot state), saved as PNG.

Helpers every report section uses so its figures stay readable:

* :func:`set_title` -- a figure title wrapped to the canvas width;
* :func:`format_axis` -- SI-prefixed (``EngFormatter``) or compact/scientific
  tick labels and at most a few ticks; :func:`pad_limits` keeps a nearly
  constant quantity from being zoomed into sixth-decimal ticks;
* :func:`series_style` -- a distinct colour and marker per series;
  :func:`spread_coinciding` -- a small horizontal offset for points that would
  hide each other (the tables hold the exact values);
* :func:`no_data` -- the note an empty panel carries;
* :func:`outside_legend` -- one figure legend right of the panels (it hides no data);
* :func:`fit_ticks` -- fewer or rotated tick labels until none overlap;
* :func:`figure_problems` -- the readability checks (text inside the canvas, no
  overlapping tick labels, a legend entry per series, a note in each empty panel, no title running
  into the legend, no axis zoomed into a near-constant range).
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Iterable, Sequence

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.container import Container
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, FixedLocator, Formatter, MaxNLocator

NO_DATA_GID = "no-data"
#: distinct markers (filled and open shapes), cycled with the tab20 colours
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94")


def new_figure(**kwargs) -> Figure:
    """A Figure drawn by the Agg canvas (no GUI backend, no pyplot global state)."""
    fig = Figure(layout="constrained", **kwargs)
    FigureCanvasAgg(fig)
    return fig


def set_title(fig: Figure, text: str, fontsize: float = 11.0, reserve: float = 0.0) -> None:
    """``fig.suptitle`` wrapped so every line fits the canvas width (about 0.6 em per character).  With
    ``reserve`` inches kept free on the right (:func:`outside_legend`'s column) the title starts at the left
    edge and fills the rest, instead of being centred between two reserved columns."""
    width_pt = max(1.0, fig.get_figwidth() - reserve - 0.15) * 72 * 0.92
    chars = max(20, int(width_pt / (0.6 * fontsize)))
    lines = "\n".join(textwrap.wrap(text, chars))
    if reserve > 0:
        fig.suptitle(lines, fontsize=fontsize, x=0.1 / fig.get_figwidth(), ha="left")
    else:
        fig.suptitle(lines, fontsize=fontsize)
    fig._harness_title = (text, fontsize)  # noqa: SLF001 - rewrapped by outside_legend


class CompactFormatter(Formatter):
    """Tick labels with just the decimals that tell the ticks apart; scientific (``2.5e-05``) when
    the largest tick is below 1e-3 or from 1e5 on.  No offset text: each label is its own value."""

    def _label(self, value: float, decimals: int, scientific: bool) -> str:
        if value == 0:
            return "0"
        if scientific:
            mantissa, exponent = f"{value:.{decimals}e}".split("e")
            return f"{mantissa}e{int(exponent)}"
        return f"{value:.{decimals}f}"

    def set_locs(self, locs):
        self._ticks = [float(v) for v in locs]

    def format_ticks(self, values):
        self.set_locs(values)
        return [self(value, i) for i, value in enumerate(values)]

    def __call__(self, value, pos=None):
        locs = getattr(self, "_ticks", None) or [float(value)]
        big = max((abs(v) for v in locs), default=0.0)
        scientific = big != 0 and (big < 1e-3 or big >= 1e5)
        for decimals in range(0, 12):
            labels = [self._label(v, decimals, scientific) for v in locs]
            if len(set(labels)) == len(labels) and all(
                    math.isclose(float(label), v, rel_tol=1e-6, abs_tol=1e-12) for label, v in zip(labels, locs)):
                break
        return self._label(float(value), decimals, scientific)


def compact_number(value: float, _pos=None) -> str:
    """One value formatted as :class:`CompactFormatter` would alone (``0``, ``0.025``, ``2.5e-05``)."""
    return CompactFormatter()(value)


def format_axis(ax: Axes, axis: str = "x", si_unit: str | None = None, nbins: int = 4) -> None:
    """At most ``nbins`` ticks on ``axis`` labelled by :class:`CompactFormatter`, or SI-prefixed
    (``1.5 M``, ``250 k``) when ``si_unit`` is given (``""`` for a bare count)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_locator(MaxNLocator(nbins=nbins, min_n_ticks=2))
    if si_unit is not None:
        target.set_major_formatter(EngFormatter(unit=si_unit, places=None, sep="\u2009"))
    else:
        target.set_major_formatter(CompactFormatter())


def pad_limits(ax: Axes, values: Iterable[float], axis: str = "x", fraction: float = 0.15) -> None:
    """Limits around ``values`` at least ``fraction`` of their magnitude wide (centred on them), so a
    (nearly) constant quantity is shown at its size, not zoomed into digits that do not differ; a
    non-negative one whose values differ by less than that starts at 0 (one tool call: 0 to 1.3)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    if not finite:
        return
    low, high = min(finite), max(finite)
    magnitude = max(abs(low), abs(high))
    if low >= 0 and high - low <= fraction * magnitude:
        lo, hi = 0.0, (high * (1 + 2 * fraction) if high > 0 else 1.0)
    else:
        span = max(high - low, fraction * magnitude, 1e-12 if high else 1.0)
        half = span / 2 + 0.15 * span
        middle = (low + high) / 2
        lo, hi = middle - half, middle + half
        if low >= 0 and lo < 0:  # a non-negative quantity: from 0, with a margin when a point sits at 0
            lo = 0.0 if low > 0.04 * hi else -0.04 * hi
    (ax.set_xlim if axis == "x" else ax.set_ylim)(lo, hi)


def series_style(index: int) -> dict:
    """Colour and marker of the ``index``-th series (distinct for 16 × 12 series; open markers let
    coinciding points show through each other)."""
    colour = COLOURS[index % len(COLOURS)]
    return {"color": colour, "marker": MARKERS[index % len(MARKERS)], "markerfacecolor": "none",
            "markeredgecolor": colour, "markeredgewidth": 1.4, "markersize": 7}


def spread_coinciding(points: Sequence[tuple[float, float]], x_span: float, y_span: float,
                      step: float = 0.015) -> list[float]:
    """x offsets for ``points`` (x, y): points within ``step`` of the axis spans of an earlier one are
    shifted right by ``step * x_span`` per predecessor they coincide with."""
    offsets: list[float] = []
    for i, (x, y) in enumerate(points):
        same = sum(1 for (px, py) in points[:i]
                   if abs(px - x) <= step * x_span and abs(py - y) <= step * y_span)
        offsets.append(same * step * x_span)
    return offsets


def no_data(ax: Axes, note: str = "no data") -> None:
    """Mark ``ax`` as an empty panel: ``note`` in its middle, no ticks."""
    ax.text(0.5, 0.5, "\n".join(textwrap.wrap(note, 28)), transform=ax.transAxes, ha="center", va="center",
            fontsize=9, color="#555555", gid=NO_DATA_GID)
    ax.set_xticks([])
    ax.set_yticks([])


def outside_legend(fig: Figure, axes: Sequence[Axes], fontsize: float = 8.0) -> None:
    """One legend right of the panels with every labelled series of ``axes`` (each label once)."""
    entries: dict[str, object] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    if entries:
        columns = 1 if len(entries) <= 18 else 2
        legend = fig.legend(list(entries.values()), list(entries), loc="outside right upper", fontsize=fontsize,
                            ncols=columns, frameon=False)
        title = getattr(fig, "_harness_title", None)
        if title is not None:  # the title keeps clear of the legend's column
            fig.canvas.draw()
            width = legend.get_window_extent(fig.canvas.get_renderer()).width / fig.dpi
            set_title(fig, title[0], title[1], reserve=width + 0.2)


def _tick_labels(ax: Axes, axis: str, renderer) -> list:
    """The tick labels of ``axis`` that are drawn (inside the view interval, visible, not empty)."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    low, high = sorted(target.get_view_interval())
    tolerance = 1e-9 * max(abs(low), abs(high), 1e-300)
    return [t for loc, t in zip(target.get_ticklocs(), target.get_ticklabels())
            if low - tolerance <= loc <= high + tolerance and t.get_visible() and t.get_text()
            and t.get_window_extent(renderer).width > 0]


def _overlapping(labels: list, renderer) -> bool:
    boxes = [t.get_window_extent(renderer) for t in labels]
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])


def fit_ticks(fig: Figure, rounds: int = 8) -> None:
    """Rotate, then thin the tick labels of every panel until no two of an axis overlap; category
    labels (a fixed locator) are never thinned: they turn vertical, then get smaller.  One draw per round."""
    rotated: set[int] = set()
    for _ in range(rounds):
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        changed = False
        for ax in fig.axes:
            for axis in ("x", "y"):
                target = ax.xaxis if axis == "x" else ax.yaxis
                labels = _tick_labels(ax, axis, renderer)
                if not _overlapping(labels, renderer):
                    continue
                changed = True
                fixed = isinstance(target.get_major_locator(), FixedLocator)
                if axis == "x" and id(target) not in rotated:
                    rotated.add(id(target))
                    ax.tick_params(axis="x", labelrotation=90 if fixed else 30)
                    if not fixed:
                        for label in target.get_ticklabels():
                            label.set_horizontalalignment("right")
                    continue
                ticks = list(target.get_ticklocs())
                if not fixed and len(ticks) > 2:
                    target.set_major_locator(MaxNLocator(nbins=max(1, len(ticks) // 2), min_n_ticks=2))
                else:
                    size = max(5.0, labels[0].get_fontsize() - 1)
                    ax.tick_params(axis=axis, labelsize=size)
        if not changed:
            return


def _series(ax: Axes) -> list[tuple[object, str]]:
    """(artist, label) of every plotted series of ``ax``: containers (error bars), their loose lines
    and scatter collections."""
    inside = {id(child) for c in ax.containers for child in c.get_children()}
    out = [(c, c.get_label()) for c in ax.containers if isinstance(c, Container)]
    out += [(line, line.get_label()) for line in ax.lines if id(line) not in inside]
    out += [(col, col.get_label()) for col in ax.collections if id(col) not in inside]
    return out


def _is_empty(ax: Axes) -> bool:
    return not (ax.lines or ax.collections or ax.images or ax.containers or ax.patches)


#: An axis whose view spans less than this fraction of its largest value is zoomed into a near-constant.
DEGENERATE_SPAN = 0.05


def _degenerate(ax: Axes, axis: str) -> str | None:
    """``"lo–hi"`` when ``axis`` of a plotting panel is zoomed into digits that do not differ (a linear,
    non-categorical axis spanning under :data:`DEGENERATE_SPAN` of its magnitude), else None."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    if _is_empty(ax) or ax.images or target.get_scale() != "linear" \
            or isinstance(target.get_major_locator(), FixedLocator):
        return None
    low, high = sorted(target.get_view_interval())
    magnitude = max(abs(low), abs(high))
    if magnitude > 0 and high - low < DEGENERATE_SPAN * magnitude:
        return f"{low:.4g}–{high:.4g}"
    return None


def figure_problems(fig: Figure) -> list[str]:
    """What makes ``fig`` hard to read, as sentences (empty when none):

    the title, panel titles, axis labels, tick labels and legend texts must lie inside the canvas;
    no two tick labels of an axis may overlap; every plotted series must carry a label shown in a
    legend, and no legend may cover a panel or run into the title; every empty panel must carry the
    :func:`no_data` note; no axis may be zoomed into a near-constant range (:func:`_degenerate`).
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    canvas = fig.bbox
    problems: list[str] = []

    def inside(text, what: str) -> None:
        if text is None or not text.get_visible() or not text.get_text():
            return
        box = text.get_window_extent(renderer)
        if box.x0 < canvas.x0 - 1 or box.y0 < canvas.y0 - 1 or box.x1 > canvas.x1 + 1 or box.y1 > canvas.y1 + 1:
            problems.append(f"{what} {text.get_text()[:40]!r} reaches outside the canvas")

    inside(fig._suptitle, "title")
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    shown = {t.get_text() for legend in legends for t in legend.get_texts()}
    panels = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    for n, ax in enumerate(fig.axes):
        name = f"panel {n} ({ax.get_title()[:30]!r})"
        inside(ax.title, f"{name}: title")
        inside(ax.xaxis.label, f"{name}: x label")
        inside(ax.yaxis.label, f"{name}: y label")
        for axis in ("x", "y"):
            labels = _tick_labels(ax, axis, renderer)
            for label in labels:
                inside(label, f"{name}: {axis} tick label")
            if _overlapping(labels, renderer):
                problems.append(f"{name}: {axis} tick labels overlap ({', '.join(t.get_text() for t in labels)})")
        if ax not in panels:
            continue
        for artist, label in _series(ax):
            if not label or label.startswith("_"):
                problems.append(f"{name}: a plotted series has no label")
            elif label not in shown:
                problems.append(f"{name}: series {label!r} has no legend entry")
        for axis in ("x", "y"):
            zoomed = _degenerate(ax, axis)
            if zoomed:
                problems.append(f"{name}: {axis} axis zoomed into a near-constant range ({zoomed})")
        notes = [t for t in ax.texts if t.get_gid() == NO_DATA_GID]
        if _is_empty(ax) and not notes:
            problems.append(f"{name}: empty panel without a note")
        for note in notes:
            inside(note, f"{name}: note")
    for legend in legends:
        box = legend.get_window_extent(renderer)
        for ax in panels:
            if box.overlaps(ax.get_window_extent(renderer)):
                problems.append(f"legend covers panel {ax.get_title()[:30]!r}")
        for text in legend.get_texts():
            inside(text, "legend entry")
        title = fig._suptitle
        if title is not None and title.get_visible() and title.get_text() \
                and title.get_window_extent(renderer).overlaps(box):
            problems.append(f"the title {title.get_text()[:40]!r} runs into the legend")
    return problems


def save_figures(figures: dict[str, Figure], folder: Path) -> dict[str, Path]:
    """Write each figure as ``<folder>/<key>.png``; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, fig in figures.items():
        path = folder / f"{key}.png"
        fig.savefig(path, dpi=110)
        paths[key] = path
    return paths

"""Building blocks of viewer pages: escaping, highlighted numbers, tables, inline SVG charts.

Every function returns a :class:`markupsafe.Markup` (safe to put in a page) and
escapes the values it is given.  Charts are inline ``<svg>`` so a page works
the same from the server and from a ``--bundle`` opened over ``file://``, and
dozens of them draw in milliseconds.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

from markupsafe import Markup, escape

__all__ = ["Markup", "escape", "highlight_numbers", "table", "stacked_lines_svg", "fan_svg"]

#: Numeric literals as the viewer highlights them: integers, decimals, scientific
#: notation, nan/inf, not part of an identifier (``col1``, ``x2``).  A display
#: aid only; the counted metric is ``numeric_values_printed``.
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf)(?![\w.]*[A-Za-z_])",
                    re.IGNORECASE)


def highlight_numbers(text: str) -> Markup:
    """``text`` escaped, each numeric literal wrapped in ``<span class="num">``."""
    out, last = [], 0
    for match in NUMBER.finditer(text):
        out.append(str(escape(text[last:match.start()])))
        out.append(f'<span class="num">{escape(match.group())}</span>')
        last = match.end()
    out.append(str(escape(text[last:])))
    return Markup("".join(out))


def table(header: Iterable[Any], rows: Iterable[Iterable[Any]], css: str = "") -> Markup:
    """A plain table in a box that scrolls sideways when the table is wider than the page (phones);
    cells that are :class:`Markup` are kept, others escaped."""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return Markup(f'<div class="scroll"><table class="{escape(css)}"><thead><tr>{head}</tr></thead>'
                  f'<tbody>{body}</tbody></table></div>')


# -- inline SVG charts (fast enough to draw dozens per page; no figure library in the request path) -------------

def _ticks(lo: float, hi: float) -> str:
    return f"{lo:.3g} … {hi:.3g}"


def _points(x: Any, y: Any, x0: float, x1: float, y0: float, y1: float, width: float, height: float,
            left: float, top: float) -> str:
    import numpy as np

    x = np.asarray(x, float)
    y = np.asarray(y, float)
    ok = np.isfinite(x) & np.isfinite(y)
    px = left + (x[ok] - x0) / ((x1 - x0) or 1.0) * width
    py = top + height - (y[ok] - y0) / ((y1 - y0) or 1.0) * height
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(px, py))


def _range(*arrays: Any) -> tuple[float, float]:
    import numpy as np

    values = np.concatenate([np.asarray(a, float).ravel() for a in arrays])
    values = values[np.isfinite(values)]
    if not len(values):
        return 0.0, 1.0
    lo, hi = float(values.min()), float(values.max())
    return (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)


def stacked_lines_svg(x: Any, channels: dict[str, Any], title: str = "", width: int = 440,
                      row_height: int = 56, marker: float | None = None, marker_label: str = "") -> Markup:
    """One line chart per channel, stacked on a shared x axis, as inline ``<svg>``.

    ``x``: (N,) values; ``channels``: name -> (N,) values.  Each row is scaled
    to its own range, printed at its left as ``min … max`` under its name (a long name on two lines).  ``marker``: an x value
    marked by a dashed vertical line through every row (e.g. the intervention time),
    labelled ``marker_label``.
    """
    # a wider left margin when a name needs it (two lines of up to WIDE_LABEL_CHARS characters)
    chars = LABEL_CHARS if all(len(str(n)) <= LABEL_CHARS for n in channels) else WIDE_LABEL_CHARS
    left, pad = (96 if chars == LABEL_CHARS else 120), 4
    top = 16 if title else 4
    height = top + row_height * len(channels) + 14
    x0, x1 = _range(x)
    parts = [f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img"><title>{escape(title)}</title>']
    if title:
        parts.append(f'<text x="{left}" y="11" font-size="11" fill="#1d2433">{escape(title)}</text>')
    for row, (name, y) in enumerate(channels.items()):
        y0, y1 = _range(y)
        y_top = top + row * row_height
        parts.append(f'<rect x="{left}" y="{y_top + pad}" width="{width - left - 4}" height="{row_height - 2 * pad}" '
                     f'fill="#f7f8fa" stroke="#e3e6ec"/>')
        lines = _label_lines(str(name), chars)
        first = y_top + row_height / 2 - 12 * (len(lines) - 1)
        for i, line in enumerate(lines):
            parts.append(f'<text x="{left - 6}" y="{first + 12 * i}" font-size="12" text-anchor="end" '
                         f'fill="#1d2433">{escape(line)}</text>')
        parts.append(f'<text x="{left - 6}" y="{y_top + row_height / 2 + 13}" font-size="10" text-anchor="end" '
                     f'fill="#667085">{escape(_ticks(y0, y1))}</text>')
        points = _points(x, y, x0, x1, y0, y1, width - left - 4, row_height - 2 * pad - 2, left, y_top + pad + 1)
        parts.append(f'<polyline fill="none" stroke="#2f5fb3" stroke-width="0.8" points="{points}"/>')
    if marker is not None and x0 <= marker <= x1:
        mx = left + (marker - x0) / ((x1 - x0) or 1.0) * (width - left - 4)
        parts.append(f'<line class="marker" x1="{mx:.1f}" x2="{mx:.1f}" y1="{top}" y2="{height - 14}" stroke="#d92d20" '
                     f'stroke-width="1" stroke-dasharray="4 3"/>')
        if marker_label:
            parts.append(f'<text x="{mx + 3:.1f}" y="{top + 10}" font-size="10" fill="#d92d20">'
                         f'{escape(marker_label)}</text>')
    parts.append(f'<text x="{left}" y="{height - 2}" font-size="10" fill="#667085">x: {escape(_ticks(x0, x1))}</text>')
    parts.append("</svg>")
    return Markup("".join(parts))


#: Characters of a channel name that fit one line of a stacked chart's left margin (12 px text in 90 px), and in
#: the wider margin (114 px) a chart takes when a name is longer.
LABEL_CHARS, WIDE_LABEL_CHARS = 14, 17


def _label_lines(name: str, chars: int = LABEL_CHARS) -> list[str]:
    """A channel name as at most two lines of ``chars`` characters, broken at the last space that fits (a longer
    second line is cut with an ellipsis)."""
    if len(name) <= chars:
        return [name]
    cut = name.rfind(" ", 0, chars + 1)
    head, tail = (name[:cut], name[cut + 1:]) if cut > 0 else (name[:chars], name[chars:])
    return [head, tail if len(tail) <= chars else tail[:chars - 1] + "…"]


def _time_ticks(x0: float, x1: float, count: int = 4) -> list[tuple[float, str]]:
    """``count + 1`` evenly spaced ticks of an epoch-seconds axis, labelled as dates (with the hour when the
    span is under 10 days)."""
    import pandas as pd

    fmt = "%m-%d %H:%M" if x1 - x0 < 10 * 86400 else "%Y-%m-%d"
    return [(x0 + (x1 - x0) * i / count, pd.Timestamp(x0 + (x1 - x0) * i / count, unit="s").strftime(fmt))
            for i in range(count + 1)]


def fan_svg(history_x: Any, history: Any, future_x: Any, samples: Any, future: Any | None = None,
            title: str = "", width: int = 640, height: int = 250, time_axis: bool = False) -> Markup:
    """A forecast fan as inline ``<svg>``: history line, the sample paths' 5–95 % and 25–75 %
    bands and median over the horizon (joined to the last history point, so no gap opens between
    them), and the realised future when given.

    ``history_x``/``history``: (T,); ``future_x``: (H,); ``samples``: (S, H);
    ``future``: (H,) or None (not drawn: hidden, or not revealed); ``time_axis``: x values are
    epoch seconds, labelled as dates under the plot.
    """
    import numpy as np

    samples = np.asarray(samples, float)
    q = np.nanpercentile(samples, [5, 25, 50, 75, 95], axis=0) if samples.size else np.zeros((5, 0))
    history_x, history, future_x = np.asarray(history_x, float), np.asarray(history, float), np.asarray(future_x, float)
    if q.shape[1] and len(history) and np.isfinite(history[-1]):  # start the fan where the history ends
        future_x = np.concatenate([history_x[-1:], future_x])
        q = np.concatenate([np.full((5, 1), history[-1]), q], axis=1)
        future = None if future is None else np.concatenate([history[-1:], np.asarray(future, float)])
    left, top, bottom, right = 52, 18 if title else 6, 30 if time_axis else 16, 10
    w, h = width - left - right, height - top - bottom
    x0, x1 = _range(history_x, future_x)
    arrays = [history, q] + ([future] if future is not None else [])
    y0, y1 = _range(*arrays)

    def band(lo, hi, color, css):
        upper = _points(future_x, hi, x0, x1, y0, y1, w, h, left, top)
        lower = _points(np.asarray(future_x)[::-1], np.asarray(lo)[::-1], x0, x1, y0, y1, w, h, left, top)
        return f'<polygon class="{css}" fill="{color}" stroke="none" points="{upper} {lower}"/>'

    parts = [f'<svg class="chart fan" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img"><title>{escape(title)}</title>',
             f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="#fbfcfd" stroke="#e3e6ec"/>']
    if title:
        parts.append(f'<text x="{left}" y="12" font-size="11" fill="#1d2433">{escape(title)}</text>')
    parts.append(f'<text x="{left - 4}" y="{top + 10}" font-size="10" text-anchor="end" fill="#667085">{y1:.4g}</text>')
    parts.append(f'<text x="{left - 4}" y="{top + h}" font-size="10" text-anchor="end" fill="#667085">{y0:.4g}</text>')
    if time_axis:
        for value, label in _time_ticks(x0, x1):
            px = left + (value - x0) / ((x1 - x0) or 1.0) * w
            anchor = "start" if value == x0 else "end" if value == x1 else "middle"
            parts.append(f'<line x1="{px:.1f}" x2="{px:.1f}" y1="{top + h}" y2="{top + h + 4}" stroke="#98a2b3"/>'
                         f'<text class="tick" x="{px:.1f}" y="{top + h + 16}" font-size="10" text-anchor="{anchor}" '
                         f'fill="#667085">{escape(label)}</text>')
    if len(history_x):  # where the forecast starts
        sx = left + (history_x[-1] - x0) / ((x1 - x0) or 1.0) * w
        parts.append(f'<line class="forecast-start" x1="{sx:.1f}" x2="{sx:.1f}" y1="{top}" y2="{top + h}" '
                     f'stroke="#98a2b3" stroke-dasharray="2 3"/>')
    parts.append(f'<polyline fill="none" stroke="#1d2433" stroke-width="1" '
                 f'points="{_points(history_x, history, x0, x1, y0, y1, w, h, left, top)}"/>')
    if q.shape[1]:
        parts.append(band(q[0], q[4], "#b2ccff", "fan-outer"))
        parts.append(band(q[1], q[3], "#84adff", "fan-inner"))
        parts.append(f'<polyline class="fan-median" fill="none" stroke="#1849a9" stroke-width="1.2" '
                     f'points="{_points(future_x, q[2], x0, x1, y0, y1, w, h, left, top)}"/>')
    if future is not None:
        parts.append(f'<polyline class="future" fill="none" stroke="#d92d20" stroke-width="1" stroke-dasharray="3 2" '
                     f'points="{_points(future_x, future, x0, x1, y0, y1, w, h, left, top)}"/>')
    parts.append("</svg>")
    return Markup("".join(parts))

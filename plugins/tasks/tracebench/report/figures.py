"""The TraceBench figures, built as matplotlib ``Figure`` objects (Agg canvas, no pyplot state).

* :func:`confusion_figures` -- Appendix F (Figures 11-13): per simulator, one
  confusion matrix per agent (rows) and noise level (columns) for direct-answer
  episodes of the main setting; matrix rows are true labels, columns predicted
  top-1 labels (plus ``invalid`` when some predictions were), cells hold raw
  counts and the colour is the row-normalised fraction.  Per-sample
  predictions come from each episode's ``score.json`` details (``split``
  ``test``, ``true_label``, ``predicted``, ``reason``).
* :func:`resource_figure` -- Figure 4: episode accuracy against total tokens,
  cost, time and tool calls; one point per agent over all main-setting
  episodes, error bars the population SD (ddof = 0) on both axes, and the
  random-chance accuracy as a dashed reference line.  Agents without a
  quantity (a classical baseline has no tokens or cost) are left out of that
  panel; a panel nobody has says so.
* :func:`cost_figures` -- Appendix D.2 (Figures 8-10): per simulator and main
  condition, mean episode accuracy against mean cost per agent, error bars the
  sample SD across seeds (baselines, which make no model calls, at cost 0).
* :func:`main_result_figure` -- the main result at a glance (Table 1 and Appendix D's
  per-simulator tables as a picture): per simulator, mean episode accuracy of every agent and
  baseline in each main condition, error bars the sample SD across seeds, and the simulator's
  random-chance accuracy as a dashed line.

Each agent has its own colour and open marker; points that would hide each
other are shifted right by 1.5% of the axis span (the Resource-use and
per-simulator tables hold the exact values).  The legend sits right of the
panels, so it covers no data.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness import read_score
from harness.reporting import (episode_dir, fit_ticks, format_axis, new_figure, no_data, outside_legend, pad_limits,
                               read_json, series_style, set_title, spread_coinciding)
from tsagent_plugins.tasks.tracebench.report.answers import chance_level
from tsagent_plugins.tasks.tracebench.report.tables import NOISES, SUBMISSIONS, time_column

NO_CHANGE = "no parameter change"


INVALID = "invalid"


def _label_order(labels: set[str], preferred: list[str] | None) -> list[str]:
    order = [l for l in (preferred or []) if l in labels]
    rest = sorted(labels - set(order), key=lambda l: (l == NO_CHANGE, l == INVALID, l))
    return order + rest


def _predictions(row) -> list[tuple[str, str]]:
    score = read_score(episode_dir(row))
    out = []
    for item in (score or {}).get("details", []) or []:
        if not isinstance(item, dict) or item.get("split", "test") != "test":
            continue
        truth = item.get("class_label") or item.get("true_label")
        predicted = item.get("predicted")
        if item.get("reason") or not isinstance(predicted, list) or not predicted or not isinstance(predicted[0], str):
            top = INVALID
        else:
            top = predicted[0]
        if truth:
            out.append((str(truth), top))
    return out


def confusion_figures(frame: pd.DataFrame, agents: list[str]) -> dict[str, Figure]:
    """One figure per simulator (key ``confusion-<simulator>``)."""
    figures: dict[str, Figure] = {}
    direct = frame[(frame["setting"] == "main") & (frame["submission"] == "direct")]
    for sim, rows in sorted(direct.groupby("simulator"), key=lambda kv: kv[0]):
        noises = [n for n in NOISES if n in set(rows["noise"])]
        shown_agents = [a for a in agents if a in set(rows["profile"])]
        counts: dict[tuple[str, str], Counter] = {}
        labels: set[str] = set()
        preferred: list[str] | None = None
        for _, row in rows.iterrows():
            pairs = _predictions(row)
            counts.setdefault((row["profile"], row["noise"]), Counter()).update(pairs)
            labels |= {t for t, _ in pairs}
            if preferred is None:
                key = read_json(episode_dir(row) / "key" / "key.json")
                if key and isinstance(key.get("labels"), list):
                    preferred = [str(l) for l in key["labels"]]
        if not labels:
            continue
        truth_labels = _label_order(labels, preferred)
        predicted_labels = list(truth_labels)
        if any(p == INVALID for c in counts.values() for (_, p) in c):
            predicted_labels.append(INVALID)
        predicted_labels += sorted({p for c in counts.values() for (_, p) in c} - set(predicted_labels))
        fig = new_figure(figsize=(3.8 * len(noises) + 2.2, 3.4 * len(shown_agents) + 1.2))
        axes = fig.subplots(len(shown_agents), len(noises), squeeze=False)
        set_title(fig, f"{sim}: direct-answer confusion matrices (rows: truth, columns: predicted; "
                       "cells: counts, colour: row-normalised fraction)")
        image = None
        for i, agent in enumerate(shown_agents):
            for j, noise in enumerate(noises):
                ax = axes[i][j]
                c = counts.get((agent, noise), Counter())
                if not c:
                    no_data(ax, f"{agent}: no direct-answer episode at {noise} noise")
                    ax.set_title(f"{agent}, {noise} noise", fontsize=9)
                    continue
                matrix = np.array([[c[(t, p)] for p in predicted_labels] for t in truth_labels], dtype=float)
                totals = matrix.sum(axis=1, keepdims=True)
                fraction = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
                image = ax.imshow(fraction, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
                for (r, k), value in np.ndenumerate(matrix):
                    ax.text(k, r, f"{int(value)}", ha="center", va="center", fontsize=8,
                            color="white" if fraction[r, k] > 0.6 else "black")
                ax.set_title(f"{agent}, {noise} noise", fontsize=9)
                ax.set_xticks(range(len(predicted_labels)), predicted_labels, rotation=90, fontsize=7)
                ax.set_yticks(range(len(truth_labels)), truth_labels, fontsize=7)
                if j == 0:
                    ax.set_ylabel("true label")
                if i == len(shown_agents) - 1:
                    ax.set_xlabel("predicted label")
        if image is not None:
            fig.colorbar(image, ax=axes, shrink=0.6, label="row-normalised fraction")
        fit_ticks(fig)
        figures[f"confusion-{sim}"] = fig
    return figures


#: (column, axis label, SI unit or None for compact numbers) of Figure 4's panels
RESOURCE_AXES = (("total_tokens", "Total tokens", ""), ("cost_usd", "Cost (USD)", None),
                 ("_time", "Episode time (s)", None), ("tool_calls", "Tool calls", None))
NO_QUANTITY = {"total_tokens": "no token counts: no agent here made model calls",
               "cost_usd": "no costs: no agent here made priced model calls",
               "_time": "no episode times recorded", "tool_calls": "no tool calls recorded"}


def _size(n_agents: int, panels: int, panel_width: float = 3.6) -> tuple[float, float]:
    """Figure size: panels side by side plus a legend column; taller when many agents are listed."""
    return panel_width * panels + 2.6, max(3.8, 1.6 + 0.22 * n_agents)


def _points(ax, points: list[tuple[str, float, float, float, float]], style: dict[str, dict]) -> None:
    """Draw (agent, x, y, xerr, yerr) points with error bars, shifting coinciding ones apart."""
    xs = [p[1] for p in points]
    pad_limits(ax, [x - e for _, x, _, e, _ in points] + [x + e for _, x, _, e, _ in points], "x")
    low, high = ax.get_xlim()
    offsets = spread_coinciding([(p[1], p[2]) for p in points], high - low, 1.05)
    for (agent, x, y, xerr, yerr), shift in zip(points, offsets, strict=True):
        ax.errorbar(x + shift, y, xerr=xerr, yerr=yerr, capsize=3, linestyle="none", label=agent, **style[agent])
    if xs:
        pad_limits(ax, [x - e for _, x, _, e, _ in points] + [x + e + o for (_, x, _, e, _), o
                                                               in zip(points, offsets, strict=True)], "x")


def resource_figure(frame: pd.DataFrame, agents: list[str]) -> Figure | None:
    """Figure 4: accuracy against tokens, cost, time and tool calls (one point per agent)."""
    main = time_column(frame[frame["setting"] == "main"])
    if main.empty:
        return None
    style = {agent: series_style(i) for i, agent in enumerate(agents)}
    fig = new_figure(figsize=_size(len(agents), len(RESOURCE_AXES)))
    axes = fig.subplots(1, len(RESOURCE_AXES), squeeze=False)[0]
    set_title(fig, "Accuracy against resource use (main experiment; one point per agent, error bars: population "
                   "SD; coinciding points shifted slightly, exact values in the Resource-use table)")
    chance = chance_level(main)
    for ax, (column, label, unit) in zip(axes, RESOURCE_AXES, strict=True):
        ax.set_title(f"Accuracy vs {label.split(' (')[0].lower()}", fontsize=10)
        points = []
        for agent in agents:
            rows = main[main["profile"] == agent]
            if column not in rows.columns:
                continue
            both = pd.DataFrame({"x": pd.to_numeric(rows[column], errors="coerce"),
                                 "y": pd.to_numeric(rows["accuracy"], errors="coerce")}).dropna()
            if both.empty:
                continue
            points.append((agent, float(both["x"].mean()), float(both["y"].mean()), float(both["x"].std(ddof=0)),
                           float(both["y"].std(ddof=0))))
        if not points:
            no_data(ax, NO_QUANTITY[column])
            continue
        _points(ax, points, style)
        if chance is not None:
            ax.axhline(chance, linestyle="--", color="grey", label=f"random chance ({chance:.3f})")
        ax.set_xlabel(label)
        ax.set_ylabel("Episode accuracy")
        ax.set_ylim(-0.05, 1.05)  # a point at accuracy 0 stays clear of the axis
        format_axis(ax, "x", si_unit=unit)
    outside_legend(fig, axes)
    fit_ticks(fig)
    return fig


def cost_figures(frame: pd.DataFrame, agents: list[str]) -> dict[str, Figure]:
    """Appendix D.2: per simulator, accuracy against cost in each main condition (key ``accuracy-cost-<sim>``).

    Agents whose episodes record no cost (classical baselines: no model calls) are drawn at cost 0, so the
    baselines stand beside the agents; a condition no agent ran has no panel.  A simulator none of whose
    episodes has a cost (classical baselines only) gets no figure."""
    figures: dict[str, Figure] = {}
    main = frame[frame["setting"] == "main"]
    if "cost_usd" not in main.columns:
        return figures
    style = {agent: series_style(i) for i, agent in enumerate(agents)}
    for sim, rows in sorted(main.groupby("simulator"), key=lambda kv: kv[0]):
        if pd.to_numeric(rows["cost_usd"], errors="coerce").dropna().empty:
            continue
        conditions = [(n, s) for n in NOISES for s in SUBMISSIONS
                      if not rows[(rows["noise"] == n) & (rows["submission"] == s)].empty]
        fig = new_figure(figsize=_size(len(agents), len(conditions)))
        axes = fig.subplots(1, len(conditions), squeeze=False)[0]
        set_title(fig, f"{sim}: episode accuracy against evaluation cost per agent (error bars: SD across seeds; "
                       "classical baselines make no model calls and sit at cost 0)")
        chance = chance_level(rows)
        for ax, (noise, submission) in zip(axes, conditions, strict=True):
            ax.set_title(f"{noise} noise, {submission}", fontsize=10)
            cell = rows[(rows["noise"] == noise) & (rows["submission"] == submission)]
            points = []
            for agent in agents:
                sub = cell[cell["profile"] == agent]
                cost = pd.to_numeric(sub["cost_usd"], errors="coerce")
                if cost.isna().all():  # no model calls (a classical baseline): no cost, drawn at 0
                    cost = cost.fillna(0.0)
                both = pd.DataFrame({"x": cost, "y": pd.to_numeric(sub["accuracy"], errors="coerce")}).dropna()
                if both.empty:
                    continue
                sd = (lambda s: float(s.std(ddof=1)) if len(s) > 1 else 0.0)
                points.append((agent, float(both["x"].mean()), float(both["y"].mean()), sd(both["x"]), sd(both["y"])))
            if not points:
                no_data(ax, "no episode with a cost in this condition")
                continue
            _points(ax, points, style)
            if chance is not None:
                ax.axhline(chance, linestyle="--", color="grey", label=f"random chance ({chance:.3f})")
            ax.set_xlabel("Cost (USD)")
            ax.set_ylabel("Episode accuracy")
            ax.set_ylim(-0.05, 1.05)  # a point at accuracy 0 stays clear of the axis
            format_axis(ax, "x")
        outside_legend(fig, axes)
        fit_ticks(fig)
        figures[f"accuracy-cost-{sim}"] = fig
    return figures


def main_result_figure(frame: pd.DataFrame, agents: list[str]) -> Figure | None:
    """Main result (key ``main-result``): one panel per simulator; x the main conditions (noise ×
    submission), y mean episode accuracy per agent (agents and baselines alike) with the sample SD across
    seeds; the simulator's random-chance accuracy dashed.  None without main-setting rows."""
    main = frame[frame["setting"] == "main"]
    if main.empty:
        return None
    sims = sorted(set(main["simulator"]))
    conditions = [(n, s) for n in NOISES for s in SUBMISSIONS
                  if not main[(main["noise"] == n) & (main["submission"] == s)].empty]
    shown = [a for a in agents if a in set(main["profile"])]
    style = {agent: series_style(i) for i, agent in enumerate(agents)}
    fig = new_figure(figsize=_size(len(shown), len(sims), panel_width=max(3.2, 1.1 * len(conditions) + 1.0)))
    axes = fig.subplots(1, len(sims), squeeze=False, sharey=True)[0]
    set_title(fig, "Main result: episode accuracy by condition and simulator (mean over seeds, error bars: "
                   "sample SD; dashed: random chance)")
    width = 0.7
    for ax, sim in zip(axes, sims, strict=True):
        rows = main[main["simulator"] == sim]
        ax.set_title(sim, fontsize=10)
        for i, agent in enumerate(shown):
            xs, ys, errs = [], [], []
            for k, (noise, submission) in enumerate(conditions):
                values = pd.to_numeric(rows[(rows["profile"] == agent) & (rows["noise"] == noise)
                                            & (rows["submission"] == submission)]["accuracy"], errors="coerce").dropna()
                if values.empty:
                    continue
                xs.append(k - width / 2 + width * (i + 0.5) / len(shown))
                ys.append(float(values.mean()))
                errs.append(float(values.std(ddof=1)) if len(values) > 1 else 0.0)
            if xs:
                ax.errorbar(xs, ys, yerr=errs, capsize=2, linestyle="none", label=agent, **style[agent])
        chance = chance_level(rows)
        if chance is not None:
            ax.axhline(chance, linestyle="--", color="grey", label=f"random chance ({chance:.3f})")
        ax.set_xticks(range(len(conditions)), [f"{n} noise\n{s}" for n, s in conditions], fontsize=8)
        ax.set_xlim(-0.6, len(conditions) - 0.4)
        ax.set_ylim(-0.05, 1.05)
        if ax is axes[0]:
            ax.set_ylabel("Episode accuracy")
    outside_legend(fig, axes)
    fit_ticks(fig)
    return fig

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
  random-chance accuracy as a dashed reference line.
* :func:`cost_figures` -- Appendix D.2 (Figures 8-10): per simulator and main
  condition, mean episode accuracy against mean cost per agent, error bars the
  sample SD across seeds.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from harness import episode_dir, new_figure, read_json
from tsagent_plugins.tasks.tracebench.report.answers import chance_level
from tsagent_plugins.tasks.tracebench.report.tables import NOISES, SUBMISSIONS, time_column

NO_CHANGE = "no parameter change"


INVALID = "invalid"


def _label_order(labels: set[str], preferred: list[str] | None) -> list[str]:
    order = [l for l in (preferred or []) if l in labels]
    rest = sorted(labels - set(order), key=lambda l: (l == NO_CHANGE, l == INVALID, l))
    return order + rest


def _predictions(row) -> list[tuple[str, str]]:
    score = read_json(episode_dir(row) / "score.json")
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
        fig = new_figure(figsize=(3.6 * len(noises) + 1.5, 3.2 * len(shown_agents) + 0.8))
        axes = fig.subplots(len(shown_agents), len(noises), squeeze=False)
        fig.suptitle(f"{sim}: direct-answer confusion matrices (rows: truth, columns: predicted)")
        image = None
        for i, agent in enumerate(shown_agents):
            for j, noise in enumerate(noises):
                ax = axes[i][j]
                c = counts.get((agent, noise), Counter())
                matrix = np.array([[c[(t, p)] for p in predicted_labels] for t in truth_labels], dtype=float)
                totals = matrix.sum(axis=1, keepdims=True)
                fraction = np.divide(matrix, totals, out=np.zeros_like(matrix), where=totals > 0)
                image = ax.imshow(fraction, cmap="Blues", vmin=0.0, vmax=1.0, aspect="auto")
                for (r, k), value in np.ndenumerate(matrix):
                    ax.text(k, r, f"{int(value)}", ha="center", va="center", fontsize=8,
                            color="white" if fraction[r, k] > 0.6 else "black")
                ax.set_title(f"{agent}, {noise} noise", fontsize=9)
                ax.set_xticks(range(len(predicted_labels)), predicted_labels, rotation=45, ha="right", fontsize=7)
                ax.set_yticks(range(len(truth_labels)), truth_labels, fontsize=7)
                if j == 0:
                    ax.set_ylabel("true label")
                if i == len(shown_agents) - 1:
                    ax.set_xlabel("predicted label")
        if image is not None:
            fig.colorbar(image, ax=axes, shrink=0.6, label="row-normalised fraction")
        figures[f"confusion-{sim}"] = fig
    return figures


RESOURCE_AXES = (("total_tokens", "Total tokens (M)", 1e-6), ("cost_usd", "Cost (USD)", 1.0),
                 ("_time", "Episode time (s)", 1.0), ("tool_calls", "Tool calls", 1.0))


def resource_figure(frame: pd.DataFrame, agents: list[str]) -> Figure | None:
    """Figure 4: accuracy against tokens, cost, time and tool calls (one point per agent)."""
    main = time_column(frame[frame["setting"] == "main"])
    if main.empty:
        return None
    fig = new_figure(figsize=(16, 4))
    axes = fig.subplots(1, len(RESOURCE_AXES), squeeze=False)[0]
    fig.suptitle("Accuracy against resource use (main experiment; error bars: population SD)")
    chance = chance_level(main)
    for ax, (column, label, scale) in zip(axes, RESOURCE_AXES, strict=True):
        for agent in agents:
            rows = main[main["profile"] == agent]
            if column not in rows.columns:
                continue
            both = pd.DataFrame({"x": pd.to_numeric(rows[column], errors="coerce") * scale,
                                 "y": pd.to_numeric(rows["accuracy"], errors="coerce")}).dropna()
            if both.empty:
                continue
            ax.errorbar(both["x"].mean(), both["y"].mean(), xerr=both["x"].std(ddof=0), yerr=both["y"].std(ddof=0),
                        fmt="o", capsize=3, label=agent)
        if chance is not None:
            ax.axhline(chance, linestyle="--", color="grey", label=f"random chance ({chance:.3f})")
        ax.set_xlabel(label)
        ax.set_ylabel("Episode accuracy")
        ax.set_title(f"Accuracy vs {label.split(' (')[0].lower()}")
        ax.set_ylim(0, 1.05)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        axes[-1].legend(handles, labels, fontsize=8, loc="lower right")
    return fig


def cost_figures(frame: pd.DataFrame, agents: list[str]) -> dict[str, Figure]:
    """Appendix D.2: per simulator, accuracy against cost in each main condition (key ``accuracy-cost-<sim>``)."""
    figures: dict[str, Figure] = {}
    main = frame[frame["setting"] == "main"]
    if "cost_usd" not in main.columns:
        return figures
    for sim, rows in sorted(main.groupby("simulator"), key=lambda kv: kv[0]):
        conditions = [(n, s) for n in NOISES for s in SUBMISSIONS
                      if not rows[(rows["noise"] == n) & (rows["submission"] == s)].empty]
        if not conditions:
            continue
        fig = new_figure(figsize=(4 * len(conditions), 3.6))
        axes = fig.subplots(1, len(conditions), squeeze=False)[0]
        fig.suptitle(f"{sim}: episode accuracy against evaluation cost (error bars: SD across seeds)")
        chance = chance_level(rows)
        for ax, (noise, submission) in zip(axes, conditions, strict=True):
            cell = rows[(rows["noise"] == noise) & (rows["submission"] == submission)]
            for agent in agents:
                sub = cell[cell["profile"] == agent]
                both = pd.DataFrame({"x": pd.to_numeric(sub["cost_usd"], errors="coerce"),
                                     "y": pd.to_numeric(sub["accuracy"], errors="coerce")}).dropna()
                if both.empty:
                    continue
                sd = (lambda s: s.std(ddof=1) if len(s) > 1 else 0.0)
                ax.errorbar(both["x"].mean(), both["y"].mean(), xerr=sd(both["x"]), yerr=sd(both["y"]),
                            fmt="o", capsize=3, label=agent)
            if chance is not None:
                ax.axhline(chance, linestyle="--", color="grey", label=f"random chance ({chance:.3f})")
            ax.set_title(f"{noise} noise, {submission}")
            ax.set_xlabel("Cost (USD)")
            ax.set_ylabel("Episode accuracy")
            ax.set_ylim(0, 1.05)
        handles, labels = axes[0].get_legend_handles_labels()
        if handles:
            axes[-1].legend(handles, labels, fontsize=8)
        figures[f"accuracy-cost-{sim}"] = fig
    return figures

"""The answer key of a TraceBench episode as the report reads it: class counts and random-chance accuracy."""

from __future__ import annotations

import pandas as pd

from harness import read_score
from harness.reporting import episode_dir, read_json


def class_count(row) -> int | None:
    """Number of classes of an episode: ``n_classes`` if the row has it, else ``key/key.json`` labels,
    else the distinct true labels of ``score.json``."""
    value = row.get("n_classes") if hasattr(row, "get") else None
    if value is not None and not pd.isna(value):
        return int(value)
    folder = episode_dir(row)
    key = read_json(folder / "key" / "key.json")
    if key and isinstance(key.get("labels"), list) and key["labels"]:
        return len(key["labels"])
    score = read_score(folder)
    if score and isinstance(score.get("details"), list):
        labels = {d.get("true_label") for d in score["details"] if isinstance(d, dict) and d.get("true_label")}
        if labels:
            return len(labels)
    return None


def chance_level(frame: pd.DataFrame) -> float | None:
    """Random-chance top-1 accuracy: the mean over simulators of 1 / number of classes
    (TraceBench: 0.200 / 0.167 / 0.200, aggregate 0.189)."""
    if frame.empty or "simulator" not in frame.columns:
        return None
    per_sim = {}
    for sim, rows in frame.groupby("simulator"):
        counts = [c for c in (class_count(r) for _, r in rows.iterrows()) if c]
        if counts:
            per_sim[sim] = float(sum(1.0 / c for c in counts) / len(counts))
    return sum(per_sim.values()) / len(per_sim) if per_sim else None

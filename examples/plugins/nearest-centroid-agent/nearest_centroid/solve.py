"""The nearest-centroid agent's program, run in the episode's workspace: ``python solve.py``.

Reads ``train_labels.json`` (file name -> label), ``train_samples/`` and ``test_samples/`` (one Parquet file
per sample: the channels, then time) and writes ``results.json`` (test file name -> ``[label]``).  It
imports neither the harness nor the plugin: only what the sandbox's Python has.
"""

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def features(path: Path) -> np.ndarray:
    """The sample's channels (time, the last column, left out), each z-normalised, flattened."""
    x = pd.read_parquet(path).to_numpy(dtype=float)[:, :-1]
    spread = x.std(axis=0)
    return ((x - x.mean(axis=0)) / np.where(spread > 0, spread, 1.0)).ravel()


def centroids(folder: Path, labels: dict[str, str]) -> dict[str, np.ndarray]:
    """Label -> the mean of the features of its labeled examples."""
    by_label: dict[str, list[np.ndarray]] = {}
    for name, label in sorted(labels.items()):
        by_label.setdefault(label, []).append(features(folder / name))
    return {label: np.mean(rows, axis=0) for label, rows in by_label.items()}


def nearest(x: np.ndarray, centres: dict[str, np.ndarray]) -> str:
    """The label of the centroid nearest to ``x`` (Euclidean; a tie goes to the first label by name)."""
    return min(sorted(centres), key=lambda label: float(np.linalg.norm(x - centres[label])))


def solve(workspace: Path) -> dict[str, list[str]]:
    labels = json.loads((workspace / "train_labels.json").read_text())
    centres = centroids(workspace / "train_samples", labels)
    tests = sorted((workspace / "test_samples").glob("*.parquet"))
    results = {path.name: [nearest(features(path), centres)] for path in tests}
    (workspace / "results.json").write_text(json.dumps(results, indent=1))
    return results


if __name__ == "__main__":
    answers = solve(Path.cwd())
    print(f"nearest-centroid: labeled {len(answers)} test samples", file=sys.stderr)

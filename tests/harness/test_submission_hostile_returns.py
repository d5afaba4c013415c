"""predict() that returns or raises hostile objects: every sample gets a value or a reason, the run goes on.

The cases random generation rarely reaches: a generator, objects whose
``__eq__`` or ``__str__`` raise (returned, or raised as the exception),
``sys.exit``, ``os._exit``, 100 MB printed; plus the accepted shapes of the
leniency table (tuple, numpy array, pandas Series).
"""

from __future__ import annotations

import pandas as pd
import pytest
from tests.support.sandbox import ISOLATING, get_backend

from harness.submission import make_runner
from tsagent_plugins.tasks.tracebench import scoring

RULE = '''
import os, sys
import numpy as np
import pandas as pd

class BadEq:
    def __eq__(self, other):
        raise RuntimeError("eq")
    __hash__ = object.__hash__

class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("str")

def predict(df):
    mode = df["mode"].iloc[0]
    if mode == "generator":
        return (x for x in ["mass"])
    if mode == "bad_eq":
        return [BadEq()]
    if mode == "bad_str_exception":
        raise BadStr()
    if mode == "sys_exit":
        sys.exit(3)
    if mode == "os_exit":
        os._exit(4)
    if mode == "print_100mb":
        chunk = "x" * (1 << 20)
        for _ in range(100):
            print(chunk)
        return ["mass"]
    if mode == "tuple":
        return ("mass",)
    if mode == "numpy":
        return np.array(["mass"])
    if mode == "series":
        return pd.Series(["mass"])
    return ["mass"]
'''
MODES = ["generator", "bad_eq", "bad_str_exception", "sys_exit", "os_exit", "print_100mb", "tuple", "numpy",
         "series", "ok"]
EXPECTED = {  # mode -> reason fragment, or None for an accepted prediction
    "generator": "not JSON-serialisable", "bad_eq": "not JSON-serialisable",
    "bad_str_exception": "BadStr: <the exception's str() failed>", "sys_exit": "SystemExit: 3",
    "os_exit": "worker exited with status 4", "print_100mb": None, "tuple": None, "numpy": None,
    "series": None, "ok": None,
}


@pytest.mark.parametrize("name", ISOLATING)
def test_hostile_predict_results_are_scored_never_raised(tmp_path, name):
    backend = get_backend(name)
    (tmp_path / "rule.py").write_text(RULE)
    files = []
    for i, mode in enumerate(MODES):
        f = tmp_path / f"{i:012x}.parquet"
        pd.DataFrame({"mode": [mode], "x": [1.0]}).to_parquet(f)
        files.append(f)
    results = make_runner(backend, call_timeout=30, memory_mb=1024, budget=120)(tmp_path / "rule.py", "predict",
                                                                                files)
    truths = {f.name: {"sample_id": f"t{i}", "label": "mass", "class_label": "mass"} for i, f in enumerate(files)}
    samples = scoring._score_calls("test", [f.name for f in files], truths, results, None, ["mass", "drag"])
    for mode, sample in zip(MODES, samples):
        want = EXPECTED[mode]
        if want is None:
            assert sample.reason is None and sample.correct, (mode, sample)
        else:
            assert sample.reason is not None and want in sample.reason, (mode, sample.reason)

"""Rule worker replies answer their own request: numbered requests and replies, a forking rule scored only
on its own answers; a worker the kernel killed for the memory cap is reported as such."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pandas as pd
import pytest
from tests.support.sandbox import get_backend

from harness.contracts.sandbox import Limits
from harness.contracts.task import CallResult
from harness.sandbox import cgroups
from harness.submission import make_runner

FORKING = textwrap.dedent('''
    import os, time

    def predict(df):
        i = int(df["x"].iloc[0])
        if os.fork() == 0:
            return ["child", os.getpid()]      # a child back from predict: must never be an answer
        time.sleep(0.2)
        return ["parent", i]
''')


def _samples(folder: Path, n: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        path = folder / f"sample_{i}.parquet"
        pd.DataFrame({"x": [float(i)] * 3}).to_parquet(path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("name", ["bubblewrap", "unshare"])
def test_a_forking_rule_scores_only_on_its_own_answers(tmp_path, name):
    rule = tmp_path / "rule.py"
    rule.write_text(FORKING)
    inputs = _samples(tmp_path / "s", 30)
    results = make_runner(get_backend(name), Limits(pids=256), call_timeout=10, memory_mb=1024)(
        rule, "predict", inputs)
    assert results == [CallResult(value=["parent", i]) for i in range(30)]


def test_a_forking_import_does_not_answer(tmp_path):
    rule = tmp_path / "rule.py"
    rule.write_text("import os\nos.fork()\ndef predict(df):\n    return [os.getpid() > 0, int(df['x'].iloc[0])]\n")
    inputs = _samples(tmp_path / "s", 5)
    results = make_runner(get_backend("bubblewrap"), Limits(pids=64), call_timeout=10, memory_mb=1024)(
        rule, "predict", inputs)
    assert results == [CallResult(value=[True, i]) for i in range(5)]


MEMORY_HOG = textwrap.dedent('''
    import subprocess, sys, time

    def predict(df):
        if df["x"].iloc[0] == 0:
            return ["ok"]
        # two helper processes holding 300 MiB each (under their own address-space cap, not the group's) ...
        for _ in range(2):
            subprocess.Popen([sys.executable, "-c", "b = bytearray(300 << 20); b[::4096] = bytes(len(b) // 4096); "
                              "import time; time.sleep(600)"])
        time.sleep(3)
        blocks = []
        while True:  # ... and the worker grows past what the group has left: the largest, the kernel kills it
            block = bytearray(16 << 20)
            block[::4096] = bytes(len(block) // 4096)
            blocks.append(block)
''')


def test_a_rule_killed_by_the_memory_cap_says_so(tmp_path):
    if cgroups.support()[0] is None:
        pytest.skip("no control groups here: the memory cap is RLIMIT_AS only (MemoryError inside predict)")
    rule = tmp_path / "rule.py"
    rule.write_text(MEMORY_HOG)
    inputs = _samples(tmp_path / "s", 3)[::-1][1:] + _samples(tmp_path / "t", 1)  # x = 1, then x = 0
    results = make_runner(get_backend("bubblewrap"), Limits(pids=64), call_timeout=30, memory_mb=1024)(
        rule, "predict", inputs)
    assert results[0].error is not None and results[0].error.startswith(
        "worker killed: the rule's memory cap was hit"), results
    assert results[1] == CallResult(value=["ok"])

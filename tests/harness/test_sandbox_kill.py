"""A timed-out rule worker leaves nothing running, even though it runs under another uid."""

import subprocess
import time

import pandas as pd
import pytest

from harness.sandbox import choose_backend
from harness.submission import make_runner


def workers() -> set[str]:
    out = subprocess.run(["pgrep", "-f", "harness.sandbox.rule_worker"], capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("backend_name", ["bubblewrap", "unshare"])
def test_timed_out_worker_is_killed_with_its_sandbox(tmp_path, backend_name):
    (tmp_path / "rule.py").write_text("def predict(df):\n    while True:\n        pass\n")
    pd.DataFrame({"col1": [1.0], "col2": [0.0]}).to_parquet(tmp_path / "s.parquet")
    before = workers()
    runner = make_runner(choose_backend(backend_name), call_timeout=1.5, memory_mb=1024)
    (result,) = runner(tmp_path / "rule.py", "predict", [tmp_path / "s.parquet"])
    assert result.error == "timeout after 1.5s"
    time.sleep(0.5)
    assert workers() - before == set(), "a busy-looping rule worker outlived its timeout"

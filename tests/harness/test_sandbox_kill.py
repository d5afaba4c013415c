"""A timed-out rule worker leaves nothing running, even though it runs under another uid."""

import subprocess
import time
import uuid

import pandas as pd
import pytest

from harness.sandbox import choose_backend
from harness.submission import make_runner


def workers(function: str) -> set[str]:
    """Pids of the rule workers calling ``function`` (a name of this test's own: others' workers do not count)."""
    out = subprocess.run(["pgrep", "-f", f"harness.sandbox.rule_worker .*--function {function}( |$)"],
                         capture_output=True, text=True).stdout
    return set(out.split())


@pytest.mark.parametrize("backend_name", ["bubblewrap", "unshare"])
def test_timed_out_worker_is_killed_with_its_sandbox(tmp_path, backend_name):
    function = f"predict_{uuid.uuid4().hex[:12]}"
    (tmp_path / "rule.py").write_text(f"def {function}(df):\n    while True:\n        pass\n")
    pd.DataFrame({"col1": [1.0], "col2": [0.0]}).to_parquet(tmp_path / "s.parquet")
    runner = make_runner(choose_backend(backend_name), call_timeout=1.5, memory_mb=1024)
    (result,) = runner(tmp_path / "rule.py", function, [tmp_path / "s.parquet"])
    assert result.error == "timeout after 1.5s"
    deadline = time.monotonic() + 5  # the kill is signalled; give a loaded machine a moment to reap
    while workers(function) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert workers(function) == set(), "a busy-looping rule worker outlived its timeout"

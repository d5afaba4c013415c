"""Resuming ``harness run`` into the same ``--out``: a failed episode (its forecaster raised) is a result and is
kept, the resume line counting it and naming ``--retry-failed``; with ``--retry-failed`` it runs again (here
after the plugin was fixed) and the episodes that were ok are kept; kept rows made by other code are kept
too, with one warning line naming what differs."""

from __future__ import annotations

import sys

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import cli
from harness.cli.run import resume_lines
from harness.errors import HarnessError
from harness.store import read_row, write_json
from tests.support.paths import REPO

SPEC = REPO / "tasks" / "drcik" / "sample-statistical.yaml"
#: the variable naming the file that breaks the throwaway forecaster: while the file exists, it raises on every
#: episode (a file, not the variable itself: forecasts may run in a worker process started before a change)
BROKEN = "HARNESS_TEST_FLAKY_BROKEN"
#: ``naive``, broken while the file $BROKEN exists: it raises ForecastError
FLAKY = f"""
    import os

    from harness import ForecastError, hookimpl
    from tsagent_plugins.forecasters.statistical import NaiveForecaster

    class FlakyNaive(NaiveForecaster):
        name = "flaky-naive"

        def forecast(self, request):
            if os.path.exists(os.environ["{BROKEN}"]):
                raise ForecastError("broken on purpose")
            return super().forecast(request)

    @hookimpl
    def register_forecasters(register):
        register(FlakyNaive())
"""


@pytest.fixture
def flaky(make_distribution, fresh_plugins, tmp_path, monkeypatch):
    """``run(out, *options)``: ``harness run`` of an experiment of 3 sample tasks × (naive, the flaky forecaster),
    without context, each time with a fresh plugin set (as a new process has: the template keeps the forecasts
    of forecasters that ignore the context); the file breaking the forecaster is ``tmp_path / "broken"``.
    Returns the result and its output without the console's line breaks."""
    monkeypatch.setenv(BROKEN, str(tmp_path / "broken"))
    make_distribution("flaky-naive", {"flaky-naive": "flaky_naive"}, {"flaky_naive": FLAKY})
    spec = tmp_path / "flaky.yaml"
    spec.write_text(yaml.safe_dump({"name": "flaky", "tasks": [str(SPEC)], "forecasters": ["naive", "flaky-naive"],
                                    "set": {"contexts": ["no-context"]}}))

    def run(out, *more, fresh=True):
        if fresh:
            fresh_plugins()
        result = CliRunner().invoke(cli, ["run", "--experiment", str(spec), "--out", str(out), *more])
        return result, " ".join(result.output.split())

    yield run
    sys.modules.pop("flaky_naive", None)


def invalid_export(result) -> bool:
    """Whether the run ended with its one invalid export (the flaky forecaster's submission)."""
    return isinstance(result.exception, HarnessError) and str(result.exception).startswith("1 invalid export(s)")


def rows(out) -> dict[str, tuple[str, int]]:
    """episode folder -> (status, modification time of its row.json)."""
    return {p.parent.name: (read_row(p)["status"], p.stat().st_mtime_ns) for p in out.glob("episodes/*/row.json")}


def test_failed_episodes_are_kept_unless_retry_failed_runs_them_again(flaky, tmp_path):
    out = tmp_path / "run"
    (tmp_path / "broken").touch()
    result, _ = flaky(out)
    assert invalid_export(result), result.output  # the failed episodes leave a submission incomplete
    first = rows(out)
    assert sorted(s for s, _ in first.values()) == ["failed"] * 3 + ["ok"] * 3
    assert all(key.startswith("flaky-naive_") == (status == "failed") for key, (status, _) in first.items())

    (tmp_path / "broken").unlink()  # the plugin is fixed; the failures are results all the same
    result, text = flaky(out)
    assert invalid_export(result), text[-2000:]
    assert f"resuming {out}: 6 finished episode(s) are kept (3 failed: pass --retry-failed to run them again)" in text
    assert rows(out) == first  # nothing ran again

    result, text = flaky(out, "--retry-failed")
    assert result.exit_code == 0, text
    assert f"resuming {out}: 3 finished episode(s) are kept; 3 failed episode(s) run again (--retry-failed)" in text
    after = rows(out)
    assert {key: after[key] for key in first if first[key][0] == "ok"} == {
        key: value for key, value in first.items() if value[0] == "ok"}  # the ok episodes were not run again
    assert {status for status, _ in after.values()} == {"ok"} and set(after) == set(first)
    frame = pd.read_parquet(out / "results.parquet")
    assert len(frame) == 6 and (frame["status"] == "ok").all() and frame["episode_id"].is_unique

    result, text = flaky(out, "--retry-failed")  # nothing failed: nothing runs again, no hint
    assert result.exit_code == 0 and f"resuming {out}: 6 finished episode(s) are kept" in text
    assert "failed episode(s) run again" not in text and "pass --retry-failed" not in text and rows(out) == after


def test_a_retry_in_the_same_process_forecasts_again(flaky, tmp_path):
    """The template keeps a forecast of a forecaster that ignores the context for the other conditions, a
    failure for one run only: a retry in the same process (a notebook, a Dask worker) runs the fixed
    forecaster."""
    out = tmp_path / "run"
    (tmp_path / "broken").touch()
    result, _ = flaky(out)
    assert invalid_export(result), result.output
    (tmp_path / "broken").unlink()
    result, text = flaky(out, "--retry-failed", fresh=False)
    assert result.exit_code == 0, text[-2000:]
    assert {status for status, _ in rows(out).values()} == {"ok"}


def test_kept_rows_made_by_other_code_keep_their_numbers_with_one_warning(flaky, tmp_path, monkeypatch):
    import harness.provenance

    monkeypatch.setattr(harness.provenance, "harness_commit", lambda: "5d6e7f8" + "0" * 33)  # wherever it runs
    out = tmp_path / "run"
    result, _ = flaky(out)
    assert result.exit_code == 0, result.output[-2000:]
    paths = sorted(out.glob("episodes/*/row.json"))
    now = read_row(paths[0])
    assert now["harness_commit"] == "5d6e7f8" + "0" * 33 and now["scorer_version"] == "1"
    old_commit = "1a2b3c4" + "0" * 33
    for i, path in enumerate(paths[:4]):  # four rows as an older checkout and an older scorer would have made them
        row = read_row(path)
        row["harness_commit"] = old_commit
        row["scorer_version"] = "0" if i < 2 else row["scorer_version"]
        write_json(path, row)
    before = rows(out)

    result, text = flaky(out)
    assert result.exit_code == 0, text[-2000:]
    changes = "harness commit 1a2b3c4 → 5d6e7f8; scorer_version 0 → 1"
    assert (f"resuming {out}: 6 finished episode(s) are kept warning: 4 kept episode(s) were made by other code "
            f"({changes}): their numbers stay as they were; use a new --out, or harness rescore {out}") in text
    assert rows(out) == before  # nothing ran again
    assert read_row(paths[0])["harness_commit"] == old_commit


def test_the_resume_lines():
    assert resume_lines("runs/x", {"finished": 6, "failed": 0, "retried": 0, "stale": 0, "changes": []}) == [
        "resuming runs/x: 6 finished episode(s) are kept"]
    assert resume_lines("runs/x", {"finished": 6, "failed": 2, "retried": 0, "stale": 1,
                                   "changes": ["scorer_version 2 → 3"]}) == [
        "resuming runs/x: 6 finished episode(s) are kept (2 failed: pass --retry-failed to run them again)",
        "warning: 1 kept episode(s) were made by other code (scorer_version 2 → 3): their numbers stay as they "
        "were; use a new --out, or harness rescore runs/x"]

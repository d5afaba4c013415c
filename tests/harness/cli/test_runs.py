"""``harness runs list``: failed episodes are counted apart."""

from __future__ import annotations

import json

from harness.cli.runs import run_summary


def test_runs_list_counts_failed_episodes(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"episodes": [{"profile": "opendr-x"}] * 3,
                                                   "finished_at": "now"}))
    for i, status in enumerate(("ok", "failed", "failed")):
        folder = tmp_path / "episodes" / f"e{i}"
        folder.mkdir(parents=True)
        (folder / "row.json").write_text(json.dumps({"episode": f"e{i}", "status": status}))
    summary = run_summary(tmp_path)
    assert (summary["done"], summary["failed"], summary["total"]) == (3, 2, 3)

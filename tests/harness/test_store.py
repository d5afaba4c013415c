"""The public results reader (``harness.finished_episodes``, ``episode_rows``, ``read_row``, ``read_score``):
one reader per file the harness writes into an episode folder, one failure rule (an error naming the file)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import harness
from harness.store import RowError, RunStore, finished_episodes, keeps, kept_row, read_score, write_json
from tests.support.paths import REPO


def _run(tmp_path: Path) -> RunStore:
    store = RunStore.create(tmp_path / "run")
    for key, row in (("b-2", {"status": "ok", "n": 2}), ("a-1", {"status": "failed", "n": 1})):
        paths = store.episode(key).create()
        write_json(paths.row, row)
        write_json(paths.score, {"metrics": {"n": row["n"]}, "details": []})
    store.episode("c-running").create()  # no row yet: not finished
    return store


def test_the_readers_are_the_public_api():
    assert (harness.finished_episodes, harness.episode_rows, harness.read_row, harness.read_score,
            harness.RowError) == (finished_episodes, harness.store.episode_rows, harness.store.read_row,
                                  read_score, RowError)


def test_finished_episodes_pairs_each_folder_with_its_row_in_folder_order(tmp_path):
    store = _run(tmp_path)
    found = finished_episodes(store.root)
    assert [(folder.name, row["n"]) for folder, row in found] == [("a-1", 1), ("b-2", 2)]
    assert harness.episode_rows(store.root) == [row for _, row in found]
    assert read_score(found[1][0]) == {"metrics": {"n": 2}, "details": []}


def test_a_missing_score_is_none_and_a_bad_one_an_error_naming_the_file(tmp_path):
    store = _run(tmp_path)
    assert read_score(store.episode("c-running").root) is None
    bad = store.episode("a-1").score
    bad.write_text("{")
    with pytest.raises(RowError, match=re.escape(f"{bad}: not a valid score")):
        read_score(bad.parent)
    bad.write_text("[1]")
    with pytest.raises(RowError, match=re.escape(f"{bad}: not a valid score: expected a JSON object, got list")):
        read_score(bad.parent)


def test_a_resume_keeps_results_and_runs_harness_failures_again_and_failures_with_retry_failed(tmp_path):
    rows = {"ok": {"status": "ok"}, "failed": {"status": "failed", "error_kind": "agent_crashed"},
            "infra": {"status": "infra_failed", "error_kind": "provider_unavailable"},
            "disk": {"status": "failed", "error_kind": "disk_full"}}
    assert {name: keeps(row) for name, row in rows.items()} == {
        "ok": True, "failed": True, "infra": False, "disk": False}  # by default a finished failure is a result
    assert {name: keeps(row, retry_failed=True) for name, row in rows.items()} == {
        "ok": True, "failed": False, "infra": False, "disk": False}
    store = _run(tmp_path)  # a-1 failed, b-2 ok, c-running has no row
    assert kept_row(store.episode("a-1").row) == {"status": "failed", "n": 1}
    assert kept_row(store.episode("a-1").row, retry_failed=True) is None
    assert kept_row(store.episode("b-2").row, retry_failed=True) == {"status": "ok", "n": 2}
    assert kept_row(store.episode("c-running").row) is None


def test_a_bad_row_is_named_or_skipped(tmp_path):
    store = _run(tmp_path)
    store.episode("a-1").row.write_text("not json")
    with pytest.raises(RowError, match=r"a-1/row\.json: not a valid row"):
        finished_episodes(store.root)
    assert [folder.name for folder, _ in finished_episodes(store.root, skip_invalid=True)] == ["b-2"]


def test_no_plugin_reads_a_row_file_itself():
    """Plugins read results rows through the public reader only: no plugin module names the row file."""
    named = [f"{p.relative_to(REPO)}:{n}" for p in sorted((REPO / "plugins").rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if "row.json" in line]
    assert named == []

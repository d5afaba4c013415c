"""What a resume keeps (harness/resume.py): the planned episodes counted by the keep rule (finished, failed
among them, failed run again with ``retry_failed``) and the kept rows made by other code, without running
anything."""

from __future__ import annotations

from harness.config import RunSettings
from harness.experiment import Unit
from harness.provenance import code_columns
from harness.resume import resume_summary
from harness.run import load_task, plan_episodes
from harness.store import RunStore, write_json
from tests.support.paths import REPO


def test_the_summary_counts_kept_failed_and_rerun_episodes_and_names_other_code(tmp_path, monkeypatch):
    import harness.provenance

    monkeypatch.setattr(harness.provenance, "harness_commit", lambda: "5d6e7f8" + "0" * 33)  # wherever it runs
    task = load_task(REPO / "tasks" / "drcik" / "sample-statistical.yaml",
                     {"forecasters": ["naive"], "contexts": ["no-context", "supporting-evidence"]})
    store = RunStore.create(tmp_path / "run")
    plans = plan_episodes([Unit(task, None, None)], RunSettings(), store.run_id)
    assert len(plans) == 6
    now = code_columns(plans[0].template, [])
    rows = [{"status": "ok", **now}, {"status": "ok", **now, "scorer_version": "0"},
            {"status": "failed", **now}, {"status": "failed", **now, "harness_commit": "1a2b3c4" + "0" * 33},
            {"status": "infra_failed", **now, "scorer_version": "0"}]  # and the sixth episode has not run
    for plan, row in zip(plans, rows):
        write_json(store.episode(plan.key).create().row, row)
    assert now["scorer_version"] == "1"
    assert resume_summary(plans, store) == {"finished": 4, "failed": 2, "retried": 0, "stale": 2, "changes": [
        "scorer_version 0 → 1", "harness commit 1a2b3c4 → 5d6e7f8"]}
    assert resume_summary(plans, store, retry_failed=True) == {  # a failed row run again is not compared
        "finished": 2, "failed": 0, "retried": 2, "stale": 1, "changes": ["scorer_version 0 → 1"]}

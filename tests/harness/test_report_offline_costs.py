"""``harness report`` says which episodes' costs are no money spent (an offline model backend answered them)."""

from __future__ import annotations

import pandas as pd

from harness.report import build_report, offline_cost_notes
from harness.store import RunStore
from tests.support.report_runs import episode

NOTE = ("costs of 2 episode(s) are the profiles' prices for the tokens an offline model backend answered with; no "
        "money was spent (scripted; columns model_backend, model_billed)")


def test_the_note_counts_the_rows_an_offline_backend_answered():
    frame = pd.DataFrame({"model_backend": ["scripted", "anthropic", "scripted", None],
                          "model_billed": [False, True, False, None], "cost_usd": [0.1, 0.2, 0.3, None]})
    assert offline_cost_notes(frame) == [NOTE]
    assert offline_cost_notes(frame[frame["model_billed"].map(lambda v: v is not False)]) == []
    assert offline_cost_notes(frame[["cost_usd"]]) == []


def test_the_report_of_a_scripted_run_carries_the_note(tmp_path):
    store = RunStore.create(tmp_path / "scripted")
    for seed in (0, 1):
        episode(store, agent="opus", sim="balldrop", seed=seed, noise="low", submission="direct", accuracy=0.9,
                extra={"model_backend": "scripted", "model_billed": False, "n_requests": 4, "cost_usd": 0.75})
    store.write_results()
    assert NOTE in build_report([store.root], with_figures=False).messages

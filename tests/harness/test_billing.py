"""Which costs are money spent: the row's own record first, the run's --model-backend for older rows."""

from __future__ import annotations

import numpy as np

from harness.billing import backend_billed, cost_text, offline_backend, offline_mark


def test_the_row_record_decides():
    assert offline_backend({"model_backend": "scripted", "model_billed": False}) == "scripted"
    assert offline_backend({"model_backend": "scripted", "model_billed": np.bool_(False)}) == "scripted"
    assert offline_backend({"model_backend": "anthropic", "model_billed": True}, "scripted") is None
    assert offline_backend({"model_billed": False}) == "offline"


def test_an_older_row_falls_back_on_the_run_backend_when_it_called_a_model():
    assert offline_backend({"n_requests": 3}, "scripted") == "scripted"
    assert offline_backend({"n_requests": 0}, "scripted") is None  # no model called: no cost to mark
    assert offline_backend({"n_requests": float("nan")}, "scripted") is None
    assert offline_backend({"n_requests": 3}, "anthropic") is None
    assert offline_backend({"n_requests": 3}, None) is None
    assert offline_backend({"n_requests": 3}, "not-installed-here") is None  # unknown: not marked


def test_backend_billed_reads_the_registered_backend():
    assert backend_billed("scripted") is False and backend_billed("anthropic") is True
    assert backend_billed(None) is True and backend_billed("not-installed-here") is True


def test_cost_text():
    assert cost_text(0.4249, ["scripted"]) == "$0.42 (scripted)"
    assert cost_text(1.5, [], digits=4, dollar=False) == "1.5000"
    assert cost_text(float("nan"), ["scripted", None, "scripted"]) == "– (scripted)"
    assert offline_mark(["b", "a", None]) == " (a, b)" and offline_mark([]) == ""

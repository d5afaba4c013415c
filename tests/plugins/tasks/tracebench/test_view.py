"""The TraceBench view page: test samples as stacked-channel plots, answers, rule.py and held-out results."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from harness.store import RunStore, write_json
from harness.view.data import load_runs
from harness.view.site import Site
from tsagent_plugins.tasks.tracebench.view import MAX_POINTS

RULE = "def predict(df):\n    return ['mass'] if df['col1'].mean() > 0 else ['no parameter change']\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    store = RunStore.create(tmp_path_factory.mktemp("tb-view") / "tb")
    paths = store.episode("ep").create()
    samples = paths.workspace / "test_samples"
    samples.mkdir()
    t = np.arange(1, 4001) * 0.0025
    for name, scale in (("a.parquet", 1.0), ("b.parquet", -2.0)):
        pd.DataFrame({"col1": scale * np.sin(t), "col2": np.cos(t), "col3": t}).to_parquet(samples / name)
    (paths.workspace / "rule.py").write_text(RULE)
    details = [
        {"split": "test", "file": "a.parquet", "true_label": "mass", "predicted": ["mass", "drag coefficient"],
         "correct": True},
        {"split": "test", "file": "b.parquet", "true_label": "gravity acceleration",
         "predicted": ["no parameter change"], "correct": False},
        {"split": "heldout", "file": "h1.parquet", "true_label": "mass", "predicted": ["mass"], "correct": True},
        {"split": "heldout", "file": "h2.parquet", "true_label": "HELDOUT-ONLY-LABEL",
         "predicted": ["mass"], "correct": False},
    ]
    write_json(paths.score, {"metrics": {}, "details": details})
    write_json(paths.row, {"run_id": store.run_id, "episode": "ep", "template": "tracebench", "task": "t",
                           "profile": "p", "status": "ok", "submission": "programmatic", "accuracy": 0.5,
                           "heldout_accuracy": 0.5})
    store.write_results()
    return store.root


def render(run, reveal: bool) -> str:
    return Site(load_runs([run]), reveal=reveal).render("runs/tb/ep/index.html")[0].decode()


def test_samples_plotted_with_stacked_channels_and_answers(run):
    html = render(run, reveal=True)
    cards = re.findall(r'<div class="sample (right|wrong)" data-file="([^"]+)">', html)
    assert cards == [("right", "a.parquet"), ("wrong", "b.parquet")]
    assert "agent's answer: <b>mass › drag coefficient</b>" in html
    assert '<b class="true-label">gravity acceleration</b>' in html
    svg = re.search(r'<svg class="chart".*?</svg>', html).group()
    # col3 is strictly increasing: the x axis; col1 and col2 are stacked, thinned to MAX_POINTS points
    assert "(x: col3)" in svg and svg.count("<polyline") == 2
    drawn = [len(p.split()) for p in re.findall(r'points="([^"]*)"', svg)]
    assert drawn == [len(range(0, 4000, 7))] * 2 and drawn[0] <= MAX_POINTS  # stride ceil(4000 / 600) = 7


def test_a_linked_rule_py_is_not_read(run, tmp_path):
    rule = run / "episodes" / "ep" / "workspace" / "rule.py"
    secret = tmp_path / "host.py"
    secret.write_text("HOST-SECRET = 1\n")
    saved = rule.read_text()
    rule.unlink()
    rule.symlink_to(secret)
    try:
        html = render(run, reveal=True)
        assert "HOST-SECRET" not in html and "No rule.py was submitted." in html
    finally:
        rule.unlink()
        rule.write_text(saved)


def test_rule_and_heldout_results_revealed_only(run):
    shown, hidden = render(run, reveal=True), render(run, reveal=False)
    for html in (shown, hidden):
        assert "def predict(df):" in html and "held-out accuracy: <b>0.500</b> on 2 samples" in html
        assert "agent's answer: <b>no parameter change</b>" in html
    assert "HELDOUT-ONLY-LABEL" in shown and shown.count('class="grid heldout"') == 1
    for marker in ("HELDOUT-ONLY-LABEL", "true-label", "gravity acceleration", 'class="sample right"', "verdict"):
        assert marker not in hidden, marker


def test_channels_carry_the_names_the_prompt_gave_them_and_only_then():
    from tsagent_plugins.tasks.tracebench.view import _signal_names

    assert _signal_names({"context": True, "simulator": "balldrop"}) == {
        "col1": "ball height", "col2": "ball velocity", "col3": "contact impulse (N*s)", "col4": "time"}
    assert _signal_names({"context": False, "simulator": "balldrop"}) == {}  # the agent saw col1...: so does the page
    assert _signal_names({"context": True, "simulator": "not-installed"}) == {}
    assert _signal_names({"context": None}) == {}


def test_an_episode_without_context_keeps_the_column_names(run):
    html = render(run, reveal=True)
    assert 'fill="#1d2433">col1</text>' in html and "Channels as the prompt names them" not in html

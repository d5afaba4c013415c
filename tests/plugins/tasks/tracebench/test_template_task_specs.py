"""The 24 TraceBench task specs: every simulator x paper condition (Section 4.5), with its slug."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.config import load_task_spec, task_params
from tsagent_plugins.tasks.tracebench.template import PAPER_CONDITIONS, TracebenchParams
from tests.support.paths import REPO

SPECS = REPO / "tasks" / "tracebench"
SIMULATORS = ("balldrop", "bounceball", "massslide")
# file-name suffix -> slug (the paper's eight conditions: four main, two ablations x two modes)
NAMES = {"low-direct": "gentle-cloud", "high-direct": "gentle-pine", "low-programmatic": "gentle-flame",
         "high-programmatic": "gentle-orbit", "high-direct-noexamples": "frost-pine",
         "high-programmatic-noexamples": "frost-orbit", "high-direct-nocontext": "gentle-harbor",
         "high-programmatic-nocontext": "gentle-tide"}


def params(path: Path) -> TracebenchParams:
    spec = load_task_spec(path)
    assert spec.template == "tracebench"
    return task_params(spec, TracebenchParams, path)


def test_24_specs_one_per_simulator_and_condition():
    assert sorted(p.stem for p in SPECS.glob("*.yaml")) == sorted(f"{s}-{n}" for s in SIMULATORS for n in NAMES)


@pytest.mark.parametrize("sim", SIMULATORS)
def test_each_spec_carries_the_slug_of_its_condition(sim):
    for suffix, slug in NAMES.items():
        p = params(SPECS / f"{sim}-{suffix}.yaml")
        assert p.simulator == sim and p.slug == slug
        assert (p.noise, p.submission, p.context, p.examples_per_class > 0) == PAPER_CONDITIONS[slug]


@pytest.mark.parametrize("sim", SIMULATORS)
def test_the_conditions_of_a_simulator_share_pool_and_batches(sim):
    """Same pool and split arguments, so the same clean test (and support) samples: the test batch
    is drawn before, and independently of, the support batch."""
    ps = [params(SPECS / f"{sim}-{suffix}.yaml") for suffix in NAMES]
    shared = {(p.seed, p.pool_seed, p.n_test, p.heldout_per_class, p.pool_per_class) for p in ps}
    assert len(shared) == 1
    assert {p.examples_per_class for p in ps} == {0, 3}


def test_a_slug_must_match_the_condition():
    base = dict(simulator="balldrop", noise="low", submission="direct", context=True, examples_per_class=3)
    assert TracebenchParams(**base, slug="gentle-cloud").slug == "gentle-cloud"
    with pytest.raises(ValidationError, match="slug 'gentle-pine' is noise: high"):
        TracebenchParams(**base, slug="gentle-pine")
    with pytest.raises(ValidationError, match="not a paper condition"):
        TracebenchParams(**base, slug="gentle-breeze")
    assert TracebenchParams(**base).slug is None

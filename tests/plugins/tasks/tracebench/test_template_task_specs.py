"""The 24 TraceBench task specs: every simulator x paper condition (Section 4.5), its slug derived from
the settings; the bounds on the sizes that drive pool generation."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from harness import get_plugin
from harness.config import ConfigError, load_task_spec, task_params
from harness.experiment import episode_id
from harness.run import load_task
from tsagent_plugins.tasks.tracebench.template import (MAX_POOL_PER_CLASS, PAPER_CONDITIONS, TracebenchParams,
                                                       TracebenchTemplate)
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
def test_each_spec_gets_the_slug_of_its_condition_and_names_it_in_its_description(sim):
    for suffix, slug in NAMES.items():
        path = SPECS / f"{sim}-{suffix}.yaml"
        p = params(path)
        assert "slug" not in load_task_spec(path).params  # derived, not stated
        assert p.simulator == sim and p.slug == slug
        assert (p.noise, p.submission, p.context, p.examples_per_class > 0) == PAPER_CONDITIONS[slug]
        assert f"paper condition {slug}:" in load_task_spec(path).description


@pytest.mark.parametrize("sim", SIMULATORS)
def test_episode_ids_and_folders_are_those_of_the_specs_that_stated_their_slug(sim):
    """The specs used to state ``slug:``; a run directory made then resumes by episode id (and folder):
    the same spec with its slug stated gives the same id, and the folder label is still the spec's name."""
    for suffix, slug in NAMES.items():
        path = SPECS / f"{sim}-{suffix}.yaml"
        now, before = load_task(path), load_task(path, {"slug": slug})
        assert now.params == before.params
        ids = {episode_id(t.spec.name, t.template, t.params, "0", None) for t in (now, before)}
        assert len(ids) == 1
        assert now.template.episode_label(now.spec.name, now.params, "0") == f"{sim}-{suffix}-seed0"


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
    assert TracebenchParams(**base).slug == TracebenchParams(**base, slug=None).slug == "gentle-cloud"
    assert TracebenchParams(**base | {"noise": "high", "submission": "programmatic"}).slug == "gentle-orbit"
    # a combination the paper does not run has no slug
    assert TracebenchParams(**base | {"examples_per_class": 0}).slug is None


def test_an_override_of_a_setting_re_derives_the_slug():
    """The docs (Running): ``--set noise=high --set n_test=20`` on a shipped spec runs the high-noise condition."""
    task = load_task(SPECS / "balldrop-low-direct.yaml", {"noise": "high", "n_test": 20})
    assert (task.params.noise, task.params.slug, task.params.n_test) == ("high", "gentle-pine", 20)
    assert task.template.episode_label(task.spec.name, task.params, "0") == "balldrop-high-direct-n20-seed0"
    nocontext = load_task(SPECS / "bounceball-high-programmatic-nocontext.yaml", {"context": True})
    assert nocontext.params.slug == "gentle-orbit"


def test_a_stated_slug_is_a_check_of_the_params_after_overrides(tmp_path):
    spec = tmp_path / "mine.yaml"
    spec.write_text((SPECS / "balldrop-low-direct.yaml").read_text().replace("  noise: low", "  slug: gentle-cloud\n  noise: low"))
    assert load_task(spec).params.slug == "gentle-cloud"
    with pytest.raises(ConfigError) as err:
        load_task(spec, {"noise": "high"})
    assert str(err.value).startswith(f"{spec}: params: slug 'gentle-cloud' is noise: low")
    assert "leave 'slug' out of the spec (or --set slug=null)" in str(err.value)
    assert load_task(spec, {"noise": "high", "slug": None}).params.slug == "gentle-pine"


@pytest.mark.parametrize("field", ["pool_per_class", "heldout_per_class", "examples_per_class"])
def test_sizes_that_drive_pool_generation_are_bounded(field):
    path = SPECS / "balldrop-low-direct.yaml"
    with pytest.raises(ConfigError) as err:
        load_task(path, {field: MAX_POOL_PER_CLASS + 1})
    assert str(err.value).startswith(f"{path}: params.{field}: Input should be less than or equal to 640")


def test_an_oversized_n_test_is_refused_at_load_naming_file_and_fields():
    """``--set n_test=100000`` asked for a pool of 20145 samples per class (about 38 GB for BallDrop)."""
    path = SPECS / "balldrop-low-direct.yaml"
    with pytest.raises(ConfigError) as err:
        load_task(path, {"n_test": 100000})
    message = str(err.value)
    assert message.startswith(f"{path}: params: n_test: 100000, examples_per_class: 3 and heldout_per_class: 142 "
                              "need a pool of 20145 samples per class")
    assert "at most 640 per class" in message and '(after the overrides {"n_test":100000})' in message


@pytest.mark.parametrize("sim", SIMULATORS)
def test_the_pool_bound_is_exact_and_four_times_the_default(sim):
    """heldout + examples + ceil(n_test / classes) <= 640; the paper's sizes fit with room to spare."""
    assert MAX_POOL_PER_CLASS == 4 * 160
    classes = len(get_plugin("simulator", sim).labels)
    largest = (MAX_POOL_PER_CLASS - 142 - 3) * classes
    base = dict(simulator=sim, noise="high", submission="programmatic")
    p = TracebenchParams(**base, n_test=largest)
    assert TracebenchTemplate().pool_per_class(p, classes) == MAX_POOL_PER_CLASS
    with pytest.raises(ValidationError, match=f"need a pool of {MAX_POOL_PER_CLASS + 1} samples per class"):
        TracebenchParams(**base, n_test=largest + 1)
    paper = TracebenchParams(**base)
    assert (paper.n_test, paper.examples_per_class, paper.heldout_per_class) == (10, 3, 142)
    assert TracebenchTemplate().pool_per_class(paper, classes) == 160

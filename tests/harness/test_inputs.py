"""Episode inputs kept by reference (harness/inputs.py): an episode's unchanged generated inputs leave its folder
at its end and come back, checked, when read; an edited or deleted input is kept as the agent left it; a rebuilt
input that differs from its record fails naming the run, the episode and the source; a template without
references is left alone; an old folder is converted only where a fresh rebuild reproduces it."""

from __future__ import annotations

import json
import sys

import pytest
import zstandard
from pydantic import BaseModel, ConfigDict

from harness import inputs
from harness.config import AgentProfile, RunSettings
from harness.contracts import AgentTaskTemplate, EpisodeScore, Materialized
from tests.support.sandbox import IdleAgent
from harness.episode import EpisodePlan, run_episode
from harness.errors import HarnessError
from harness.rescore import rescore
from harness.sandbox.none import NoneBackend
from harness.store import RunStore, read_row
from tests.support.toy_inputs import TOY

@pytest.fixture
def toy(make_distribution, fresh_plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    make_distribution("toy-inputs", {"toy": "toy_inputs"}, {"toy_inputs": TOY})
    fresh_plugins()
    module = sys.modules["toy_inputs"]
    module.REBUILT.clear()
    return module


def stored_record(root):
    """``inputs.json.zst`` as stored (zstd-compressed JSON, the common reference entries under ``shared``)."""
    return json.loads(zstandard.ZstdDecompressor().decompress((root / inputs.INPUTS_FILE).read_bytes()))


def run_one(tmp_path, toy, keep: bool = False):
    """One episode of the toy template run by :class:`Edits`, with a ``run.json`` listing it as a run does."""
    from harness import get_plugin

    template = get_plugin("task_template", "toy-inputs")
    params = template.params_model(seed=3)
    store = RunStore.create(tmp_path / "run")
    settings = RunSettings(sandbox="none", keep_inputs=keep)
    plan = EpisodePlan("ep-0", "toy", template, params, "0", AgentProfile(name="editor", agent="editor"),
                       get_plugin("agent", "editor"), NoneBackend(), settings, store.run_id)
    store.write_run_json({"run_id": store.run_id, "settings": settings.model_dump(mode="json"), "episodes": [
        {"key": "ep-0", "task": "toy", "template": "toy-inputs", "params": {"seed": 3}, "episode": "0"}]})
    row = run_episode(plan, store.episode("ep-0"), lambda: None)
    return store.episode("ep-0").root, template, params, row


def test_unchanged_inputs_leave_the_folder_edited_and_deleted_ones_are_recorded(tmp_path, toy):
    root, template, params, row = run_one(tmp_path, toy)
    assert row["status"] == "ok" and row["hidden_lines"] == 50 and row["seen_lines"] == 50
    assert not (root / "workspace" / "data" / "a.txt").exists()  # unchanged: by reference
    assert not (root / "key" / "hidden").exists()  # the folder it left empty is gone
    assert (root / "key").is_dir() and (root / "workspace" / "answer.txt").is_file()
    assert (root / "workspace" / "data" / "b.txt").read_text() == "mine\n"  # the agent's edit stays
    record = inputs.read(root)
    states = {rel: entry["state"] for rel, entry in record["files"].items()}
    assert states == {"workspace/data/a.txt": "by_reference", "workspace/data/b.txt": "edited",
                      "workspace/data/c.txt": "deleted", "key/hidden/k.txt": "by_reference"}
    stored = stored_record(root)
    assert stored["shared"] == {"source": "toy generator seed 3"}  # stored once, read into every reference
    assert "sha256" not in stored["files"]["workspace/data/a.txt"]  # a rebuilt copy is checked by its values
    assert len(stored["files"]["workspace/data/b.txt"]["sha256"]) == 64
    assert record["files"]["key/hidden/k.txt"]["reference"] == {"name": "k", "source": "toy generator seed 3"}
    assert not list(root.glob(f".{inputs.INPUTS_FILE}*"))  # written through a temporary file, then renamed


def test_resolve_rebuilds_once_into_the_cache_and_checks_the_values(tmp_path, toy):
    root, template, params, _ = run_one(tmp_path, toy)
    first = inputs.resolve(root, "workspace/data/a.txt")  # template and params read from run.json
    assert first.read_text() == "a-3\n" * 50 and first.parent == tmp_path / "cache" / "inputs"
    assert first.name == inputs.read(root)["files"]["workspace/data/a.txt"]["values"] + ".txt"
    assert inputs.resolve(root, "workspace/data/a.txt", template, params, "0") == first
    assert toy.REBUILT == ["a"]  # the second read used the cache
    assert inputs.resolve(root, "workspace/data/b.txt") == root / "workspace" / "data" / "b.txt"  # as edited
    assert inputs.resolve(root, "workspace/data/c.txt") is None  # deleted by the agent
    assert inputs.resolve(root, "workspace/answer.txt") == root / "workspace" / "answer.txt"  # not an input
    assert inputs.resolve(root, "workspace/nothing.txt") is None
    assert inputs.listing(root, "workspace/data") == ["a.txt", "b.txt"]
    assert inputs.listing(root, "key/hidden") == ["k.txt"]
    first.write_text("damaged")  # a damaged cache file is rebuilt, not believed
    assert inputs.resolve(root, "workspace/data/a.txt").read_text() == "a-3\n" * 50


def test_a_rebuild_that_differs_from_the_record_names_run_episode_and_source(tmp_path, toy, monkeypatch):
    root, *_ = run_one(tmp_path, toy)
    monkeypatch.setattr(toy, "SALT", "!")  # the generator changed since the run
    with pytest.raises(inputs.InputMismatch) as err:
        inputs.resolve(root, "key/hidden/k.txt")
    text = str(err.value)
    assert str(tmp_path / "run") in text and "episode ep-0" in text and "key/hidden/k.txt" in text
    assert "toy generator seed 3" in text
    recorded = inputs.read(root)["files"]["key/hidden/k.txt"]["values"]
    assert f"recorded {recorded}" in text
    assert not list((tmp_path / "cache" / "inputs").glob("*.txt"))  # nothing wrong was cached


def test_a_tampered_record_fails_the_same_way(tmp_path, toy):
    root, *_ = run_one(tmp_path, toy)
    data = stored_record(root)
    data["files"]["workspace/data/a.txt"]["values"] = "0" * 64
    (root / inputs.INPUTS_FILE).write_bytes(zstandard.ZstdCompressor().compress(json.dumps(data).encode()))
    with pytest.raises(inputs.InputMismatch, match="recorded 0{64}"):
        inputs.resolve(root, "workspace/data/a.txt")


def test_keep_inputs_keeps_every_file_and_records_the_states(tmp_path, toy):
    root, *_ = run_one(tmp_path, toy, keep=True)
    assert (root / "workspace" / "data" / "a.txt").is_file() and (root / "key" / "hidden" / "k.txt").is_file()
    states = {rel: e["state"] for rel, e in inputs.read(root)["files"].items()}
    assert states["workspace/data/a.txt"] == "present" and states["workspace/data/b.txt"] == "edited"


def test_rescore_puts_the_inputs_back_for_the_scorer_and_takes_them_away_again(tmp_path, toy):
    root, *_ = run_one(tmp_path, toy)
    (root / "score.json").write_text(json.dumps({"metrics": {}, "details": [], "warnings": []}))
    outcome = rescore(root.parent.parent, sandbox="none")
    assert outcome.rescored == ["ep-0"] and outcome.skipped == []
    row = read_row(root / "row.json")
    assert row["hidden_lines"] == 50 and row["seen_lines"] == 50 and row["rescored_at"]
    metrics = json.loads((root / "score.json").read_text())["metrics"]
    assert metrics == {"hidden_lines": 50, "seen_lines": 50}  # the scorer read both inputs, rebuilt
    assert not (root / "key" / "hidden").exists() and not (root / "workspace" / "data" / "a.txt").exists()
    assert inputs.read(root)["files"]["key/hidden/k.txt"]["state"] == "by_reference"


def test_rescore_skips_an_episode_whose_input_no_longer_rebuilds(tmp_path, toy, monkeypatch):
    root, *_ = run_one(tmp_path, toy)
    monkeypatch.setattr(toy, "SALT", "!")
    outcome = rescore(root.parent.parent, sandbox="none")
    assert outcome.rescored == [] and len(outcome.skipped) == 1
    assert "toy generator seed 3" in outcome.skipped[0][1] and str(root.parent.parent) in outcome.skipped[0][1]


class Plain(AgentTaskTemplate):
    """A stranger's template: no references."""

    name = "plain"

    class params_model(BaseModel):  # noqa: N801
        model_config = ConfigDict(extra="forbid")

    def materialize(self, params, episode, workspace, key_dir):
        (workspace / "data.txt").write_text("x")
        return Materialized(prompt="p")

    def score(self, params, episode, workspace, key_dir, run_submission):
        return EpisodeScore({})



def test_a_template_without_references_is_left_alone(tmp_path):
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "t", Plain(), Plain.params_model(), "0", AgentProfile(name="idle", agent="idle"),
                       IdleAgent(), NoneBackend(), RunSettings(sandbox="none"), store.run_id)
    run_episode(plan, store.episode("ep-0"), lambda: None)
    root = store.episode("ep-0").root
    assert (root / "workspace" / "data.txt").read_text() == "x"
    assert not (root / inputs.INPUTS_FILE).exists() and inputs.release(root) == {}
    assert inputs.listing(root, "workspace") == ["data.txt"]


def test_an_old_folder_is_converted_only_where_a_fresh_rebuild_matches(tmp_path, toy, monkeypatch):
    from harness import get_plugin

    template = get_plugin("task_template", "toy-inputs")
    params = template.params_model(seed=3)
    root = tmp_path / "run" / "episodes" / "ep-0"
    (root / "workspace").mkdir(parents=True)
    template.materialize(params, "0", root / "workspace", root / "key")  # as an old run left it
    (root / "workspace" / "data" / "b.txt").write_text("the agent's\n")
    (root / "workspace" / "data" / "c.txt").unlink()
    counts = inputs.release_existing(root, template, params, "0")
    assert counts == {"by_reference": 2, "edited": 1, "deleted": 1}
    assert not (root / "workspace" / "data" / "a.txt").exists()
    assert (root / "workspace" / "data" / "b.txt").read_text() == "the agent's\n"
    assert inputs.resolve(root, "workspace/data/a.txt", template, params, "0").read_text() == "a-3\n" * 50


def test_an_old_folders_input_replaced_by_another_inputs_bytes_is_kept(tmp_path, toy):
    """The inputs cache holds a file of a.txt's values (another episode's, rebuilt): an old folder whose b.txt the
    agent overwrote with a.txt's bytes has b.txt's values in the cache too, but a fresh rebuild of b.txt's
    reference does not give them -- it is kept as the agent left it, not dropped."""
    from harness import get_plugin

    template = get_plugin("task_template", "toy-inputs")
    params = template.params_model(seed=3)
    first, second = (tmp_path / "run" / "episodes" / key for key in ("ep-0", "ep-1"))
    for root in (first, second):
        (root / "workspace").mkdir(parents=True)
        template.materialize(params, "0", root / "workspace", root / "key")  # as an old run left it
    assert inputs.release_existing(first, template, params, "0") == {"by_reference": 4}  # a.txt's copy cached
    a_text = (second / "workspace" / "data" / "a.txt").read_text()
    (second / "workspace" / "data" / "b.txt").write_text(a_text)
    assert inputs.release_existing(second, template, params, "0") == {"by_reference": 3, "edited": 1}
    assert (second / "workspace" / "data" / "b.txt").read_text() == a_text


def test_the_cache_stays_under_its_bound(tmp_path, toy, monkeypatch):
    from harness import get_plugin

    template = get_plugin("task_template", "toy-inputs")
    root, *_ = run_one(tmp_path, toy)
    monkeypatch.setenv(inputs.CACHE_MB_ENV, str(250 / 2**20))  # 250 bytes: one file of the toy's (200 bytes) fits
    monkeypatch.setattr(inputs, "_since_scan", [10**9, 0.0])
    a = inputs.resolve(root, "workspace/data/a.txt")
    monkeypatch.setattr(inputs, "_since_scan", [10**9, 0.0])
    k = inputs.resolve(root, "key/hidden/k.txt")
    assert k.is_file() and not a.exists()  # the older one was evicted
    monkeypatch.setenv(inputs.CACHE_MB_ENV, "-1")
    with pytest.raises(HarnessError, match=inputs.CACHE_MB_ENV):
        inputs.cache_limit_bytes()
    assert template.input_values_digest(k) == inputs.file_sha256(k)  # the default digest: the bytes'


def test_a_record_naming_a_missing_file_is_refused(tmp_path):
    class Wrong(Plain):
        def input_references(self, params, episode, root):
            return {"workspace/missing.txt": {}}

    root = tmp_path / "ep"
    (root / "workspace").mkdir(parents=True)
    with pytest.raises(ValueError, match="workspace/missing.txt"):
        inputs.record(Wrong(), None, "0", root)
    with pytest.raises(ValueError, match="relative posix path"):
        inputs._check_rel("../outside.txt")

"""A Dask worker's episode (harness/dask_executor.py ``run_on_worker``) comes back as an archive of the episode
folder after its inputs were released: the archive carries the inputs' references, not their bytes, and the
client's copy rebuilds them."""

from __future__ import annotations

import io
import sys
import tarfile

import pytest

from harness import inputs
from harness.config import AgentProfile, RunSettings
from harness.dask_executor import DaskExecutor, _payload, run_on_worker
from harness.episode import EpisodePlan
from harness.store import RunStore
from tests.support.toy_inputs import TOY


@pytest.fixture
def toy(make_distribution, fresh_plugins, tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(tmp_path / "cache"))
    make_distribution("toy-inputs", {"toy": "toy_inputs"}, {"toy_inputs": TOY})
    fresh_plugins()
    return sys.modules["toy_inputs"]


def test_the_worker_sends_references_not_inputs(tmp_path, toy):
    from harness import get_plugin

    template = get_plugin("task_template", "toy-inputs")
    settings = RunSettings(sandbox="none")
    store = RunStore.create(tmp_path / "run")
    plan = EpisodePlan("ep-0", "toy", template, template.params_model(seed=1), "0",
                       AgentProfile(name="editor", agent="editor"), None, None, settings, store.run_id)
    out = run_on_worker(_payload(plan), settings.model_dump(mode="json"), None, {}, 1)
    with tarfile.open(fileobj=io.BytesIO(out["folder"]), mode="r:gz") as tar:
        names = set(tar.getnames())
    assert f"ep-0/{inputs.INPUTS_FILE}" in names and "ep-0/workspace/answer.txt" in names
    assert "ep-0/workspace/data/b.txt" in names  # the agent's edit travels
    assert not {"ep-0/workspace/data/a.txt", "ep-0/key/hidden/k.txt"} & names  # unchanged inputs: references

    executor = DaskExecutor(client=object())
    executor.store = store
    executor.result(type("Done", (), {"result": lambda self: out})(), plan)  # what the client does with it
    store.write_run_json({"episodes": [{"key": "ep-0", "template": "toy-inputs", "params": {"seed": 1},
                                        "episode": "0"}]})
    root = store.episode("ep-0").root
    assert inputs.resolve(root, "key/hidden/k.txt").read_text() == "k-1\n" * 50

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


def test_a_resume_on_dask_sends_only_what_the_resume_does_not_keep(tmp_path):
    """The client decides what a resume keeps (``RunSettings.retry_failed`` included): only the episodes it does
    not keep are submitted to the cluster."""
    distributed = pytest.importorskip("distributed")
    from harness.experiment import Unit
    from harness.run import execute, load_task
    from harness.store import read_row, write_json
    from tests.support.paths import REPO

    task = load_task(REPO / "tasks" / "drcik" / "sample-statistical.yaml",
                     {"forecasters": ["naive"], "contexts": ["no-context"]})
    store = RunStore.create(tmp_path / "run")
    execute([Unit(task, None, None)], store, RunSettings())
    failed = sorted(p.parent.name for p in store.root.glob("episodes/*/row.json"))[:2]
    for key in failed:  # as a forecaster that raised leaves its episode
        write_json(store.episode(key).row, {**read_row(store.episode(key).row), "status": "failed"})

    class Recording(DaskExecutor):
        def submit(self, plan):
            sent.append(plan.key)
            return super().submit(plan)

    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None,
                                  local_directory=str(tmp_path / "dask")) as cluster, \
            distributed.Client(cluster) as client:
        sent: list[str] = []
        rows = execute([Unit(task, None, None)], store, RunSettings(), executor=Recording(client=client))
        assert sent == [] and sorted(r["episode"] for r in rows if r["status"] == "failed") == failed  # results
        rows = execute([Unit(task, None, None)], store, RunSettings(retry_failed=True),
                       executor=Recording(client=client))
    assert sorted(sent) == failed
    assert len(rows) == 3 and {r["status"] for r in rows} == {"ok"}
    assert {read_row(store.episode(key).row)["status"] for key in failed} == {"ok"}

"""Corpus A (Appendix D.1, Table 10): every input CAF task's raw context, one document each, readable by the
drcik loader; generated targets keep their evidence."""

from __future__ import annotations

import json

from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation import caf
from tsagent_plugins.tasks.drcik.loader import load_tasks
from tsagent_plugins.tasks.drcik.quality import raw_corpus

from .conftest import task, write_release

CAF = REPO / "tasks" / "drcik" / "caf-sample"


def test_every_caf_context_is_one_document_and_targets_keep_their_evidence(tmp_path):
    inputs = sorted(caf.read_folder(CAF), key=lambda t: t.task_id)
    target = inputs[0].task_id
    gen = write_release(tmp_path / "gen", [task(target, {"E7": "kept evidence"}, [])])
    manifest = raw_corpus.export(gen, inputs)
    assert manifest["task_count"] == len(inputs) == 4
    assert [e["generated_target"] for e in manifest["tasks"]] == [True, False, False, False]
    loaded = {t.benchmark_id: t for t in load_tasks(gen / "corpus_a")}
    assert sorted(loaded) == [t.task_id for t in inputs]
    for t in inputs:
        docs = loaded[t.task_id].documents
        assert len(docs) == 1 and docs[0].content == t.context.text()
    assert [e.id for e in loaded[target].evidence] == ["E7"]
    assert [e.text for e in loaded[inputs[1].task_id].evidence] == [inputs[1].context.text()]
    raw = json.loads((gen / "corpus_a" / "tasks" / f"{target}.json").read_text())
    assert raw["series"] == inputs[0].series.model_dump(mode="json") and raw["corpus"] == "A"

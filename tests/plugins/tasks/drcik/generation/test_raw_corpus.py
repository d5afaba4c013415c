"""Corpus A (Appendix D.1, Table 10): every input CAF task's raw context, one document each, readable by the
drcik loader; generated targets keep their evidence."""

from __future__ import annotations

import json

from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation import caf
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.generation import raw_corpus

from tests.plugins.tasks.drcik.quality.conftest import task, write_release

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


def test_table10_spec_plans_both_corpora_with_a_corpus_column(tmp_path):
    """tasks/drcik/table10.yaml: Retrieval and Codex on corpus A (raw) and B (generated), rows labelled A/B."""
    import shutil

    from click.testing import CliRunner

    from harness.cli import cli

    root = tmp_path / "repo"
    (root / "tasks" / "drcik").mkdir(parents=True)
    for name in ("table10.yaml", "research-sample.yaml"):
        shutil.copy(REPO / "tasks" / "drcik" / name, root / "tasks" / "drcik" / name)
    inputs = sorted(caf.read_folder(CAF), key=lambda t: t.task_id)
    gen = write_release(root / "runs" / "gen", [task(inputs[0].task_id, {"E1": "x"}, [
        {"document_id": "doc_1", "content": "Harbor Pumping Station flow.", "role": "supporting", "subtype": None}])])
    raw_corpus.export(gen, inputs)
    result = CliRunner().invoke(cli, ["plan", "--experiment", str(root / "tasks" / "drcik" / "table10.yaml")])
    assert result.exit_code == 0, result.output + str(result.exception)
    # corpus A: 4 raw tasks x 2 agents; corpus B: 1 generated task x 2 agents
    assert "stage corpus-a: 8 episodes" in result.output and "stage corpus-b: 2 episodes" in result.output
    assert "total: 10 episode(s)" in result.output
    import yaml as _yaml

    spec = _yaml.safe_load((REPO / "tasks" / "drcik" / "table10.yaml").read_text())
    assert [s["set"]["corpus"] for s in spec["stages"]] == ["A", "B"]
    assert all(s["agents"] == ["retrieval-bm25-gemini-3-flash", "codex-dr-gpt-5.5"] for s in spec["stages"])


def test_research_and_forecast_rows_carry_the_corpus_label(tmp_path):
    from harness.run import load_task
    from tsagent_plugins.tasks.drcik.template import DrcikTemplate

    template = DrcikTemplate()
    params = load_task(REPO / "tasks" / "drcik" / "research-sample.yaml").params.model_copy(update={"corpus": "A"})
    task_id = template.episodes(params)[0]
    ws, key_dir = tmp_path / "ws", tmp_path / "key"
    template.materialize(params, task_id, ws, key_dir)
    (ws / "evidence.json").write_text("[]")
    (ws / "report.md").write_text("# report\n")
    metrics = template.score(params, task_id, ws, key_dir, None).metrics
    assert (metrics["corpus"], metrics["tasks_source"]) == ("A", "sample")
    # the label selects nothing: the episode's identity is the same with or without it
    assert template.episode_identity(params, task_id) == template.episode_identity(
        params.model_copy(update={"corpus": None}), task_id)

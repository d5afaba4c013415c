"""DR context conditions from a research run, and what llm-dp is actually sent (its proxy log)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.drcik_research_runs import GHOST, write_episode
from harness.config import AgentProfile
from harness.model_client import ModelClient
from harness.wire import read_log
from tsagent_plugins.forecasters.llm import DirectPromptForecaster
from tsagent_plugins.tasks.drcik.research.as_context import dr_outputs_from_run, forecasting_contexts
from tsagent_plugins.tasks.drcik.forecast.experiment import run_experiment
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tests.support.paths import TESTS

SCRIPT = TESTS / "fixtures" / "scripts" / "llm_dp" / "sample.yaml"


@pytest.fixture(scope="module")
def tasks():
    return load_tasks()


@pytest.fixture
def research_run(tmp_path, tasks):
    run = tmp_path / "research"
    by_id = {t.benchmark_id: t for t in tasks}
    for task in tasks:
        sup, dis = task.supporting_ids, task.distractor_ids
        other = next(t for t in tasks if t is not task).supporting_ids[0]
        items = [(f"{task.benchmark_id} claim supported", [sup[0], sup[1]]),
                 (f"{task.benchmark_id} claim citing a distractor", [sup[0], dis[0]]),
                 (f"{task.benchmark_id} claim with an unresolved id", [sup[2], GHOST]),
                 (f"{task.benchmark_id} claim citing another task", [other]),
                 (f"{task.benchmark_id} claim citing nothing", [])]
        write_episode(run, "retrieval", tasks, task.benchmark_id, items,
                      report=f"# {task.benchmark_id} research report\n\nFull report text for {by_id[task.benchmark_id].benchmark_id}.\n")
    return run


def test_dr_outputs_name_their_agent_and_run(research_run):
    outputs = dr_outputs_from_run(research_run)
    assert set(outputs) == {"retrieval"}
    out = outputs["retrieval"]["task_42"]
    assert out.agent == "retrieval" and out.run == "research"
    assert [c.claim for c in out.claims][0] == "task_42 claim supported"
    assert out.claims[2].cited_document_ids and len(out.claims[2].cited_document_ids) == 1   # ghost dropped


def test_forecasting_contexts_record_status_and_source(research_run, tasks):
    records = {(r["benchmark_id"], r["context"]): r for r in forecasting_contexts(research_run, tasks)}
    verified = records[("task_42", "verified-dr")]
    assert verified["context_items"] == 2 and verified["evidence_agent"] == "retrieval" and verified["evidence_run"] == str(research_run.resolve())
    assert records[("task_42", "dr-evidence")]["context_items"] == 5
    assert records[("task_42", "dr-report")]["text"].startswith("# task_42 research report")


def prompts(log_dir: Path) -> list[str]:
    out = []
    for log in sorted(log_dir.glob("*/proxy.jsonl.zst")):
        for entry in read_log(log):
            if entry.get("type") == "request":
                out.append(entry["body"]["messages"][-1]["content"])
    return out


def context_block(prompt: str) -> str:
    return prompt.split("<context>\n", 1)[1].split("\n</context>", 1)[0]


@pytest.mark.parametrize("condition", ["dr-evidence", "dr-report", "verified-dr"])
def test_llm_dp_prompt_holds_exactly_the_conditions_text(tmp_path, research_run, tasks, condition):
    profile = AgentProfile(name="dp", agent="llm-dp", provider="custom", model="scripted-model")
    model = ModelClient.open(profile, tmp_path / "proxy", "scripted", {"script": str(SCRIPT)})
    try:
        dr = dr_outputs_from_run(research_run)["retrieval"]
        result = run_experiment(tasks, {"llm-dp": DirectPromptForecaster(model)}, [condition], n_samples=2,
                                seed=0, time_limit=60, dr_evidence=dr)
    finally:
        model.stop()
    assert (result.rows["status"] == "ok").all()
    sent = prompts(tmp_path / "proxy")
    assert sent
    by_task = {}
    for prompt in sent:
        block = context_block(prompt)
        task_id = next(t.benchmark_id for t in tasks if t.benchmark_id + " " in block or t.benchmark_id + "\n" in block
                       or block.endswith(t.benchmark_id + "."))
        by_task.setdefault(task_id, set()).add(block)
    for task in tasks:
        (block,) = by_task[task.benchmark_id]           # one context per task, identical in every request
        b = task.benchmark_id
        if condition == "dr-evidence":
            assert block == "\n".join(f"- {b} {s}" for s in ("claim supported", "claim citing a distractor",
                                                              "claim with an unresolved id", "claim citing another task",
                                                              "claim citing nothing"))
        elif condition == "dr-report":
            assert block == f"# {b} research report\n\nFull report text for {b}."
        else:   # the unresolved id is dropped first, so that claim is verified too
            assert block == f"- {b} claim supported\n- {b} claim with an unresolved id"


def test_a_broken_episode_names_the_file(research_run):
    from harness import RowError, read_row
    from harness.config import ConfigError
    from tsagent_plugins.tasks.drcik.research.inputs import read_episode

    folder = research_run / "episodes" / "retrieval-task_42"
    row = read_row(folder / "row.json")
    (folder / "key" / "deep_research.jsonl").write_text("")
    with pytest.raises(ConfigError, match="deep_research.jsonl"):
        read_episode(folder, row)
    (folder / "score.json").write_text("{")
    with pytest.raises(RowError, match="score.json: not a valid score"):  # the harness's file: its reader's rule
        read_episode(folder, row)
    (folder / "score.json").unlink()
    with pytest.raises(ConfigError, match="score.json"):
        read_episode(folder, row)
    (folder / "key" / "research_key.json").write_text("[]")
    with pytest.raises(ConfigError, match="research_key.json: research key: not a JSON object"):
        read_episode(folder, row)

"""What `harness rescore` asks of the drcik template: the LLM judge's verdicts of a research run, priced before any
request and judged again (today's judge, offline on the scripted model) only when run; nothing for forecasts."""

from __future__ import annotations

import json

import pytest
import yaml

from harness import plugins as registry
from harness.profiles import resolve_profile
from tests.support.drcik_research_runs import write_episode
from tsagent_plugins.judges.llm import MAX_TOKENS
from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks
from tsagent_plugins.tasks.drcik.research import scoring


@pytest.fixture
def research_run(tmp_path):
    tasks = load_tasks()
    run = tmp_path / "research"
    for task in tasks:
        write_episode(run, "alpha", tasks, task.benchmark_id, [(task.evidence[1].text, [task.supporting_ids[0]])])
    return run


def test_llm_verdicts_are_priced_and_judged_again_only_when_run(tmp_path, research_run):
    template = registry.get("task_template", "drcik")
    params = template.params_model(episode_kind="research")
    assert template.model_rescoring(params, research_run, {}) == []  # no LLM judge has judged the run
    rows = [{**r, "judge": "llm-judge", "judge_label": "llm-judge@judge-prompt-v0 (llm, m)"}
            for r in scoring.score_run(research_run, registry.get("judge", "lexical"))]
    scoring.write_scores(research_run, rows)  # verdicts of an older version of the LLM judge
    ((description, cost, run),) = template.model_rescoring(params, research_run, {
        "backend": "scripted", "options": {"script": str(_script(tmp_path))}})
    requests, _ = scoring.estimate_judging(research_run, None)
    assert requests == sum(len(r["verdicts"]) for r in rows) > 0
    prices = resolve_profile(scoring.DEFAULT_JUDGE_PROFILE).prices
    assert cost > requests * MAX_TOKENS * prices.output / 1e6  # the answers at their cap, and the prompts
    assert description.startswith(f"llm-judge@judge-prompt-v1 on {research_run} (was llm-judge@judge-prompt-v0")
    assert not (research_run / "judge").exists()  # pricing sent no request
    assert "3 row(s) judged by llm-judge@judge-prompt-v1" in run()
    judged = [r for r in scoring.read_scores(research_run) if r["judge_version"] == "judge-prompt-v1"]
    assert len(judged) == 3 and all(v["matched"] for r in judged for v in r["verdicts"])
    forecast = template.params_model(episode_kind="forecast", forecasters=["naive"])
    assert template.model_rescoring(forecast, research_run, {}) == []


def _script(tmp_path):
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump({"final": {"text": json.dumps({"match": True, "item": 1})}}))
    return path

"""The generation judges are judge plugins: registered with their prompt, reading the L.2 verdict; not
evidence judges (dr-score refuses them)."""

from __future__ import annotations

from click.testing import CliRunner

from harness import get_plugin
from harness.cli import cli
from tsagent_plugins.tasks.drcik.generation import prompts


def test_the_five_judges_are_registered_with_their_prompts():
    names = {"dr-gen-entity": "judge_entity", "dr-gen-evidence": "judge_evidence", "dr-gen-chain": "judge_chain",
             "dr-gen-supporting": "judge_supporting", "dr-gen-distractor": "judge_distractor"}
    for name, prompt in names.items():
        judge = get_plugin("judge", name)
        assert judge.prompt == prompt and judge.kind == "generation"
        assert judge.version == prompts.load(prompt).sha256[:12]


def test_a_verdict_is_read_from_the_l2_json():
    judge = get_plugin("judge", "dr-gen-chain")
    ok = judge.read('```json\n{"judge": "correct", "summary": "fine", "findings": []}\n```')
    assert ok.matched is True and ok.status == "ok"
    no = judge.read('{"judge": "needs_correction", "summary": "s", "correction_hint": "split R2"}')
    assert no.matched is False and no.reason == "split R2"
    bad = judge.read('{"judge": "maybe"}')
    assert bad.matched is None and bad.status == "malformed"
    assert judge.judge("item", ["a"]).status == "error"


def test_dr_score_refuses_a_generation_judge(tmp_path):
    result = CliRunner().invoke(cli, ["dr-score", str(tmp_path), "--judge", "dr-gen-evidence"])
    assert result.exit_code == 2 and "a dr-generate stage judge, not an evidence judge" in result.output

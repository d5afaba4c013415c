"""Evidence judges: the conformance kit on both built-ins; the LLM judge offline on the scripted model."""

from __future__ import annotations

import pytest

from harness.config import AgentProfile, load_profile
from harness.plugins import Plugins
from harness.testing.judge import MATCH_ITEM, MISS_ITEM, JudgeTests
from harness.model_client import ModelClient
from harness.wire import read_log
from tsagent_plugins.judges import lexical
from tsagent_plugins.judges.lexical import LexicalJudge
from tsagent_plugins.judges.llm import PROMPT_VERSION, LLMJudge, parse_answer
from tests.support.paths import REPO

PROFILE = AgentProfile(name="judge-scripted", agent="llm-judge", provider="custom", model="scripted-judge")
CONFORMANCE_SCRIPT = {"match": [
    {"when": {"contains": MATCH_ITEM}, "reply": {"text": '```json\n{"match": true, "item": 2}\n```'}},
    {"when": {"contains": MISS_ITEM}, "reply": {"text": '{"match": false, "item": null}'}},
]}


@pytest.fixture
def scripted_judge(tmp_path):
    started = []

    def start(script):
        model = ModelClient.open(PROFILE, tmp_path / "proxy", "scripted", {"script": script})
        started.append(model)
        return LLMJudge().bind_model(model)

    yield start
    for model in started:
        model.stop()


def logged(tmp_path, kind):
    out = []
    for log in sorted((tmp_path / "proxy").glob("*/proxy.jsonl.zst")):
        out += [record for record in read_log(log) if record.get("type") == kind]
    return out


class TestLexicalJudge(JudgeTests):
    @pytest.fixture
    def judge(self):
        return LexicalJudge()


class TestLLMJudgeOnScriptedModel(JudgeTests):
    @pytest.fixture
    def judge(self, scripted_judge):
        return scripted_judge(CONFORMANCE_SCRIPT)


def test_both_judges_are_registered_with_kind_and_version():
    loaded = Plugins()
    reg = loaded.registry("judge")
    assert reg["lexical"].obj.kind == "lexical" and reg["lexical"].obj.version == lexical.VERSION
    assert reg["llm-judge"].obj.kind == "llm" and reg["llm-judge"].obj.version == PROMPT_VERSION


def test_gemini_judge_profile_names_the_papers_judge_model():

    prof = load_profile(REPO / "agent_profiles" / "judge-gemini-3-flash.yaml")
    assert (prof.agent, prof.provider, prof.model) == ("llm-judge", "openrouter", "google/gemini-3-flash-preview")


# -- lexical rule ---------------------------------------------------------------------------

def test_lexical_normalises_dates_and_numbers():
    exact, words = lexical.tokens("Sales rose 1,200.50 units (20%) on 2025/10/12 00:00:00 and 2025-10-07 08:20.")
    assert exact == {"1200.5", "20", "2025-10-12", "2025-10-07t08:20"}
    assert words == {"sales", "rose", "units"}


def test_lexical_needs_every_date_and_number_exactly():
    judge = LexicalJudge()
    item = "Sales were higher than normal from 2025-10-12 to 2025-11-03."
    assert judge.judge(item, ["Sales were higher than normal from 2025-10-12 to 2025-11-04."]).matched is False
    assert judge.judge(item, ["From 2025-10-12 to 2025-11-03 sales were higher than normal."]).index == 1
    assert judge.judge("Load tripled to 300 units.", ["Load tripled to 30 units."]).matched is False


def test_lexical_threshold_is_half_of_the_content_words():
    judge = LexicalJudge()
    item = "outdated firmware caused high loads"            # words: outdated firmware caused high loads
    assert lexical.overlap(item, "firmware was outdated")[1] == pytest.approx(2 / 5)
    assert judge.judge(item, ["firmware was outdated"]).matched is False
    assert lexical.overlap(item, "outdated firmware, high loads")[1] == pytest.approx(4 / 5)
    assert judge.judge(item, ["nothing here", "outdated firmware, high loads"]).index == 2
    with pytest.raises(ValueError, match="threshold"):
        LexicalJudge(threshold=0)


# -- LLM judge: request shape, parsing, malformed answers -----------------------------------------

def test_llm_judge_request_shape(tmp_path, scripted_judge):
    judge = scripted_judge({"turns": [{"text": '{"match": true, "item": 1}',
                                       "expect": {"body_path": {"temperature": 0}, "auth": "dummy"}}]})
    verdict = judge.judge("E2 text", ["first claim", "second\nclaim"])
    assert (verdict.matched, verdict.index, verdict.status) == (True, 1, "ok")
    (request,) = logged(tmp_path, "request")
    body = request["body"]
    assert body["model"] == "scripted-judge" and body["temperature"] == 0 and body["max_tokens"] == 256
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "<<<\nE2 text\n>>>" in user["content"]
    assert "1. first claim\n2. second\n   claim\n" in user["content"]
    assert "Dates, times, durations, counts" in user["content"] and '"will" is not "may"' in user["content"]


def test_llm_judge_one_call_per_item(tmp_path, scripted_judge):
    judge = scripted_judge({"final": {"text": '{"match": false, "item": null}'}})
    for item in ("a", "b", "c"):
        assert judge.judge(item, ["x"]).matched is False
    assert len(logged(tmp_path, "request")) == 3
    assert judge.judge("d", []).matched is False and len(logged(tmp_path, "request")) == 3   # no call


def test_llm_judge_malformed_answer_is_recorded(scripted_judge):
    # each judge call is its own proxy episode, so the answers are chosen by the item's text
    judge = scripted_judge({"match": [{"when": {"contains": "item-prose"}, "reply": {"text": "Yes, item 2 matches."}},
                                      {"when": {"contains": "item-string"}, "reply": {"text": '{"match": "yes"}'}},
                                      {"when": {"contains": "item-range"}, "reply": {"text": '{"match": true, "item": 7}'}}]})
    first, second, third = (judge.judge(g, ["a", "b"]) for g in ("item-prose", "item-string", "item-range"))
    assert (first.matched, first.status, first.reason, first.raw) == (None, "malformed", "answer is not JSON",
                                                                      "Yes, item 2 matches.")
    assert second.matched is None and second.status == "malformed" and "'match'" in second.reason
    assert third.matched is None and third.status == "malformed" and "1..2" in third.reason


def test_llm_judge_without_model_or_with_unsupported_provider_is_an_error_verdict(tmp_path):
    assert LLMJudge().judge("g", ["a"]).status == "error"
    assert parse_answer(None, 2).status == "malformed"
    assert parse_answer('{"match": false}', 2).matched is False

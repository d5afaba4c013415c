"""The ATIF builder shared by the terminal agents: steps, tool results, and the proxy cross-check.

Rules under test (plugins/agents/terminal/atif.py): agent steps are paired
with the proxy's conversation calls in order (or by equal token counts when
the numbers of steps and calls differ); counts missing from a CLI's log are
filled from the paired call; totals come from the proxy whenever the CLI's
are missing or disagree, with the disagreement recorded.
"""

from __future__ import annotations


import pytest

from harness.proxy.usage import Usage
from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder, arguments_object, iso
from tsagent_plugins.agents.terminal.proxylog import ProxyCall, first_prompt, read_calls, user_messages
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "native_logs"


def call(seq: int, usage: Usage | None, cost: float = 0.01, tools: bool = True, status: int = 200) -> ProxyCall:
    return ProxyCall(seq=seq, ts=1_700_000_000.0 + seq, method="POST", path="/v1/chat/completions",
                     wire="openai-chat", model="m", has_tools=tools, body={}, status=status, usage=usage,
                     cost_usd=cost)


def two_steps(first: Usage | None, second: Usage | None) -> TrajectoryBuilder:
    b = TrajectoryBuilder("cli", "1.0", "m", "s-1")
    b.user("task", 1_700_000_000)
    step = b.agent("running", 1_700_000_001, reasoning="think", usage=first)
    cid = b.tool_call(step, "c1", "bash", '{"command": "python3 -c \\"print(42)\\""}')
    b.observe(cid, "42\n", is_error=False)
    b.agent("done", 1_700_000_002, usage=second)
    return b


def test_steps_and_observations():
    traj = two_steps(Usage(100, 10, 5), Usage(120, 100, 3)).build()
    validate_trajectory(traj)
    user, act, answer = traj["steps"]
    assert [s["step_id"] for s in traj["steps"]] == [1, 2, 3]
    assert user == {"step_id": 1, "timestamp": "2023-11-14T22:13:20.000Z", "source": "user", "message": "task"}
    assert act["tool_calls"] == [{"tool_call_id": "c1", "function_name": "bash",
                                  "arguments": {"command": 'python3 -c "print(42)"'}}]
    assert act["observation"] == {"results": [{"source_call_id": "c1", "content": "42\n", "extra": {"is_error": False}}]}
    assert act["reasoning_content"] == "think" and act["model_name"] == "m"
    assert "observation" not in answer


def test_without_proxy_the_cli_counts_are_the_totals():
    final = two_steps(Usage(100, 10, 5, 2), Usage(120, 100, 3)).build()["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_cached_tokens"], final["total_completion_tokens"]) == (220, 110, 8)
    assert final["extra"]["token_source"] == "cli" and final["extra"]["total_reasoning_tokens"] == 2
    assert "total_cost_usd" not in final  # nobody priced it


def test_agreeing_counts_keep_the_cli_as_source_and_take_the_proxy_cost():
    calls = [call(1, Usage(100, 10, 5), 0.5), call(2, Usage(120, 100, 3), 0.25)]
    traj = two_steps(Usage(100, 10, 5), Usage(120, 100, 3)).build(calls)
    assert [s["metrics"]["cost_usd"] for s in traj["steps"][1:]] == [0.5, 0.25]
    assert [s["extra"]["proxy_seq"] for s in traj["steps"][1:]] == [1, 2]
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == "cli" and "disagreement" not in final["extra"]
    assert final["total_cost_usd"] == 0.75


def test_missing_step_counts_are_filled_from_the_paired_call():
    calls = [call(1, Usage(100, 10, 5)), call(2, Usage(120, 100, 3))]
    traj = two_steps(Usage(100, 10, 5), None).build(calls)
    last = traj["steps"][2]["metrics"]
    assert (last["prompt_tokens"], last["cached_tokens"], last["completion_tokens"]) == (120, 100, 3)
    assert last["extra"]["source"] == "proxy"
    assert "taken from the proxy log" in traj["notes"]
    final = traj["final_metrics"]
    assert final["total_prompt_tokens"] == 220 and final["extra"]["token_source"] == "proxy"
    assert final["extra"]["cli_totals"] is None


def test_side_calls_make_the_totals_disagree_and_say_why():
    calls = [call(1, Usage(50, 0, 4), tools=False), call(2, Usage(100, 10, 5)), call(3, Usage(120, 100, 3))]
    traj = two_steps(Usage(100, 10, 5), Usage(120, 100, 3)).build(calls)
    assert [s["extra"]["proxy_seq"] for s in traj["steps"][1:]] == [2, 3]  # the side call is not a step
    final = traj["final_metrics"]
    assert final["total_prompt_tokens"] == 270 and final["total_completion_tokens"] == 12
    assert final["extra"]["token_source"] == "proxy"
    assert final["extra"]["disagreement"]["prompt_tokens"] == {"cli": 220, "proxy": 270}
    assert final["extra"]["disagreement"]["completion_tokens"] == {"cli": 8, "proxy": 12}
    assert "cached_tokens" not in final["extra"]["disagreement"]
    assert "outside the conversation (1)" in final["extra"]["disagreement"]["reason"]


def test_steps_and_calls_of_different_number_pair_by_equal_counts():
    # a retried call (the CLI logged one step) and a failed one: pairing by order would be wrong
    calls = [call(1, Usage(100, 10, 5)), call(2, None, 0.0, status=500), call(3, Usage(100, 10, 5)),
             call(4, Usage(120, 100, 3))]
    traj = two_steps(Usage(100, 10, 5), Usage(120, 100, 3)).build(calls)
    assert [s["extra"]["proxy_seq"] for s in traj["steps"][1:]] == [1, 4]


def test_a_step_whose_counts_differ_from_its_call_keeps_both():
    calls = [call(1, Usage(100, 10, 5)), call(2, Usage(125, 100, 3))]
    traj = two_steps(Usage(100, 10, 5), Usage(120, 100, 3)).build(calls)
    metrics = traj["steps"][2]["metrics"]
    assert metrics["prompt_tokens"] == 120 and metrics["extra"]["proxy"]["prompt_tokens"] == 125


def test_tool_calls_without_or_with_repeated_ids_stay_distinct():
    b = TrajectoryBuilder("cli", "1")
    step = b.agent("x")
    first = b.tool_call(step, None, "bash", {"command": "ls"})
    second = b.tool_call(step, "dup", "bash", {})
    third = b.tool_call(step, "dup", "bash", {})
    assert first == "call_1_1" and second == "dup" and third == "dup_dup"
    b.observe("unknown-id", "orphan output")
    traj = b.build()
    validate_trajectory(traj)
    assert traj["steps"][0]["observation"]["results"] == [{"content": "orphan output"}]  # no source_call_id


@pytest.mark.parametrize("value,expected", [
    (1_700_000_000, "2023-11-14T22:13:20.000Z"),
    (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
    ("2026-11-29T16:09:12.656Z", "2026-11-29T16:09:12.656Z"),
    ("2026-11-29T16:09:12", "2026-11-29T16:09:12.000Z"),
    ("2026-11-29T17:09:12+01:00", "2026-11-29T16:09:12.000Z"),
    ("yesterday", None), (None, None), (True, None),
])
def test_iso(value, expected):
    assert iso(value) == expected


@pytest.mark.parametrize("raw,expected", [
    ({"a": 1}, {"a": 1}), ('{"a": 1}', {"a": 1}), ("not json", {"input": "not json"}),
    ("[1, 2]", {"input": [1, 2]}), (None, {}), (["ls"], {"input": ["ls"]}),
])
def test_arguments_object(raw, expected):
    assert arguments_object(raw) == expected


@pytest.mark.parametrize("agent,wire", [("claude-code", "anthropic"), ("codex", "openai-responses"),
                                        ("gemini-cli", "gemini"), ("opencode", "openai-chat")])
def test_proxy_log_of_each_wire(agent, wire):
    folder = FIXTURES / agent / "direct"
    calls = read_calls(folder / "proxy.jsonl")
    conversation = [c for c in calls if c.conversational]
    assert len(conversation) == 2 and all(c.wire == wire and c.usage is not None for c in conversation)
    prompt = (folder / "prompt.txt").read_text().strip()
    assert prompt in first_prompt(calls)
    # the second call carries the same task prompt again (the conversation so far)
    assert any(prompt in m for m in user_messages(conversation[1]))
    if agent == "opencode":  # its title request offers no tools
        assert [c.has_tools for c in calls] == [False, True, True]

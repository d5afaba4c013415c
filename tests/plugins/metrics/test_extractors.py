"""Each Appendix G metric on a hand-made trajectory with known answers."""

from __future__ import annotations

import json

import pytest

from harness.config import AgentProfile, Prices
from harness.contracts import EpisodeArtifacts, MetricExtractor
from harness.plugins import Plugins
from tsagent_plugins.metrics import (
    InteractionMetrics,
    NumericOutputMetrics,
    PlotMetrics,
    PythonUseMetrics,
    UsageMetrics,
    all_extractors,
)
from tsagent_plugins.metrics.sources import count_statements, replay
from tests.support.paths import TESTS

FIXTURES = TESTS / "fixtures" / "trajectories"


@pytest.fixture
def mixed():
    """tests/fixtures/trajectories/claude_mixed.json, a Claude Code-style episode; see its steps."""
    return json.loads((FIXTURES / "claude_mixed.json").read_text())


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "workspace"
    (ws / "test_samples").mkdir(parents=True)
    (ws / "test_samples" / "a3f9c2d1e4b5.parquet").write_bytes(b"PAR1")
    for name in ("fig_a.png", "fig_b.png", "fig_c.png"):  # fig_c is written but never opened
        (ws / name).write_bytes(b"\x89PNG\r\n")
    (ws / ".cache").mkdir()
    (ws / ".cache" / "font.png").write_bytes(b"x")  # a tool cache, not a plot
    return ws


def artifacts(trajectory, workspace, image_support=True, proxy_log=None, prices=None):
    profile = AgentProfile(name="p", agent="claude-code", image_support=image_support, prices=prices or Prices())
    return EpisodeArtifacts(trajectory, proxy_log, workspace, profile)


def test_all_extractors_registered_through_the_entry_point():
    registry = Plugins().registry("metric_extractor")
    assert {"interaction", "python-use", "plots", "numeric-output", "console-share", "usage"} <= set(registry)
    for extractor in all_extractors():
        assert isinstance(extractor, MetricExtractor)
        assert registry[extractor.name].plugin == "trajectory-metrics"


def test_iterations_and_tool_calls(mixed, workspace):
    # 16 agent steps (steps 2..17); 15 of them make one well-formed tool call each
    assert InteractionMetrics().extract(artifacts(mixed, workspace)) == {"agent_iterations": 16, "tool_calls": 15}


def test_malformed_tool_calls_and_llm_call_count(workspace):
    trajectory = {"steps": [
        {"step_id": 1, "source": "agent", "message": "", "llm_call_count": 3,
         "tool_calls": [{"tool_call_id": "a", "function_name": "Bash", "arguments": {"command": "ls"}},
                        {"tool_call_id": "b", "function_name": "Bash", "arguments": "{not json"},
                        {"tool_call_id": "c", "function_name": "", "arguments": {}},
                        {"tool_call_id": "d", "function_name": "Bash", "arguments": "{\"command\": \"pwd\"}"}]},
        {"step_id": 2, "source": "agent", "message": "done"}]}
    assert InteractionMetrics().extract(artifacts(trajectory, workspace)) == {"agent_iterations": 4, "tool_calls": 2}


def test_python_calls_and_statements(mixed, workspace):
    # calls: heredoc (1; its body's `python -c` is data), x.py twice, -c numpy, -c traceback, x.py after the edit,
    # plot.py, run.py = 8; `cat x.py` is not a call.
    # statements: heredoc 3 + x.py v1 3 + "-c" 2 + "-c" 2 + x.py v2 3 + plot.py 6 = 19 (x.py v1 counted once
    # although run twice and displayed by cat)
    out = PythonUseMetrics().extract(artifacts(mixed, workspace))
    assert out == {"python_calls": 8, "python_statements": 19, "shell_parse_fallbacks": 0}
    found = replay(mixed)
    assert sorted(count_statements(v) for v in found.versions) == [2, 2, 3, 3, 3, 6]


def test_statement_counting():
    assert count_statements("import os\nfor i in range(2):\n    if i:\n        print(i)\n") == 4
    assert count_statements("    x = 1\n    y = 2\n") == 2  # indented heredoc body
    assert count_statements("def f(:\n") == 0  # does not parse


def test_versions_from_write_edit_patch_and_shell(workspace):
    def step(i, name, args):
        return {"step_id": i, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": f"c{i}", "function_name": name, "arguments": args}],
                "observation": {"results": [{"source_call_id": f"c{i}", "content": "ok"}]}}
    trajectory = {"steps": [
        step(1, "write_file", {"file_path": "/workspace/a.py", "content": "x = 1\n"}),
        step(2, "replace", {"file_path": "/workspace/a.py", "old_string": "x = 1", "new_string": "x = 1\ny = 2"}),
        step(3, "write_file", {"file_path": "/workspace/a.py", "content": "x = 1\n"}),  # same as v1: not new
        step(4, "apply_patch", {"input": "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 1\n+z = 3\n"
                                         "*** Add File: b.py\n+import os\n*** End Patch"}),
        step(5, "run_shell_command", {"command": "sed -i 's/1/2/' a.py && python a.py"}),
        step(6, "edit", {"filePath": "/workspace/a.py", "oldString": "z = 3", "newString": "z = 4"}),  # unknown base
        step(7, "exec_command", {"cmd": "printf 'q = 1\\n' > notes.txt && python notes.txt"}),
    ]}
    found = replay(trajectory)
    assert len(found.runs) == 2
    # versions: a.py v1 (1), v2 (2), patched (2), b.py (1), notes.txt run by python (1); after sed the file is unknown
    assert sorted(count_statements(v) for v in found.versions) == [1, 1, 1, 2, 2]
    assert PythonUseMetrics().extract(artifacts(trajectory, workspace))["python_statements"] == 7


def test_plots_generated_and_inspected(mixed, workspace):
    # 3 images in the workspace; fig_a opened by a failing Read, fig_b opened (image content), fig_c never opened
    assert PlotMetrics().extract(artifacts(mixed, workspace)) == {"plots_generated": 3, "plots_inspected": 1,
                                                                "plots_truncated": False}


def test_plots_inspected_is_none_without_image_support(mixed, workspace):
    assert PlotMetrics().extract(artifacts(mixed, workspace, image_support=False)) == {
        "plots_generated": 3, "plots_inspected": None, "plots_truncated": False}


def test_plot_read_errors_detected_from_text(workspace):
    def read(i, path, content):
        return {"step_id": i, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": f"r{i}", "function_name": "read_file", "arguments": {"absolute_path": path}}],
                "observation": {"results": [{"source_call_id": f"r{i}", "content": content}]}}
    trajectory = {"steps": [read(1, "/workspace/fig_a.png", "Error: File not found: /workspace/fig_a.png"),
                            read(2, "/workspace/fig_c.png", "Read image file [image/png]")]}
    assert PlotMetrics().extract(artifacts(trajectory, workspace))["plots_inspected"] == 1


def test_numeric_values_printed(mixed, workspace):
    # 3 (heredoc run) + 6 + 6 (x.py twice) + 0 (cat x.py: source echo) + 4 (np.eye) + 1 (42; traceback excluded)
    # + 0 (Edit snippet) + 9 (x.py v2) + 4 (Read data.csv, line numbers excluded) + 3 (warning excluded) = 36
    assert NumericOutputMetrics().extract(artifacts(mixed, workspace)) == {"numeric_values_printed": 36}


def test_usage_from_trajectory_metrics_and_time(mixed, workspace):
    prices = Prices(input=5, cached=0.5, output=30)  # gpt-5.5, Table 21
    out = UsageMetrics().extract(artifacts(mixed, workspace, prices=prices))
    # agent steps 2..17 carry prompt 1000 + 100 * step_id, cached 500, completion 50
    prompt = sum(1000 + 100 * i for i in range(2, 18))
    assert (out["prompt_tokens"], out["cached_tokens"], out["completion_tokens"]) == (prompt, 8000, 800)
    assert prompt == 31200
    assert out["total_tokens"] == 32000
    assert out["cost_usd"] == pytest.approx(((31200 - 8000) * 5 + 8000 * 0.5 + 800 * 30) / 1e6)
    assert out["total_seconds"] == 330.0  # 10:00:00 -> 10:05:30
    assert out["usage_source"] == "trajectory"


def test_usage_from_proxy_log(tmp_path, workspace):
    log = tmp_path / "proxy.jsonl"
    lines = [
        {"type": "request", "seq": 1, "ts": 100.0, "method": "POST", "path": "/v1/responses", "body": {"input": "hi"}},
        {"type": "response", "seq": 1, "ts": 101.0, "last_byte_ts": 103.5, "status": 200,
         "usage": {"prompt_tokens": 1000, "cached_tokens": 200, "completion_tokens": 50, "reasoning_tokens": 10},
         "cost_usd": 0.0},
        {"kind": "request", "ts": 104.0, "method": "POST", "path": "/v1/responses", "body": {"input": "again"}},
        {"kind": "response", "ts": 110.0, "status": 200,
         "usage": {"prompt_tokens": 1500, "cached_tokens": 1000, "completion_tokens": 80, "reasoning_tokens": 0}},
    ]
    log.write_text("\n".join(json.dumps(x) for x in lines) + "\n{broken\n")
    out = UsageMetrics().extract(artifacts(None, workspace, proxy_log=log, prices=Prices(input=5, cached=0.5, output=30)))
    assert out["prompt_tokens"] == 2500 and out["cached_tokens"] == 1200 and out["completion_tokens"] == 130
    assert out["total_tokens"] == 2630
    assert out["cost_usd"] == pytest.approx(((2500 - 1200) * 5 + 1200 * 0.5 + 130 * 30) / 1e6)  # 0.011
    assert out["cost_usd"] == pytest.approx(0.011)
    assert out["total_seconds"] == pytest.approx(10.0)
    assert InteractionMetrics().extract(artifacts(None, workspace, proxy_log=log))["agent_iterations"] == 2


def test_each_episode_reads_its_proxy_log_and_replays_its_trajectory_once(mixed, workspace, tmp_path, monkeypatch):
    """Every extractor of an episode reads the same ``EpisodeArtifacts``: its ``proxy.jsonl`` is opened and
    parsed once and its trajectory's shell replay computed once, even when two episodes' extractors run
    interleaved (episodes run side by side in one process)."""
    from harness import logfile
    from tsagent_plugins.metrics import sources

    def write_log(path, prompt_tokens):
        request = {"type": "request", "seq": 1, "ts": 100.0, "method": "POST", "path": "/v1/messages",
                   "wire": "anthropic", "body": {"system": "s", "messages": [{"role": "user", "content": "go"}],
                                                 "tools": [{"name": "Bash"}]}}
        response = {"type": "response", "seq": 1, "ts": 101.0, "status": 200, "cost_usd": 0.0,
                    "usage": {"prompt_tokens": prompt_tokens, "cached_tokens": 0, "completion_tokens": 10,
                              "reasoning_tokens": 0}}
        path.write_text(json.dumps(request) + "\n" + json.dumps(response) + "\n")
        return path

    logs = [write_log(tmp_path / "a.jsonl", 100), write_log(tmp_path / "b.jsonl", 300)]
    reads, replays = [], []
    read_lines, replay_ = logfile.read_lines, sources.replay
    monkeypatch.setattr(logfile, "read_lines",
                        lambda path, *a, **k: reads.append(str(path)) or read_lines(path, *a, **k))
    monkeypatch.setattr(sources, "replay", lambda trajectory: replays.append(trajectory) or replay_(trajectory))

    episodes = [artifacts(json.loads(json.dumps(mixed)), workspace, proxy_log=log) for log in logs]
    rows: list[dict] = [{}, {}]
    for extractor in all_extractors():
        for row, episode in zip(rows, episodes):
            row.update(extractor.extract(episode))
    assert sorted(p for p in reads if p.endswith(".jsonl")) == [str(logs[0]), str(logs[1])]
    assert len(replays) == 2
    assert [row["prompt_tokens"] for row in rows] == [100, 300]
    assert all(row["context_source"] == row["usage_source"] == "proxy" for row in rows)
    assert all((row["python_calls"], row["numeric_values_printed"]) == (8, 36) for row in rows)  # one replay each


def test_missing_evidence_gives_none(workspace):
    empty = artifacts(None, workspace)
    for extractor in all_extractors():
        out = extractor.extract(empty)
        assert set(out) == set(extractor.columns)
    assert NumericOutputMetrics().extract(empty) == {"numeric_values_printed": None}
    assert PythonUseMetrics().extract(empty)["python_calls"] is None
    assert UsageMetrics().extract(empty)["total_tokens"] is None


def test_codex_and_gemini_tool_shapes(workspace):
    trajectory = {"steps": [
        {"step_id": 1, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "x1", "function_name": "shell",
                         "arguments": {"command": ["bash", "-lc", "python3 -c 'print(1)' && python3 a.py"]}}],
         "observation": {"results": [{"source_call_id": "x1", "content": "Exit code: 0\nWall time: 0.2 seconds\n"
                                                                         "Output:\n1\n"}]}},
        {"step_id": 2, "source": "agent", "message": "",
         "tool_calls": [{"tool_call_id": "x2", "function_name": "run_shell_command",
                         "arguments": {"command": "python - <<'EOF'\nprint(2, 3)\nEOF"}}],
         "observation": {"results": [{"source_call_id": "x2", "content": "Command: python - <<'EOF' ...\n"
                                                                         "Directory: (root)\nOutput: 2 3\nExit Code: 0"}]}},
    ]}
    art = artifacts(trajectory, workspace)
    assert PythonUseMetrics().extract(art)["python_calls"] == 3
    assert NumericOutputMetrics().extract(art)["numeric_values_printed"] == 3

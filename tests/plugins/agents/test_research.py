"""Deep-research agents (Dr-CiK Appendix G): the corpus tools, the ``retrieval`` agent run end to end
in a local sandbox on the scripted model (both retrievers, the three sample tasks), caps, and the
``codex-dr`` adapter's workspace, prompt and output collection without Docker."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from harness.config import AgentProfile
from harness.contracts import AgentContext
from harness.sandbox import choose_backend
from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.research.adapters import CodexDR, RetrievalAgent, check_caps
from tsagent_plugins.agents.research.tools import (BM25_DEVIATION, Bm25Retriever, Budget, CapReached, Corpus, CorpusTools,
                                           EmbeddingRetriever)
from tsagent_plugins.agents.terminal.base import ProfileError
from tsagent_plugins.tasks.drcik.research import outputs as out
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, load_tasks
from tsagent_plugins.tasks.drcik.research.episodes import CORPUS_DIR, KEY_FILE, materialize_research, score_research
from tests.support.paths import REPO

SCRIPT = REPO / "examples" / "scripts" / "retrieval-drcik.yaml"
TASKS = load_tasks(SAMPLE_DIR)
#: Modules that run only inside the sandbox: the harness process must never import them.
IN_SANDBOX = ["tsagent_plugins.agents.research.tools", "tsagent_plugins.agents.research.client",
              "tsagent_plugins.agents.research.retrieval", "bm25s"]


def _local_sandbox() -> str | None:
    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


needs_sandbox = pytest.mark.skipif(_local_sandbox() in (None, "none"), reason="no local sandbox backend here")


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory):
    ws = tmp_path_factory.mktemp("ws")
    materialize_research(TASKS, "task_42", ws, ws.parent / "key", salt="tools")
    return ws / CORPUS_DIR


# -- corpus tools (imported here only for their unit tests; the run test below checks the harness) --
def test_tools_list_read_search_and_caps(corpus_dir):
    corpus = Corpus(corpus_dir)
    assert len(corpus.ids) == 115 and corpus.ids == sorted(corpus.ids)
    logged = []
    tools = CorpusTools(corpus, Bm25Retriever(corpus), Budget(max_tool_calls=3), lambda *a: logged.append(a))
    ids = tools.list_documents()
    text = tools.read_document(ids[0] + ".md")
    assert text == text.rstrip() and text  # padding stripped
    # a query made of one document's rare words finds that document first
    words = " ".join(sorted(set(text.split()), key=len, reverse=True)[:8])
    hits = tools.search(words, k=3)
    assert hits[0].id == ids[0] and len(hits) == 3
    assert logged[-1][0] == "search" and logged[-1][2].startswith("# " + BM25_DEVIATION)
    with pytest.raises(CapReached, match="tool-call cap reached \\(3\\) before read_document"):
        tools.read_document(ids[1])


def test_unknown_document_and_token_cap(corpus_dir):
    corpus = Corpus(corpus_dir)
    tools = CorpusTools(corpus, Bm25Retriever(corpus))
    assert tools.read_document("doc_000000000000") is None
    budget = Budget(max_tokens=10)
    budget.add_tokens(10)
    with pytest.raises(CapReached, match="token cap"):
        budget.check_tokens("a model call")


def test_embedding_retriever_ranks_by_cosine(corpus_dir):
    corpus = Corpus(corpus_dir)
    target = corpus.ids[7]

    def embed(texts):  # a fake embedder: 1 on the axis of the target document's text
        return [[1.0, 0.0] if t == corpus.text(target) or t == "q" else [0.0, 1.0] for t in texts]

    retriever = EmbeddingRetriever(corpus, embed, batch=16)
    ranked = retriever.rank("q", 5)
    assert ranked[0] == (target, pytest.approx(1.0)) and len(ranked) == 5
    assert np.allclose(np.linalg.norm(retriever.matrix, axis=1), 1.0)


# -- retrieval end to end ------------------------------------------------------------------
RUNNER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from harness.config import RunSettings
    from harness.experiment import Unit
    from harness.profiles import resolve_profile
    from harness.run import execute, load_task
    from harness.store import RunStore
    spec, profile_path, script, out, budget = sys.argv[1:6]
    task = load_task(spec)
    profile = resolve_profile(profile_path)
    store = RunStore.create(Path(out))
    settings = RunSettings(sandbox="auto", episode_timeout=120, infra_retries=0, budget=json.loads(budget))
    rows = execute([Unit(task, profile, None)], store, settings, model_backend="scripted", model_options={"script": script})
    loaded = sorted(m for m in sys.modules if m.startswith("tsagent_plugins.agents.research") or m == "bm25s")
    print(json.dumps({"rows": rows, "modules": loaded}, default=str))
""")


def run_episodes(tmp_path: Path, profile: dict, episodes: list[str] | None = None, script: Path = SCRIPT,
                 budget: dict | None = None) -> dict:
    spec = tmp_path / "spec.yaml"
    params = {"episode_kind": "research", "tasks": "sample",
              "metadata": {"method": "retrieval", "type": "agentic", "base_model": "scripted"}}
    if episodes:
        params["episodes"] = episodes
    spec.write_text(json.dumps({"name": "research", "template": "drcik", "params": params}))
    profile_path = tmp_path / "p.yaml"
    profile_path.write_text(json.dumps({"name": "p", "agent": "retrieval", "provider": "openrouter",
                                        "model": "google/gemini-3-flash-preview",
                                        "prices": {"input": 0.5, "cached": 0.05, "output": 3}, **profile}))
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(spec), str(profile_path), str(script),
                           str(tmp_path / "run"), json.dumps(budget or {})], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["root"] = tmp_path / "run" / "episodes"
    return result


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["embeddings", "bm25"])
def test_retrieval_agent_on_the_sample_tasks(tmp_path, retriever):
    result = run_episodes(tmp_path, {"options": {"retriever": retriever, "top_k": 5, "max_tool_calls": 5,
                                                 "max_tokens": 500000}})
    # the agent's own modules ran in the sandbox only
    assert [m for m in result["modules"] if m in IN_SANDBOX] == []
    rows = result["rows"]
    assert sorted(r["benchmark_id"] for r in rows) == ["task_163", "task_201", "task_42"]
    for row in rows:
        assert row["episode"].startswith(f"research_{row['benchmark_id']}-") and row["episode_kind"] == "research"
        assert row["template"] == "drcik" and row["profile"] == "p"
        assert row["status"] == "ok", row["error"]
        assert row["sandbox"] != "none"
        assert json.loads(row["assertion_failures"]) == []
        assert row["evidence_items"] == 2 and row["cited_documents"] == 3 and row["hallucinated_ids"] == 1
        assert row["agent_iterations"] == 1 and row["tool_calls"] == 2  # one synthesis call; search + submit
        root = result["root"] / row["episode"]
        key = json.loads((root / "key" / KEY_FILE).read_text())
        exported = json.loads((root / "key" / out.DEEP_RESEARCH_FILE).read_text())
        assert out.validate_deep_research_row(exported, key["documents"]) == []
        assert exported["benchmark_id"] == key["benchmark_id"]
        evidence = json.loads((root / "workspace" / "evidence.json").read_text())
        cited = [i for item in evidence for i in item["cited_document_ids"]]
        assert all(i in key["ids"] for i in cited[:3]) and cited[3] not in key["ids"]  # 3 real ids, 1 made up
        assert not (root / "workspace" / CORPUS_DIR).exists()  # removed after scoring (keep_corpus: false)
        assert exported["cited_document_ids"] == [key["ids"][i] for i in cited[:3]]
        report = (root / "workspace" / "report.md").read_text()
        assert "# Research report" in report
        assert (BM25_DEVIATION in report) == (retriever == "bm25")
        # ATIF: the prompt, the search with its result, the synthesis call with its usage
        traj = json.loads((root / "trajectory.json").read_text())
        validate_trajectory(traj)
        assert traj["steps"][0]["source"] == "user"
        assert traj["steps"][0]["message"] == (root / "workspace" / "task.md").read_text()
        search = next(s for s in traj["steps"] if (s.get("extra") or {}).get("kind") == "tool")
        assert search["tool_calls"][0]["function_name"] == "search"
        assert cited[0] in search["observation"]["results"][0]["content"]
        synthesis = traj["steps"][-1]
        assert synthesis["tool_calls"][0]["function_name"] == "submit_research"
        assert synthesis["metrics"]["prompt_tokens"] == 9000 and synthesis["metrics"]["completion_tokens"] == 300
        assert traj["extra"]["stop_reason"] == "complete" and traj["extra"]["retriever"] == retriever
        assert re.fullmatch(r"[0-9a-f-]{36}", traj["session_id"])
        assert traj["agent"]["model_name"] == "google/gemini-3-flash-preview"
        assert (traj["extra"].get("deviation") == BM25_DEVIATION) == (retriever == "bm25")
        embeddings = [s for s in traj["steps"] if (s.get("extra") or {}).get("kind") == "embeddings"]
        assert bool(embeddings) == (retriever == "embeddings")
        # token totals: every call (embeddings included) as the proxy counted them
        assert traj["final_metrics"]["total_prompt_tokens"] == row["prompt_tokens"]
        assert traj["final_metrics"]["extra"]["token_source"] == "cli"
        assert row["prompt_tokens"] > 9000 if retriever == "embeddings" else row["prompt_tokens"] == 9000


@needs_sandbox
@pytest.mark.slow
def test_a_token_cap_stops_the_agent_and_what_it_wrote_is_scored(tmp_path):
    result = run_episodes(tmp_path, {"options": {"retriever": "embeddings", "max_tokens": 100}}, ["task_42"])
    [row] = result["rows"]
    assert row["status"] == "ok" and row["evidence_items"] == 0
    assert "empty evidence list" in row["output_reason"]
    root = result["root"] / row["episode"]
    traj = json.loads((root / "trajectory.json").read_text())
    assert traj["extra"]["stop_reason"].startswith("token cap reached")
    assert "Stopped early: token cap reached" in (root / "workspace" / "report.md").read_text()
    assert json.loads((root / "key" / out.DEEP_RESEARCH_FILE).read_text())["evidence"] == []


@needs_sandbox
@pytest.mark.slow
def test_a_proxy_budget_refusal_is_a_recorded_reason_and_the_outputs_are_scored(tmp_path):
    result = run_episodes(tmp_path, {"options": {"retriever": "embeddings"}}, ["task_42"], budget={"max_requests": 1})
    [row] = result["rows"]
    assert row["status"] == "failed" and row["error_kind"] == "budget_exceeded"
    assert row["evidence_items"] == 0 and "empty evidence list" in row["output_reason"]  # still scored
    root = result["root"] / row["episode"]
    traj = json.loads((root / "trajectory.json").read_text())
    assert "budget exceeded" in traj["extra"]["stop_reason"]
    assert json.loads((root / "key" / out.DEEP_RESEARCH_FILE).read_text())["evidence"] == []


@needs_sandbox
@pytest.mark.slow
def test_malformed_agent_output_is_a_reason_and_the_run_continues(tmp_path):
    script = tmp_path / "bad.yaml"
    script.write_text(json.dumps({"turns": [  # each episode's synthesis call gets this turn
        {"tool_calls": [{"name": "submit_research", "arguments": {"report": "", "evidence": [
            {"claim": "ok", "cited_document_ids": ["{{id:0}}", "../../key/research_key.json"]}, 7,
            {"claim": {"nested": True}, "cited_document_ids": ["{{id:1}}"]}]}}]}]}))
    result = run_episodes(tmp_path, {"options": {"retriever": "bm25"}}, ["task_42", "task_201"], script=script)
    rows = result["rows"]
    assert len(rows) == 2  # the first episode's bad output did not stop the run
    for row in rows:
        assert row["status"] == "ok"
        assert row["evidence_items"] == 1 and row["cited_documents"] == 1 and row["hallucinated_ids"] == 1
        assert "evidence.json[1]: not an object, dropped" in row["output_reason"]
        assert "evidence.json[2].claim: missing or not a non-empty string" in row["output_reason"]
        root = result["root"] / row["episode"]
        assert out.validate_deep_research_row(json.loads((root / "key" / out.DEEP_RESEARCH_FILE).read_text())) == []


def test_retrieval_adapter_command_and_profile_errors():
    ctx = AgentContext("/workspace", "/home/agent", "prompt",
                       AgentProfile(name="p", agent="retrieval", model="m", options={"retriever": "bm25"}),
                       {"corpus_dir": "corpus"}, "http://127.0.0.1:9")
    inv = RetrievalAgent().command(ctx)
    assert inv.argv[1:3] == ["-m", "tsagent_plugins.agents.research.retrieval"]
    config = json.loads(inv.argv[-1])
    assert config["retriever"] == "bm25" and config["base_url"] == "http://127.0.0.1:9"
    assert config["log"] == "/home/agent/research/steps.jsonl"
    assert RetrievalAgent.image_capable is False
    bad = AgentContext("/workspace", "/home/agent", "p",
                       AgentProfile(name="p", agent="retrieval", model="m", options={"retriever": "tfidf"}),
                       {}, "http://x")
    with pytest.raises(ProfileError, match="options.retriever"):
        RetrievalAgent().command(bad)


def test_no_in_sandbox_module_is_imported_by_the_plugin_registry():
    code = ("import sys; from harness import plugins as r; r.get('agent', 'retrieval'); r.get('agent', 'codex-dr');"
            "r.get('task_template', 'drcik');"
            "print([m for m in sys.modules if m in %r])" % IN_SANDBOX)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- codex-dr without Docker ------------------------------------------------------------------
CODEX_FIXTURE = REPO / "tests" / "fixtures" / "native_logs" / "codex" / "direct"


def codex_profile(**options):
    return AgentProfile(name="codex-dr-gpt-5.5", agent="codex-dr", provider="openai", model="gpt-5.5",
                        reasoning_effort="high", options=options)


def test_codex_dr_workspace_prompt_and_output_collection(tmp_path):
    ws, key_dir = tmp_path / "workspace", tmp_path / "key"
    materialized = materialize_research(TASKS, "task_201", ws, key_dir)
    ctx = AgentContext("/workspace", "/home/agent", materialized.prompt,
                       codex_profile(max_tool_calls=3, max_tokens=1000), materialized.task_info,
                       "http://127.0.0.1:7")
    inv = CodexDR().command(ctx)
    # the research prompt is Codex's prompt; the caps are not passed to the CLI
    assert inv.argv[-1] == materialized.prompt and inv.argv[-2] == "--"
    assert "codex" in inv.argv and "exec" in inv.argv and "model_reasoning_effort=high" in inv.argv
    script, (config_toml, caps_content) = inv.argv[2], inv.argv[4:6]
    assert "/home/agent/.codex/config.toml" in script and "/home/agent/research/caps.json" in script
    assert json.loads(caps_content) == {"max_tool_calls": 3, "max_tokens": 1000}
    assert 'model = "gpt-5.5"' in config_toml and "max_tool_calls" not in config_toml
    assert inv.cwd == "/workspace"
    with pytest.raises(ProfileError, match="options.max_tokens"):
        CodexDR().command(AgentContext("/workspace", "/home/agent", "p", codex_profile(max_tokens=-1), {}, "http://x"))

    # the CLI ran (a real Codex rollout) and left both outputs in the workspace
    home = tmp_path / "home"
    shutil.copytree(CODEX_FIXTURE / "home", home)
    (home / "research").mkdir()
    (home / "research" / "caps.json").write_text(caps_content)
    key = json.loads((key_dir / KEY_FILE).read_text())
    ids = sorted(key["ids"])[:2]
    (ws / "report.md").write_text("# Findings\n")
    (ws / "evidence.json").write_text(json.dumps([{"claim": "c", "cited_document_ids": ids}]))
    traj = CodexDR().trajectory(home, (CODEX_FIXTURE / "agent.stdout").read_text(), CODEX_FIXTURE / "proxy.jsonl")
    validate_trajectory(traj)
    assert traj["agent"]["name"] == "codex-dr" and traj["agent"]["version"] == "0.124.0"
    assert traj["extra"]["caps"] == {"max_tool_calls": 3, "max_tokens": 1000}
    assert traj["extra"]["stop_reason"].startswith("token cap exceeded")  # the fixture used > 1000 tokens
    score = score_research(ws, key_dir)
    assert score.metrics["evidence_ok"] and score.metrics["cited_documents"] == 2
    assert json.loads((key_dir / out.DEEP_RESEARCH_FILE).read_text())["cited_document_ids"] == \
        [key["ids"][i] for i in ids]


def test_check_caps():
    traj = {"steps": [{"tool_calls": [{}, {}]}, {"tool_calls": [{}]}],
            "final_metrics": {"total_prompt_tokens": 50, "total_completion_tokens": 10}}
    assert check_caps(traj, 3, 60) is None
    assert check_caps(traj, 2, None) == "tool-call cap exceeded (3 > 2)"
    assert check_caps(traj, None, 59) == "token cap exceeded (60 > 59)"


def test_trace_of_a_killed_agent_keeps_its_steps(tmp_path):
    from tsagent_plugins.agents.research.trace import trajectory

    log = tmp_path / "research" / "steps.jsonl"
    log.parent.mkdir()
    events = [{"type": "user", "ts": "2026-01-01T00:00:00+00:00", "message": "prompt"},
              {"type": "note", "session_id": "s-1", "retriever": "bm25", "deviation": BM25_DEVIATION},
              {"type": "tool", "name": "search", "arguments": {"query": "q"}, "result": "[doc_aaaaaaaaaaaa]"},
              {"type": "model", "model": "m", "message": "", "usage": {"prompt_tokens": 10, "completion_tokens": 2},
               "tool_calls": [{"id": "c", "function": {"name": "submit_research", "arguments": "{\"evidence\": []}"}}]}]
    log.write_text("\n".join(json.dumps(e) for e in events) + "\nnot json\n{\"type\": \"tool\", \"name\"")
    traj = trajectory("retrieval", "1", tmp_path, None)
    validate_trajectory(traj)
    assert traj["session_id"] == "s-1" and traj["agent"]["model_name"] == "m"
    assert [s["source"] for s in traj["steps"]] == ["user", "agent", "agent"]
    assert traj["steps"][1]["llm_call_count"] == 0 and "llm_call_count" not in traj["steps"][2]
    assert traj["steps"][2]["tool_calls"][0]["arguments"] == {"evidence": []}
    assert traj["extra"]["stop_reason"] == "the agent ended without a stop record (killed or crashed)"
    assert traj["extra"]["deviation"] == BM25_DEVIATION
    assert traj["final_metrics"]["total_prompt_tokens"] == 10
    assert trajectory("retrieval", "1", tmp_path / "none", None) is None


def test_trace_of_a_hostile_step_log_is_a_reason_not_an_exception(tmp_path, monkeypatch):
    from harness import untrusted
    from tsagent_plugins.agents.research.trace import trajectory
    from tsagent_plugins.agents.terminal import base

    log = tmp_path / "research" / "steps.jsonl"
    log.parent.mkdir()
    deep = "[" * 100_000 + "]" * 100_000
    log.write_text(json.dumps({"type": "user", "message": "prompt"}) + "\n" + deep + "\n"
                   + '{"type": "tool", "name": "search", "result": "r"}\n')
    traj = trajectory("retrieval", "1", tmp_path, None)
    assert [s["source"] for s in traj["steps"]] == ["user", "agent"]  # the too-deep line is skipped
    monkeypatch.setattr(base, "NATIVE_LOG_BOUNDS", untrusted.Bounds(max_bytes=100))
    traj = trajectory("retrieval", "1", tmp_path, None)
    assert traj["steps"] == []
    assert "step log not read" in traj["notes"] and "larger than the 100-byte bound" in traj["notes"]


def test_dispatch_steps_never_get_metrics_even_when_the_proxy_calls_line_up():
    """A tool step (llm_call_count 0) and a model step, with exactly two conversational proxy calls: the
    tool step once took the first call's metrics, which ATIF-v1.6 forbids.  Now only the model step is
    matched (to the first call), and an embeddings step keeps its counts in ``extra.usage``."""
    from harness.wire import Usage
    from harness.testing.agent import atif_problems
    from tsagent_plugins.agents.terminal.atif import TrajectoryBuilder
    from tsagent_plugins.agents.terminal.proxylog import ProxyCall

    builder = TrajectoryBuilder("drbench", "1")
    builder.user("task")
    tool = builder.agent("", extra={"kind": "tool"})
    tool["llm_call_count"] = 0
    builder.observe(builder.tool_call(tool, None, "search", {"query": "q"}), "hits")
    builder.agent("answer", usage=Usage(100, 0, 10, 0))
    embed = builder.agent("", usage=Usage(7, 0, 0, 0), extra={"kind": "embeddings"})
    embed["llm_call_count"] = 0
    calls = [ProxyCall(k, 1.0 + k, "POST", "/v1/chat/completions", "openai", "m", True, {},
                       status=200, usage=Usage(100, 0, 10, 0), cost_usd=0.5) for k in (1, 2)]
    doc = builder.build(calls)
    assert atif_problems(doc) == []
    steps = doc["steps"]
    assert "metrics" not in steps[1] and "metrics" not in steps[3]
    assert steps[2]["metrics"]["prompt_tokens"] == 100 and steps[2]["extra"]["proxy_seq"] == 1
    assert steps[3]["extra"]["usage"]["prompt_tokens"] == 7
    bad = {**doc, "steps": [*steps[:1], {**steps[1], "metrics": {"prompt_tokens": 1}}, *steps[2:]]}
    assert atif_problems(bad)[0].startswith("steps.1: Field 'metrics' must be absent when llm_call_count is 0 "
                                            "(deterministic dispatch on a 'source: agent' step)")


def test_a_dr_agent_whose_extra_is_missing_is_refused_with_its_install_command(monkeypatch):
    import importlib.util

    import harness

    opendr = harness.plugins.get("agent", "opendr")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "langgraph" else real(name, *a))
    assert opendr.refusal(None) == "needs langgraph, which is not installed: pip install -e '.[dr]'"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    assert opendr.refusal(None) == ("needs langgraph, open_deep_research, which are not installed: "
                                    "pip install -e '.[dr]'; pip install --no-deps open-deep-research==0.0.16")
    assert harness.plugins.get("agent", "drbench").refusal(None) is None
    monkeypatch.undo()
    assert opendr.refusal(None) is None


def test_opendr_rows_record_the_upstream_version(tmp_path):
    """Every opendr row names the upstream it followed: the version the agent read at run time (trajectory
    extra.upstream), else the installed one (an agent that stopped before recording it), and the paper's
    GitHub-as-of-2026-05-07 version; other agents' rows leave both null.  The columns are declared (the schema)."""
    from importlib import metadata

    import harness.plugins
    from harness.columns import agent_episode_columns
    from harness.contracts import EpisodeArtifacts
    from tsagent_plugins.agents.research.adapters import UpstreamColumns

    extractor = harness.plugins.get("metric_extractor", "agent-upstream")
    assert isinstance(extractor, UpstreamColumns)
    assert agent_episode_columns()["upstream"][0] == agent_episode_columns()["upstream_paper"][0] == "str"

    def values(agent, trajectory):
        profile = AgentProfile(name="p", agent=agent, provider="openrouter", model="m")
        return extractor.extract(EpisodeArtifacts(trajectory, None, tmp_path, profile))

    ran = values("opendr", {"extra": {"upstream": "open-deep-research 0.0.16", "stop_reason": "complete"}})
    assert ran["upstream"] == "open-deep-research 0.0.16"
    assert "GitHub repository as of 2026-05-07" in ran["upstream_paper"]
    try:
        installed = f"open-deep-research {metadata.version('open-deep-research')}"
    except metadata.PackageNotFoundError:
        installed = "open-deep-research not installed"
    crashed = values("opendr", None)
    assert crashed["upstream"] == installed and crashed["upstream_paper"] == ran["upstream_paper"]
    assert values("drbench", {"extra": {"upstream": "x"}}) == {"upstream": None, "upstream_paper": None}
    assert values("no-such-agent", None) == {"upstream": None, "upstream_paper": None}

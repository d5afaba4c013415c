"""The iterative DR agents of Dr-CiK Appendix G (``drbench``, ``opendr``, ``bench2future``) run end to
end in a local sandbox on the scripted model: valid outputs citing existing documents on the three
sample tasks, stage / node order in the trajectory, limits honoured, malformed structured output
retried with the reason recorded, profile validation."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from harness.config import AgentProfile
from harness.contracts import AgentContext
from harness.sandbox import choose_backend
from harness.trajectory import validate_trajectory
from tsagent_plugins.agents.research.adapters import LIMITS, Bench2FutureAgent, DrBenchAgent, OpenDRAgent
from tsagent_plugins.agents.terminal.base import ProfileError
from tsagent_plugins.tasks.drcik.research.episodes import CORPUS_DIR
from tests.support.paths import REPO

SCRIPTS = REPO / "examples" / "scripts"
#: Modules that run only inside the sandbox: the harness process must never import them.
IN_SANDBOX = ["tsagent_plugins.agents.research.episode", "tsagent_plugins.agents.research.drbench",
              "tsagent_plugins.agents.research.opendr", "tsagent_plugins.agents.research.bench2future", "langgraph"]


def _local_sandbox() -> str | None:
    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


def _missing(*modules: str) -> list[str]:
    import importlib.util

    return [m for m in modules if importlib.util.find_spec(m) is None]


# the agents run the host's Python in the sandbox: the tests search with bm25s, opendr needs langgraph
needs_sandbox = pytest.mark.skipif(_local_sandbox() in (None, "none") or bool(_missing("bm25s", "langgraph")),
                                   reason="no local sandbox backend here, or the dr extra (bm25s, langgraph) "
                                          "is not installed")

RUNNER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from harness.config import RunSettings
    from harness.experiment import Unit
    from harness.profiles import resolve_profile
    from harness.run import execute, load_task
    from harness.store import RunStore
    spec, profile_path, script, out = sys.argv[1:5]
    task = load_task(spec)
    profile = resolve_profile(profile_path)
    store = RunStore.create(Path(out))
    settings = RunSettings(sandbox="auto", episode_timeout=180, infra_retries=0)
    script = json.loads(script) if script.startswith("{") else script
    rows = execute([Unit(task, profile, None)], store, settings, model_backend="scripted", model_options={"script": script})
    loaded = sorted(m for m in sys.modules if m.startswith("tsagent_plugins.agents.research") or m == "langgraph")
    print(json.dumps({"rows": rows, "modules": loaded}, default=str))
""")


def run(tmp_path: Path, agent: str, options: dict, script: Path | dict, episodes: list[str] | None = None) -> dict:
    params = {"episode_kind": "research", "tasks": "sample", "metadata": {"method": agent, "type": "agentic", "base_model": "scripted"}}
    if episodes:
        params["episodes"] = episodes
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "spec.yaml"
    spec.write_text(json.dumps({"name": "research", "template": "drcik", "params": params}))
    profile = tmp_path / "p.yaml"
    profile.write_text(json.dumps({"name": "p", "agent": agent, "provider": "openrouter",
                                   "model": "google/gemini-3-flash-preview",
                                   "prices": {"input": 0.5, "cached": 0.05, "output": 3}, "options": options}))
    arg = json.dumps(script) if isinstance(script, dict) else str(script)
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(spec), str(profile), arg, str(tmp_path / "run")],
                          capture_output=True, text=True, timeout=900, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    # the agents' own modules (and langgraph) ran in the sandbox only
    assert [m for m in data["modules"] if m in IN_SANDBOX] == []
    rows = data["rows"]
    out = {"rows": {r["benchmark_id"]: r for r in rows}, "run": tmp_path / "run"}
    out["run_json"] = json.loads((tmp_path / "run" / "run.json").read_text())
    return out


def episode_dir(result: dict, task: str) -> Path:
    return result["run"] / "episodes" / result["rows"][task]["episode"]


def trajectory(result: dict, task: str) -> dict:
    doc = json.loads((episode_dir(result, task) / "trajectory.json").read_text())
    validate_trajectory(doc)
    return doc


#: agent -> (script, retriever, expected (evidence items, cited existing documents, hallucinated ids))
CASES = {
    "drbench": ("drbench-drcik.yaml", "bm25", (2, 3, 1)),   # S999 names no brief: one hallucinated id
    "opendr": ("opendr-drcik.yaml", "bm25", (2, 2, 1)),
    "bench2future": ("bench2future-drcik.yaml", "embeddings", (2, 3, 1)),
}
#: The ids the scripts cite that name no document (the hallucinated ones): drbench's unresolved ``S999``
#: marker stays in evidence.json as written (Appendix I.1), the others cite an invented document id.
INVENTED_IDS = {"doc_000000000000", "S999"}


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(CASES))
def test_agent_on_the_three_sample_tasks(tmp_path, agent):
    script, retriever, (items, cited, hallucinated) = CASES[agent]
    result = run(tmp_path, agent, {"retriever": retriever, "top_k": 3}, SCRIPTS / script)
    assert sorted(result["rows"]) == ["task_163", "task_201", "task_42"]
    # every limit, default or given, reaches the agent; the profile's options are in run.json
    assert result["run_json"]["profiles"]["p"]["options"] == {"retriever": retriever, "top_k": 3}
    for task, row in result["rows"].items():
        assert row["status"] == "ok", row["error"]
        assert row["sandbox"] != "none"
        assert json.loads(row["assertion_failures"]) == []
        assert (row["evidence_items"], row["cited_documents"], row["hallucinated_ids"]) == (items, cited, hallucinated)
        root = episode_dir(result, task)
        evidence = json.loads((root / "workspace" / "evidence.json").read_text())
        corpus = {p.name[:-3] for p in (root / "workspace" / CORPUS_DIR).glob("*.md")} or None
        cited_ids = {i for item in evidence for i in item["cited_document_ids"]} - INVENTED_IDS
        if corpus is not None:  # the corpus copy may have been removed after scoring
            assert cited_ids <= corpus
        assert len(cited_ids) == cited
        report = (root / "workspace" / "report.md").read_text()
        assert report.startswith("_") and "# Research report" in report
        doc = trajectory(result, task)
        assert doc["extra"]["stop_reason"] == "complete"
        assert doc["extra"]["limits"] == {**LIMITS[agent], "top_k": 3, "max_tool_calls": None, "max_tokens": None}
        assert all((s.get("extra") or {}).get("stage") for s in doc["steps"] if s["source"] == "agent")


@needs_sandbox
@pytest.mark.slow
def test_drbench_stage_order_and_iteration_limit(tmp_path):
    result = run(tmp_path / "a", "drbench", {"retriever": "bm25", "top_k": 3}, SCRIPTS / "drbench-drcik.yaml",
                 ["task_42"])
    stages = trajectory(result, "task_42")["extra"]["stages"]
    assert stages[:3] == ["query_enrichment", "research_plan", "local_search"]
    assert stages[-2:] == ["synthesis", "citation_resolution"]
    assert stages.count("adaptive_replanning") == 2  # the script says done at the second re-plan
    assert all(stages[k - 1] == "local_search" for k, s in enumerate(stages) if s == "document_brief")
    # max_iterations: 1 -> one search round, no re-planning, the limit is recorded
    limited = run(tmp_path / "b", "drbench", {"retriever": "bm25", "top_k": 3, "max_iterations": 1},
                  SCRIPTS / "drbench-drcik.yaml", ["task_42"])
    doc = trajectory(limited, "task_42")
    assert "adaptive_replanning" not in doc["extra"]["stages"]
    assert doc["extra"]["tool_calls"] == 2  # the plan's two searches
    assert any(n.startswith("iteration limit reached (1)") for n in doc["extra"]["notes"])
    assert limited["rows"]["task_42"]["status"] == "ok"


@needs_sandbox
@pytest.mark.slow
def test_drbench_tool_call_cap_keeps_the_outputs(tmp_path):
    result = run(tmp_path, "drbench", {"retriever": "bm25", "top_k": 3, "max_tool_calls": 1},
                 SCRIPTS / "drbench-drcik.yaml", ["task_42"])
    row = result["rows"]["task_42"]
    doc = trajectory(result, "task_42")
    assert row["status"] == "ok" and doc["extra"]["tool_calls"] == 1
    assert doc["extra"]["stop_reason"] == "tool-call cap reached (1) before search"
    assert "Briefs gathered" in (episode_dir(result, "task_42") / "workspace" / "report.md").read_text()


OPENDR_ORDER = (["clarify_with_user", "write_research_brief", "supervisor", "supervisor_tools"]
                + (["researcher", "researcher_tools"] * 3 + ["compress_research", "supervisor_tools"]) * 2
                + ["supervisor", "supervisor_tools", "final_report_generation"])


@needs_sandbox
@pytest.mark.slow
def test_opendr_node_order_and_limits(tmp_path):
    result = run(tmp_path / "a", "opendr", {"retriever": "bm25", "top_k": 3}, SCRIPTS / "opendr-drcik.yaml",
                 ["task_42"])
    assert trajectory(result, "task_42")["extra"]["stages"] == OPENDR_ORDER
    # one research unit at a time, one ReAct round per researcher: the second topic is refused
    limited = run(tmp_path / "b", "opendr", {"retriever": "bm25", "top_k": 3, "max_concurrent_research_units": 1,
                                             "max_react_tool_calls": 1}, SCRIPTS / "opendr-drcik.yaml", ["task_42"])
    doc = trajectory(limited, "task_42")
    assert doc["extra"]["stages"] == (["clarify_with_user", "write_research_brief", "supervisor", "supervisor_tools",
                                       "researcher", "researcher_tools", "compress_research", "supervisor_tools",
                                       "supervisor", "supervisor_tools", "final_report_generation"])
    assert doc["extra"]["tool_calls"] == 1  # one search, no read
    assert any("max_concurrent_research_units (1)" in n for n in doc["extra"]["notes"])
    assert limited["rows"]["task_42"]["status"] == "ok"
    # every opendr row names the upstream it followed (a declared column, not only the trajectory's extra)
    row = result["rows"]["task_42"]
    assert row["upstream"] == "open-deep-research 0.0.16" and "2026-05-07" in row["upstream_paper"]


def _malformed_once(agent: str) -> dict:
    """The agent's example script with one structured answer malformed once (then the valid one)."""
    script = yaml.safe_load((SCRIPTS / CASES[agent][0]).read_text())
    if agent == "bench2future":
        script["turns"].insert(0, {"tool_calls": [{"name": "act", "arguments": {"thought": "no outline, no action"}}]})
        return script
    name = {"drbench": "submit_report", "opendr": "ResearchQuestion"}[agent]
    rule = next(r for r in script["match"] if r["when"].get("body_path", {}).get("tool_choice.function.name") == name)
    script["match"].remove(rule)
    bad = copy.deepcopy(rule["reply"])
    bad["tool_calls"][0]["arguments"] = {"report": 42} if agent == "drbench" else "{not json"
    script["turns"] = [bad, rule["reply"]]
    return script


@needs_sandbox
@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(CASES))
def test_malformed_structured_output_once_is_retried(tmp_path, agent):
    result = run(tmp_path, agent, {"retriever": "bm25", "top_k": 3}, _malformed_once(agent), ["task_42"])
    row = result["rows"]["task_42"]
    assert row["status"] == "ok", row["error"]
    assert row["evidence_items"] == 2
    doc = trajectory(result, "task_42")
    assert doc["extra"]["stop_reason"] == "complete"
    notes = [n for n in doc["extra"]["notes"] if n.startswith("malformed structured output")]
    assert len(notes) == 1 and "(attempt 1/3)" in notes[0]


@needs_sandbox
@pytest.mark.slow
def test_structured_output_malformed_every_time_stops_with_the_reason(tmp_path):
    script = _malformed_once("drbench")
    script["turns"] = [script["turns"][0]] * 3
    result = run(tmp_path, "drbench", {"retriever": "bm25", "top_k": 3, "max_structured_output_retries": 3},
                 script, ["task_42"])
    row = result["rows"]["task_42"]
    doc = trajectory(result, "task_42")
    assert row["status"] == "ok" and row["evidence_items"] == 0
    assert doc["extra"]["stop_reason"].startswith("malformed structured output: submit_report: field 'report'")


@pytest.mark.parametrize("agent", [DrBenchAgent(), OpenDRAgent(), Bench2FutureAgent()], ids=lambda a: a.name)
def test_profile_limits_validated(agent, tmp_path):
    def ctx(options):
        profile = AgentProfile(name="p", agent=agent.name, provider="openrouter", model="m", options=options)
        return AgentContext(workspace=str(tmp_path), home=str(tmp_path), prompt="", profile=profile,
                            model_base_url="http://127.0.0.1:1")
    config = agent.config(ctx({}))
    assert config["limits"] == {**LIMITS[agent.name], "max_tool_calls": None, "max_tokens": None}
    assert agent.command(ctx({})).argv[2] == f"tsagent_plugins.agents.research.{agent.name}"
    with pytest.raises(ProfileError, match="options.top_k must be a positive integer"):
        agent.config(ctx({"top_k": 0}))
    with pytest.raises(ProfileError, match="options.max_rounds is not understood"):
        agent.config(ctx({"max_rounds": 2}))
    if agent.name == "opendr":
        with pytest.raises(ProfileError, match="allow_clarification must be false"):
            agent.config(ctx({"allow_clarification": True}))


def test_drbench_deferred_citation_resolution():
    from tsagent_plugins.agents.research.drbench import _resolve_report, resolve_citations

    sources = ["doc_aaaaaaaaaaaa", "doc_bbbbbbbbbbbb"]
    evidence, unresolved = resolve_citations(
        [{"claim": "a", "sources": ["S1", "[S2]", "2"]}, {"claim": "b", "sources": ["S3", "S0", "x"]}], sources)
    # unresolved markers stay cited as written: the harness counts them as hallucinated ids (Appendix I.1)
    assert evidence == [{"claim": "a", "cited_document_ids": sources},
                        {"claim": "b", "cited_document_ids": ["S3", "S0", "x"]}]
    assert unresolved == ["S3", "S0", "x"]
    assert _resolve_report("see [S2] and [S9]", sources) == "see [doc_bbbbbbbbbbbb] and [S9]"


def test_a_drbench_episode_with_an_unresolved_s999_scores_one_hallucinated_id(tmp_path):
    """The DrBench synthesis cites S1, S2 and S999 with two briefs: scoring sees one hallucinated id."""
    from tsagent_plugins.agents.research.drbench import resolve_citations
    from tsagent_plugins.tasks.drcik.research.outputs import read_evidence, resolve

    sources = ["doc_aaaaaaaaaaaa", "doc_bbbbbbbbbbbb"]
    evidence, _ = resolve_citations([{"claim": "a", "sources": ["S1", "S2"]}, {"claim": "b", "sources": ["S999"]}],
                                    sources)
    (tmp_path / "evidence.json").write_text(json.dumps(evidence))
    items, reasons = read_evidence(tmp_path / "evidence.json")
    resolved = resolve(items, {"doc_aaaaaaaaaaaa": "r1", "doc_bbbbbbbbbbbb": "r2"})
    assert reasons == [] and (resolved.hallucinated, resolved.hallucinated_occurrences) == (1, 1)
    assert [i.dropped for i in resolved.items] == [[], ["S999"]]


def test_opendr_reads_upstream_prompts_and_limits_from_the_installed_package():
    """The rebuilt graph's prompts are open-deep-research 0.0.16's own strings (never paraphrases)."""
    pytest.importorskip("open_deep_research", reason="pip install --no-deps open-deep-research==0.0.16")
    from open_deep_research import prompts

    from tsagent_plugins.agents.research.opendr import fill, upstream

    odr = upstream()
    assert odr["version"] == "0.0.16"
    assert odr["prompts"]["supervisor"] is prompts.lead_researcher_prompt and len(odr["prompts"]["supervisor"]) == 7530
    assert odr["prompts"]["final"] is prompts.final_report_generation_prompt
    assert odr["limits"] == {"max_concurrent_research_units": 5, "max_researcher_iterations": 3,
                             "max_react_tool_calls": 5, "max_structured_output_retries": 3,
                             "allow_clarification": True}
    text = fill(odr["prompts"]["supervisor"], date="Mon Jan 5, 2026", max_concurrent_research_units=5)
    assert "{date}" not in text and "Mon Jan 5, 2026" in text and "{max_concurrent_research_units}" not in text


class _FakeEpisode:
    """Just what the opendr graph uses of a ResearchEpisode, answering like a tiny scripted model and
    recording every message list it is sent."""

    def __init__(self):
        self.limits, self.prompt, self.sent, self.stages, self.logged = {}, "TASK PROMPT", [], [], []
        self.log = type("Log", (), {"write": lambda _, kind, **data: self.logged.append((kind, data))})()
        self.tools = type("Tools", (), {"retriever": "bm25", "search": lambda *_: [],
                                        "read_document": lambda *_: None})()
        self._supervisor_calls = 0

    def stage(self, name, **_):
        self.stages.append(name)

    def chat(self, messages, tools=None, tool_choice=None):
        self.sent.append(messages)
        names = {t["function"]["name"] for t in tools or []}
        call = lambda name, args: {"content": "", "tool_calls": [  # noqa: E731
            {"id": f"c{len(self.sent)}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
        if "ConductResearch" in names:
            self._supervisor_calls += 1
            return call("ConductResearch", {"research_topic": "demand"}) if self._supervisor_calls == 1 else \
                call("ResearchComplete", {})
        if "search" in names:
            return call("ResearchComplete", {})
        return {"content": "compressed findings [doc_1]"}

    def structured(self, messages, tool, validate, extra_tools=None):
        self.sent.append(messages)
        name = tool["function"]["name"]
        return {"research_brief": "BRIEF"} if name == "ResearchQuestion" else \
            {"report": "REPORT", "evidence": [{"claim": "c", "cited_document_ids": ["doc_1"]}]}


def test_opendr_graph_runs_on_upstreams_own_prompts():
    pytest.importorskip("open_deep_research", reason="pip install --no-deps open-deep-research==0.0.16")
    from open_deep_research import prompts

    from tsagent_plugins.agents.research.opendr import CORPUS_TOOLS_PROMPT, DRCIK_OUTPUT, build

    ep, out = _FakeEpisode(), {}
    build(ep, out).invoke({}, {"recursion_limit": 20})
    assert (out["report"], out["evidence"][0]["claim"]) == ("REPORT", "c")
    brief, supervisor, researcher, compress, final = (ep.sent[0], ep.sent[1], ep.sent[2], ep.sent[3], ep.sent[-1])
    head = prompts.transform_messages_into_research_topic_prompt.split("{messages}")[0]
    assert brief[0]["content"].startswith(head) and "TASK PROMPT" in brief[0]["content"]
    assert supervisor[0]["content"].startswith(prompts.lead_researcher_prompt.split("{date}")[0])
    assert len(supervisor[0]["content"]) > 7000 and "{max_concurrent_research_units}" not in supervisor[0]["content"]
    assert CORPUS_TOOLS_PROMPT in researcher[0]["content"] and "{mcp_prompt}" not in researcher[0]["content"]
    assert compress[0]["content"].startswith(prompts.compress_research_system_prompt.split("{date}")[0])
    assert compress[-1]["content"] == prompts.compress_research_simple_human_message
    assert "BRIEF" in final[0]["content"] and "compressed findings [doc_1]" in final[0]["content"]
    assert final[0]["content"].endswith(DRCIK_OUTPUT)
    assert ("note", {"upstream": "open-deep-research 0.0.16", "upstream_limits": {
        "max_concurrent_research_units": 5, "max_researcher_iterations": 3, "max_react_tool_calls": 5,
        "max_structured_output_retries": 3, "allow_clarification": True}}) in ep.logged

"""``opendr``: LangChain's Open Deep Research (ODR) graph rebuilt on langgraph for Dr-CiK's local
corpus (Dr-CiK Appendix G "Deep-research agents": planning, retrieval through ReAct-style tool
calls, report writing).

Runs INSIDE the sandbox: ``python -m tsagent_plugins.agents.research.opendr --config JSON``.

Upstream, and why its graph is rebuilt here.  The paper ran LangChain's Open Deep Research from its
GitHub repository as of 2026-05-07, which is not reachable here; the newest release on PyPI is
``open-deep-research==0.0.16`` (2025-07-16), the version this agent follows and records in every
trajectory (``extra.upstream``) and every results row (columns ``upstream`` and ``upstream_paper``,
:class:`~tsagent_plugins.agents.research.adapters.UpstreamColumns`).  Running 0.0.16 itself in our sandbox
does not work today:

- ``import open_deep_research.deep_researcher`` fails with ``ModuleNotFoundError: No module named
  'langchain'``: the graph module imports ``langchain.chat_models.init_chat_model``, and its
  ``utils`` imports ``tavily``, ``aiohttp``, ``mcp`` and ``langchain_mcp_adapters`` at import time;
  none is in the ``dr`` extra (``bm25s``, ``langgraph``);
- its pins do resolve beside the ``dr`` extra (``pip install --dry-run open-deep-research==0.0.16
  'bm25s>=0.2' 'langgraph>=0.6'`` succeeds), but they bring 35 direct requirements and 209
  distributions in all (Azure search, Supabase, Vertex AI, Groq, DeepSeek, ``langgraph-cli[inmem]``,
  ``ipykernel``, ``pymupdf``...), none of which the agent would use;
- with ``search_api: none`` its only research tools are MCP tools from ``mcp_config``, so the corpus
  tools would have to be served by an MCP server on a loopback port inside the sandbox, and its
  models come from ``init_chat_model`` provider strings that would have to be pointed at the proxy.

Until that wiring exists, the graph below rebuilds 0.0.16's nodes on langgraph and reads upstream's
own prompt texts and limit defaults from the installed package at run time (:func:`upstream`:
``open_deep_research.prompts`` and ``Configuration``; install with
``pip install --no-deps open-deep-research==0.0.16``, the two modules need only pydantic and
langchain-core, which langgraph brings).  Nothing is paraphrased: the brief, supervisor, researcher,
compression and final-report prompts are upstream's strings, with their ``{date}``,
``{max_concurrent_research_units}``, ``{messages}``, ``{research_brief}`` and ``{findings}`` slots
filled as upstream fills them; ours are only the text in upstream's ``{mcp_prompt}`` slot
(:data:`CORPUS_TOOLS_PROMPT`: the corpus tools in place of MCP tools) and one sentence after the
final-report prompt asking for Dr-CiK's evidence items (:data:`DRCIK_OUTPUT`).  Clarification with the
user is off.

Node-by-node parity (graph ``clarify_with_user -> write_research_brief -> research_supervisor
[supervisor <-> supervisor_tools, each ConductResearch running the researcher subgraph
researcher <-> researcher_tools -> compress_research] -> final_report_generation``):

==========================  ===============================================  =================================================
node                        upstream (0.0.16)                                here
==========================  ===============================================  =================================================
clarify_with_user           asks a clarifying question when                  kept as a node; ``allow_clarification`` is
                            ``allow_clarification`` (default true)           fixed to false, so it passes straight on
write_research_brief        structured ``ResearchQuestion`` from the          same (forced ``ResearchQuestion`` tool call,
                            conversation (research-brief prompt)              bounded retries); the prompt is the task prompt
supervisor                  lead-researcher prompt; tools                    same tools + ``think_tool`` (ODR's later
                            ``ConductResearch``, ``ResearchComplete``         versions); same prompt role
supervisor_tools            exits on ``max_researcher_iterations``, no tool   same exits and overflow message; the
                            call, or ResearchComplete; runs up to             researchers of one step run one after another
                            ``max_concurrent_research_units`` researchers     (upstream: asyncio.gather) so the order of
                            with asyncio.gather; overflow answered with an    model calls, the trajectory and scripted runs
                            error message                                     are reproducible
researcher                  research prompt; tools: web search (Tavily) +    tools: the shared corpus ``search`` and
                            MCP tools                                         ``read_document``, ``think_tool``,
                                                                              ``ResearchComplete``
researcher_tools            runs the calls (errors become text); exits       same; a cap (tool calls / tokens) ends the
                            after ``max_react_tool_calls`` iterations or      whole episode with the reason
                            on ResearchComplete
compress_research           compression prompt over the researcher's          same, up to 3 attempts on a failed call
                            messages, 3 attempts
final_report_generation     final-report prompt over the brief and the       same role; the findings are in the prompt's
                            notes (plain markdown report)                     text, as upstream's prompt places them, and
                                                                              the report comes with evidence items through
                                                                              a forced ``submit_research`` call (Dr-CiK's
                                                                              ``evidence.json``)
==========================  ===============================================  =================================================

Limits (profile ``options``, defaults of ODR 0.0.16's ``Configuration``, which the agent reads at run
time and records in the trajectory's ``extra.upstream_limits``; recorded in ``run.json`` with the profile
and in the trajectory's ``extra.limits``): ``max_concurrent_research_units`` 5,
``max_researcher_iterations`` 3, ``max_react_tool_calls`` 5, ``max_structured_output_retries`` 3,
``allow_clarification`` false (upstream true: there is no user), ``top_k`` 5 (Tavily's
``max_results`` in ODR), plus the episode caps ``max_tool_calls`` and ``max_tokens``.
Malformed structured output (brief, final report) is retried with the reason fed back; a
malformed ``ConductResearch`` call is answered with an error message and the graph goes on.
"""

from __future__ import annotations

import sys
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph

from tsagent_plugins.agents.research.episode import (EVIDENCE_ITEMS, STRING, ResearchEpisode,
                                             assistant_turn, check_evidence, check_fields, function_tool,
                                             run_main, tool_calls)
from tsagent_plugins.agents.research.tools import CapReached, format_hits

LABEL = "OpenDR (LangChain Open Deep Research 0.0.16 graph rebuilt on langgraph with upstream's own prompts)"
#: The upstream distribution whose prompts and limits are read at run time (:func:`upstream`).
UPSTREAM = "open-deep-research"
UPSTREAM_VERSION = "0.0.16"
INSTALL = f"pip install --no-deps {UPSTREAM}=={UPSTREAM_VERSION}"
#: Upstream prompt variables -> the names used here (``open_deep_research.prompts``).
PROMPTS = {"brief": "transform_messages_into_research_topic_prompt", "supervisor": "lead_researcher_prompt",
           "researcher": "research_system_prompt", "compress": "compress_research_system_prompt",
           "compress_human": "compress_research_simple_human_message", "final": "final_report_generation_prompt"}
#: Limits whose defaults come from upstream's ``Configuration`` (``allow_clarification`` is overridden: no user).
UPSTREAM_LIMITS = ("max_concurrent_research_units", "max_researcher_iterations", "max_react_tool_calls",
                   "max_structured_output_retries", "allow_clarification")
#: Ours, filled into upstream's ``{mcp_prompt}`` slot (where upstream describes MCP tools): the corpus tools.
CORPUS_TOOLS_PROMPT = ("You can use the tools `search` (search the local document collection) and "
                       "`read_document` (read one document by id). Cite document ids in brackets.")
#: Ours, after upstream's final-report prompt: Dr-CiK's output (report + evidence items with citations).
DRCIK_OUTPUT = ("Then call submit_research with that report and the evidence items a forecaster needs, most "
                "important first, each citing the document ids that support it.")


def upstream() -> dict[str, Any]:
    """Upstream's prompt texts and limit defaults, read from the installed ``open_deep_research`` package:
    ``{"version", "prompts": {name: text}, "limits": {name: default}}`` (see :data:`PROMPTS`).

    Raises ImportError naming the install command when the package (or another version) is installed."""
    from importlib import metadata

    try:
        version = metadata.version(UPSTREAM)
        from open_deep_research import prompts
        from open_deep_research.configuration import Configuration
    except (ImportError, metadata.PackageNotFoundError) as exc:
        raise ImportError(f"opendr reads its prompts from {UPSTREAM} {UPSTREAM_VERSION}, which is not installed "
                          f"({exc}): {INSTALL}") from None
    if version != UPSTREAM_VERSION:
        raise ImportError(f"opendr is pinned to {UPSTREAM} {UPSTREAM_VERSION}, found {version}: {INSTALL}")
    return {"version": version, "prompts": {ours: getattr(prompts, theirs) for ours, theirs in PROMPTS.items()},
            "limits": {name: Configuration.model_fields[name].default for name in UPSTREAM_LIMITS}}


def fill(template: str, **values: Any) -> str:
    """Upstream's ``{name}`` slots filled by plain replacement (its prompts hold other literal braces)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def today() -> str:
    """The date as upstream's ``get_today_str`` writes it (``Mon Jan 5, 2026``)."""
    from datetime import datetime

    now = datetime.now()
    return f"{now:%a} {now:%b} {now.day}, {now:%Y}"

RESEARCH_QUESTION = function_tool("ResearchQuestion", "The research brief.", {"research_brief": STRING},
                                  ["research_brief"])
CONDUCT = function_tool("ConductResearch", "Research one topic (described in detail).", {"research_topic": STRING},
                        ["research_topic"])
COMPLETE = function_tool("ResearchComplete", "The research is complete.", {}, [])
THINK = function_tool("think_tool", "Reflect on progress and plan the next step.", {"reflection": STRING},
                      ["reflection"])
SEARCH = function_tool("search", "Search the local document collection.", {"query": STRING}, ["query"])
READ = function_tool("read_document", "Read one document by id.", {"document_id": STRING}, ["document_id"])
SUBMIT = function_tool("submit_research", "Submit the final report and the evidence items.",
                       {"report": STRING, "evidence": EVIDENCE_ITEMS}, ["report", "evidence"])


class AgentState(TypedDict, total=False):
    research_brief: str
    supervisor_messages: list
    research_iterations: int
    notes: list
    report: str
    evidence: list


class ResearcherState(TypedDict, total=False):
    research_topic: str
    researcher_messages: list
    tool_call_iterations: int
    compressed_research: str


def build(ep: ResearchEpisode, state_out: dict):
    """The compiled ODR graph over ``ep`` (``state_out`` keeps the report/evidence gathered so far)."""
    limits = ep.limits
    odr = upstream()
    text, date = odr["prompts"], today()
    ep.log.write("note", upstream=f"{UPSTREAM} {odr['version']}", upstream_limits=odr["limits"])  # trajectory extra
    units = int(limits.get("max_concurrent_research_units", 5))
    max_rounds = int(limits.get("max_researcher_iterations", 3))
    max_react = int(limits.get("max_react_tool_calls", 5))
    top_k = int(limits.get("top_k", 5))

    # -- researcher subgraph -----------------------------------------------------------------
    def researcher(state: ResearcherState) -> dict:
        ep.stage("researcher")
        message = ep.chat(state["researcher_messages"], tools=[SEARCH, READ, THINK, COMPLETE])
        return {"researcher_messages": state["researcher_messages"] + [assistant_turn(message)],
                "tool_call_iterations": state.get("tool_call_iterations", 0) + 1}

    def researcher_tools(state: ResearcherState) -> dict:
        ep.stage("researcher_tools")
        calls = tool_calls(state["researcher_messages"][-1])
        outputs = []
        for call_id, name, args in calls:
            outputs.append({"role": "tool", "tool_call_id": call_id, "content": run_tool(name, args)})
        return {"researcher_messages": state["researcher_messages"] + outputs}

    def run_tool(name: str, args: Any) -> str:
        if name == "ResearchComplete":
            return "Research marked complete."
        if name == "think_tool":
            return f"Reflection recorded: {args.get('reflection', '') if isinstance(args, dict) else args}"
        if not isinstance(args, dict):
            return f"Error executing tool: the arguments of {name} are not a JSON object"
        try:
            if name == "search":
                return format_hits(ep.tools.search(str(args.get("query") or ""), top_k), ep.tools.retriever)
            if name == "read_document":
                text = ep.tools.read_document(str(args.get("document_id") or ""))
                return text if text is not None else f"Error: unknown document id {args.get('document_id')!r}"
        except CapReached:
            raise
        except Exception as exc:  # noqa: BLE001 - upstream's execute_tool_safely: errors become text
            return f"Error executing tool: {exc}"
        return f"Error: no tool named {name!r}"

    def after_researcher_tools(state: ResearcherState) -> str:
        last_ai = next(m for m in reversed(state["researcher_messages"]) if m.get("role") == "assistant")
        calls = tool_calls(last_ai)
        if not calls:
            return "compress_research"
        if state.get("tool_call_iterations", 0) >= max_react or any(n == "ResearchComplete" for _, n, _ in calls):
            return "compress_research"
        return "researcher"

    def after_researcher(state: ResearcherState) -> str:
        return "researcher_tools" if tool_calls(state["researcher_messages"][-1]) else "compress_research"

    def compress_research(state: ResearcherState) -> dict:
        ep.stage("compress_research")
        messages = [{"role": "system", "content": fill(text["compress"], date=date)}] + \
            state["researcher_messages"][1:] + [{"role": "user", "content": text["compress_human"]}]
        for attempt in range(1, 4):
            try:
                message = ep.chat(messages)
                return {"compressed_research": str(message.get("content") or "")}
            except CapReached:
                raise
            except Exception as exc:  # noqa: BLE001 - upstream retries compression 3 times
                ep.note(f"compress_research attempt {attempt}/3 failed: {exc}")
        return {"compressed_research": "Error synthesizing research report: Maximum retries exceeded"}

    rb = StateGraph(ResearcherState)
    rb.add_node("researcher", researcher)
    rb.add_node("researcher_tools", researcher_tools)
    rb.add_node("compress_research", compress_research)
    rb.add_edge(START, "researcher")
    rb.add_conditional_edges("researcher", after_researcher, ["researcher_tools", "compress_research"])
    rb.add_conditional_edges("researcher_tools", after_researcher_tools, ["researcher", "compress_research"])
    rb.add_edge("compress_research", END)
    researcher_graph = rb.compile()

    # -- supervisor subgraph -----------------------------------------------------------------
    def supervisor(state: AgentState) -> dict:
        ep.stage("supervisor")
        message = ep.chat(state["supervisor_messages"], tools=[CONDUCT, COMPLETE, THINK])
        return {"supervisor_messages": state["supervisor_messages"] + [assistant_turn(message)],
                "research_iterations": state.get("research_iterations", 0) + 1}

    def supervisor_tools(state: AgentState) -> dict:
        ep.stage("supervisor_tools")
        calls = tool_calls(state["supervisor_messages"][-1])
        if (state.get("research_iterations", 0) >= max_rounds or not calls
                or any(n == "ResearchComplete" for _, n, _ in calls)):
            if state.get("research_iterations", 0) >= max_rounds and calls:
                ep.note(f"supervisor stopped at max_researcher_iterations ({max_rounds})",
                        limit="max_researcher_iterations")
            return {"notes": notes_of(state["supervisor_messages"])}
        outputs, launched = [], 0
        for call_id, name, args in calls:
            if name == "think_tool":
                reflection = args.get("reflection", "") if isinstance(args, dict) else args
                outputs.append({"role": "tool", "tool_call_id": call_id, "content": f"Reflection recorded: {reflection}"})
            elif name == "ConductResearch":
                problem = check_fields(args, {"research_topic": str})
                if problem:
                    ep.note(f"malformed ConductResearch call: {problem}")
                    outputs.append({"role": "tool", "tool_call_id": call_id,
                                    "content": f"Error: malformed ConductResearch call ({problem})"})
                elif launched >= units:
                    ep.note(f"ConductResearch beyond max_concurrent_research_units ({units}) not run",
                            limit="max_concurrent_research_units")
                    outputs.append({"role": "tool", "tool_call_id": call_id, "content": (
                        f"Error: Did not run this research as you have already exceeded the maximum number of "
                        f"concurrent research units. Please try again with {units} or fewer research units.")})
                else:
                    launched += 1
                    result = researcher_graph.invoke({
                        "research_topic": args["research_topic"],
                        "researcher_messages": [{"role": "system", "content": fill(
                            text["researcher"], mcp_prompt=CORPUS_TOOLS_PROMPT, date=date)},
                                                {"role": "user", "content": args["research_topic"]}]},
                        {"recursion_limit": 4 * max_react + 10})
                    ep.stage("supervisor_tools")
                    outputs.append({"role": "tool", "tool_call_id": call_id,
                                    "content": result.get("compressed_research") or "(no findings)"})
            else:
                outputs.append({"role": "tool", "tool_call_id": call_id, "content": f"Error: no tool named {name!r}"})
        messages = state["supervisor_messages"] + outputs
        state_out["report"] = "Findings so far (no final report yet):\n\n" + "\n\n".join(notes_of(messages))
        return {"supervisor_messages": messages}

    def after_supervisor_tools(state: AgentState) -> str:
        # supervisor_tools answers every call unless it ends the research (then the last message
        # is still the supervisor's own)
        return END if state["supervisor_messages"][-1].get("role") == "assistant" else "supervisor"

    sb = StateGraph(SupervisorState)
    sb.add_node("supervisor", supervisor)
    sb.add_node("supervisor_tools", supervisor_tools)
    sb.add_edge(START, "supervisor")
    sb.add_edge("supervisor", "supervisor_tools")
    sb.add_conditional_edges("supervisor_tools", after_supervisor_tools, ["supervisor", END])
    supervisor_graph = sb.compile()

    # -- main graph --------------------------------------------------------------------------
    def clarify_with_user(state: AgentState) -> dict:
        ep.stage("clarify_with_user", skipped="allow_clarification is false")
        return {}

    def write_research_brief(state: AgentState) -> dict:
        ep.stage("write_research_brief")
        args = ep.structured([{"role": "user", "content": fill(text["brief"], messages=ep.prompt, date=date)}],
                             RESEARCH_QUESTION, lambda a: check_fields(a, {"research_brief": str}))
        brief = args["research_brief"]
        return {"research_brief": brief, "supervisor_messages": [
            {"role": "system", "content": fill(text["supervisor"], date=date, max_concurrent_research_units=units)},
            {"role": "user", "content": brief}]}

    def research_supervisor(state: AgentState) -> dict:
        result = supervisor_graph.invoke({"supervisor_messages": state["supervisor_messages"],
                                          "research_iterations": 0}, {"recursion_limit": 4 * max_rounds + 10})
        return {"supervisor_messages": result["supervisor_messages"], "notes": result.get("notes") or []}

    def final_report_generation(state: AgentState) -> dict:
        ep.stage("final_report_generation")
        findings = [m for m in state["supervisor_messages"] if m.get("role") == "tool"
                    or m.get("role") == "assistant" and m.get("tool_calls")]
        notes = "\n".join(notes_of(findings))
        messages = [{"role": "user", "content": fill(text["final"], research_brief=state["research_brief"],
                                                     findings=notes, date=date) + "\n\n" + DRCIK_OUTPUT}]
        args = ep.structured(messages, SUBMIT, lambda a: check_fields(a, {"report": str, "evidence": list})
                             or check_evidence(a["evidence"]))
        state_out["report"], state_out["evidence"] = args["report"], args["evidence"]
        return {"report": args["report"], "evidence": args["evidence"]}

    graph = StateGraph(AgentState)
    graph.add_node("clarify_with_user", clarify_with_user)
    graph.add_node("write_research_brief", write_research_brief)
    graph.add_node("research_supervisor", research_supervisor)
    graph.add_node("final_report_generation", final_report_generation)
    graph.add_edge(START, "clarify_with_user")
    graph.add_edge("clarify_with_user", "write_research_brief")
    graph.add_edge("write_research_brief", "research_supervisor")
    graph.add_edge("research_supervisor", "final_report_generation")
    graph.add_edge("final_report_generation", END)
    return graph.compile()


class SupervisorState(TypedDict, total=False):
    supervisor_messages: list
    research_iterations: int
    notes: list


def notes_of(messages: list[dict]) -> list[str]:
    """The supervisor's tool results (compressed research of each researcher), in order."""
    return [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]


def research(ep: ResearchEpisode, state: dict) -> str:
    build(ep, state).invoke({}, {"recursion_limit": 20})
    return "complete"


def main(argv: list[str] | None = None) -> int:
    return run_main("opendr", research, LABEL, argv)


if __name__ == "__main__":
    sys.exit(main())

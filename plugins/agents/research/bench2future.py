"""``bench2future``: the Bench2Future DR agent as the Dr-CiK paper describes it (Appendix G
"Deep-research agents": a ReAct-style trajectory alternating search actions and observations over
the corpus while keeping a running outline of the forecast-relevant context).

IMPLEMENTED FROM THE DESCRIPTION ONLY: no public code of the agent exists (Bench to the Future,
Wildman et al., 2025, releases a benchmark, not this agent); the report says so too.

Runs INSIDE the sandbox: ``python -m tsagent_plugins.agents.research.bench2future --config JSON``.

- Step (stage ``react_step``): one forced ``act`` call with ``thought``, ``outline`` (the running
  outline of forecast-relevant context, replaced at each step) and ``action`` (``search`` with a
  query, ``read`` with a document id, or ``finish``); the observation (search hits or the
  document) comes back as the call's tool result.  Malformed ``act`` output is retried with the
  reason fed back (``max_structured_output_retries``); if it stays malformed the loop ends and the
  reason is recorded.
- Report (stage ``final_report``): one forced ``submit_research`` call over the whole trajectory and
  the last outline: the report and evidence items citing document ids.
- Limits (choices of ours, the paper gives none): ``max_steps`` 20 ReAct steps, ``top_k`` 5
  documents per search, ``max_structured_output_retries`` 3; episode caps ``max_tool_calls``,
  ``max_tokens``.  Reaching ``max_steps`` is recorded as a note; the report is still written.
"""

from __future__ import annotations

import json
import sys

from tsagent_plugins.agents.research.episode import (EVIDENCE_ITEMS, STRING, ResearchEpisode, StructuredOutputError,
                                             check_evidence, check_fields, function_tool, run_main)
from tsagent_plugins.agents.research.tools import format_hits

LABEL = "Bench2Future (implemented from the Dr-CiK paper's description; no public code exists)"
SYSTEM = ("You are a forecasting research agent. Work step by step: think, update the running outline of the "
          "context that matters for the forecast, and act (search the local collection, read a document, or "
          "finish). Cite document ids exactly as shown in brackets.")
ACT = function_tool("act", "One ReAct step.", {
    "thought": STRING, "outline": STRING,
    "action": {"type": "string", "enum": ["search", "read", "finish"]},
    "input": {"type": "string", "description": "the query (search) or the document id (read)"}},
    ["thought", "outline", "action"])
SUBMIT = function_tool("submit_research", "Submit the research report and the evidence items.",
                       {"report": STRING, "evidence": EVIDENCE_ITEMS}, ["report", "evidence"])


def _act(args: dict) -> str | None:
    problem = check_fields(args, {"thought": str, "outline": str, "action": str})
    if problem:
        return problem
    if args["action"] not in ("search", "read", "finish"):
        return f"action {args['action']!r} is not one of search, read, finish"
    if args["action"] != "finish" and not isinstance(args.get("input"), str):
        return f"action {args['action']} needs a string 'input'"
    return None


def research(ep: ResearchEpisode, state: dict) -> str:
    max_steps = int(ep.limits.get("max_steps", 20))
    top_k = int(ep.limits.get("top_k", 5))
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ep.prompt}]
    outline = ""
    for step in range(1, max_steps + 1):
        ep.stage("react_step", step=step)
        try:
            args = ep.structured(messages, ACT, _act)
        except StructuredOutputError as exc:
            ep.note(f"ReAct loop ended: {exc}")
            break
        outline = args["outline"]
        state["report"] = f"Outline so far (no final report yet):\n\n{outline}"
        call_id = f"act_{step}"
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "act", "arguments": json.dumps(args)}}]})
        if args["action"] == "finish":
            messages.append({"role": "tool", "tool_call_id": call_id, "content": "Finishing: write the report."})
            break
        if args["action"] == "search":
            observation = format_hits(ep.tools.search(args["input"], top_k), ep.tools.retriever)
        else:
            text = ep.tools.read_document(args["input"])
            observation = text if text is not None else f"unknown document id {args['input']!r}"
        messages.append({"role": "tool", "tool_call_id": call_id, "content": observation})
    else:
        ep.note(f"step limit reached ({max_steps}); writing the report", limit="max_steps")
    ep.stage("final_report")
    args = ep.structured(messages + [{"role": "user", "content": (
        f"Running outline:\n{outline}\n\nWrite the final report and the evidence items a forecaster needs, "
        f"citing document ids.")}], SUBMIT,
        lambda a: check_fields(a, {"report": str, "evidence": list}) or check_evidence(a["evidence"]))
    state["report"], state["evidence"] = args["report"], args["evidence"]
    return "complete"


def main(argv: list[str] | None = None) -> int:
    return run_main("bench2future", research, LABEL, argv)


if __name__ == "__main__":
    sys.exit(main())

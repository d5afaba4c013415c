"""``retrieval``: the paper's minimal non-agentic DR baseline (Appendix G "Deep-research agents"):
one retrieval pass with the task text as the query, then one synthesis call that extracts
evidence items with citations; no iteration.

Runs INSIDE the sandbox: ``python -m tsagent_plugins.agents.research.retrieval --config JSON``
with the episode workspace as working directory.

- Query: the task text, i.e. the prompt's ``<context>`` block (the target description);
  the whole prompt when it has none.  The history numbers carry no words to match.
- Retrieval: the top ``top_k`` documents by the configured retriever (``embeddings``
  through the proxy, as in the paper, or ``bm25``, offline, labelled as a deviation in
  the search result, the report and the trajectory).
- Synthesis: one chat call that sees the prompt and the search result (as the result of
  a ``search`` tool call) and must call ``submit_research`` (forced tool choice) with the
  report and the evidence items; its arguments become ``report.md`` and ``evidence.json``
  as given (the harness validates them).
- Caps (profile ``max_tool_calls``, ``max_tokens``): when one is reached the agent stops,
  writes what it has (possibly an empty evidence list) and records the reason in the
  report, the step log and its exit message; it exits 0 so the outputs are scored.
  An unexpected error is handled the same way but exits 1 (the episode is a crash).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import uuid
from pathlib import Path

from tsagent_plugins.agents.research.client import ModelClient, ModelError, StepLog
from tsagent_plugins.agents.research.tools import (Bm25Retriever, Budget, CapReached, Corpus, CorpusTools,
                                           EmbeddingRetriever, format_hits)

SYSTEM = ("You are a research assistant for a time-series forecasting task. You are given search results "
          "from a local document collection. Extract the evidence a forecaster needs, citing document ids "
          "exactly as shown in brackets.")
SUBMIT_TOOL = {"type": "function", "function": {
    "name": "submit_research",
    "description": "Submit the research report and the evidence items, most important first.",
    "parameters": {"type": "object", "additionalProperties": False, "required": ["report", "evidence"],
                   "properties": {
                       "report": {"type": "string", "description": "markdown research report"},
                       "evidence": {"type": "array", "items": {
                           "type": "object", "additionalProperties": False,
                           "required": ["claim", "cited_document_ids"],
                           "properties": {"claim": {"type": "string"},
                                          "cited_document_ids": {"type": "array", "items": {"type": "string"}}}}}}}}}
SEARCH_TOOL = {"type": "function", "function": {
    "name": "search", "description": "Search the local document collection.",
    "parameters": {"type": "object", "required": ["query"],
                   "properties": {"query": {"type": "string"}, "k": {"type": "integer"}}}}}


def task_query(prompt: str) -> str:
    match = re.search(r"<context>(.*?)</context>", prompt, re.S)
    text = match.group(1).strip() if match else ""
    return text or prompt


def run(config: dict) -> str:
    """Run one episode; returns the stop reason (``complete`` or why it stopped)."""
    workspace = Path(config.get("workspace") or ".")
    log = StepLog(config["log"])
    budget = Budget(config.get("max_tool_calls"), config.get("max_tokens"))
    prompt = (workspace / config.get("prompt_file", "task.md")).read_text(encoding="utf-8")
    log.write("user", message=prompt)
    client = ModelClient(config["base_url"], config["model"], config["api_key"], budget, log,
                         embedding_model=config.get("embedding_model"))
    corpus = Corpus(workspace / config.get("corpus_dir", "corpus"))
    kind = config.get("retriever", "embeddings")
    log.write("note", session_id=str(uuid.uuid4()), retriever=kind, documents=len(corpus.ids),
              deviation=Bm25Retriever.label if kind == "bm25" else None)
    report_lines = [f"_Retriever: {kind}" + (f" ({Bm25Retriever.label})" if kind == "bm25" else "") + "._", ""]
    report, evidence, reason = "", [], "complete"
    try:
        retriever = Bm25Retriever(corpus) if kind == "bm25" else EmbeddingRetriever(corpus, client.embed)
        tools = CorpusTools(corpus, retriever, budget, log.tool)
        query, k = task_query(prompt), int(config.get("top_k", 10))
        hits = tools.search(query, k)
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": None, "tool_calls": [{
                "id": "call_search_1", "type": "function",
                "function": {"name": "search", "arguments": json.dumps({"query": query, "k": k})}}]},
            {"role": "tool", "tool_call_id": "call_search_1", "content": format_hits(hits, retriever)},
        ]
        message = client.chat(messages, tools=[SEARCH_TOOL, SUBMIT_TOOL],
                              tool_choice={"type": "function", "function": {"name": "submit_research"}},
                              max_tokens=config.get("max_output_tokens"))
        report, evidence, problem = _submission(message)
        if problem:
            reason = problem
    except CapReached as exc:
        reason = str(exc)
    except ModelError as exc:
        reason = f"model call failed: {exc}"
    except Exception as exc:  # noqa: BLE001 - write what there is, then fail the run with the reason
        reason = f"agent error: {type(exc).__name__}: {exc}"
    if reason != "complete":
        report_lines.append(f"_Stopped early: {reason}._")
        report_lines.append("")
    (workspace / config.get("report", "report.md")).write_text("\n".join(report_lines) + (report or ""),
                                                               encoding="utf-8")
    (workspace / config.get("evidence", "evidence.json")).write_text(json.dumps(evidence, indent=1),
                                                                     encoding="utf-8")
    log.write("stop", reason=reason, tool_calls=budget.tool_calls, tokens=budget.tokens)
    return reason


def _submission(message: dict) -> tuple[str, list, str | None]:
    """(report, evidence as given, problem or None) from the forced ``submit_research`` call."""
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and fn.get("name") == "submit_research":
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                return "", [], "the submit_research arguments are not JSON"
            if not isinstance(args, dict):
                return "", [], "the submit_research arguments are not an object"
            report = args.get("report") if isinstance(args.get("report"), str) else ""
            evidence = args.get("evidence", [])
            return report, evidence, None
    return str(message.get("content") or ""), [], "the model did not call submit_research"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="retrieval")
    parser.add_argument("--config", required=True, help="JSON configuration")
    args = parser.parse_args(argv)
    reason = run(json.loads(args.config))
    print(json.dumps({"stop_reason": reason}))
    if reason.startswith("agent error:"):
        print(reason, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

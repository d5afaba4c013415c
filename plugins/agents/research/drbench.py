"""``drbench``: DRBench's research agent (Abaskohi et al., 2025) re-implemented for Dr-CiK's local
corpus (Dr-CiK Appendix G "Deep-research agents": a search-summarise-synthesise cascade).

Runs INSIDE the sandbox: ``python -m tsagent_plugins.agents.research.drbench --config JSON``.  The
upstream package is not on PyPI (nor reachable here), so this is a re-implementation from the
two papers' descriptions, not a wrapper.  Stages, in trajectory order (``extra.stage``):

==========================  ==================================================  =======================================
stage                       what it does                                        differs from DRBench's agent
==========================  ==================================================  =======================================
``query_enrichment``        one structured call (``enrich_query``): the task    upstream enriches a business question;
                            text rewritten as a self-contained research query   here the forecasting task text
``research_plan``           one structured call (``research_plan``): search     upstream plans over web + enterprise
                            actions, each with a priority (higher first)        sources; only local search exists here
``local_search``            the highest-priority pending actions               upstream mixes web search, file and
                            (``actions_per_iteration``), each one ``search``    e-mail/chat tools; here the one shared
                            of the corpus tools (``top_k`` documents)           ``search`` (embeddings or BM25)
``document_brief``          each retrieved document not yet seen compressed    as the Dr-CiK paper describes; one
                            into a per-document brief (one chat call each)      brief per document, never redone
``adaptive_replanning``     one structured call (``replan``): done, or new     same role; bounded by ``max_iterations``
                            prioritised actions given the briefs so far
``synthesis``               one structured call (``submit_report``): report    upstream writes a long report; here the
                            + evidence items citing briefs as ``S<n>``          Dr-CiK report + evidence items
``citation_resolution``     ``S<n>`` markers resolved to document ids after    same deferral; an unresolvable marker
                            synthesis (no model call)                           is kept as written (e.g. ``S999``) and
                                                                                noted, so scoring counts it as a
                                                                                hallucinated id (Dr-CiK Appendix I.1:
                                                                                "their two unresolved document IDs
                                                                                are excluded as hallucinated")
==========================  ==================================================  =======================================

Limits (profile ``options``, recorded in ``run.json`` with the profile and in the trajectory's
``extra.limits``): ``max_iterations`` (search / re-plan rounds, default 15: our reading of the
DRBench paper's iteration budget, not checked against its code), ``actions_per_iteration``
(default 5, our choice: DRBench does not state one), ``top_k`` (documents per search, default 5),
``max_structured_output_retries`` (default 3, as in Open Deep Research: DRBench states none),
``max_tool_calls``, ``max_tokens``.  A malformed structured answer is retried with the reason
fed back; if the plan or a re-plan stays malformed the agent falls back to the enriched query /
ends the loop and records the reason; a malformed synthesis stops the episode with the reason.
"""

from __future__ import annotations

import re
import sys

from tsagent_plugins.agents.research.episode import (STRING, ResearchEpisode, StructuredOutputError, check_fields,
                                             function_tool, run_main, task_query)

LABEL = "DrBench (re-implemented from the DRBench and Dr-CiK papers; not the upstream code)"
SYSTEM = ("You are DrBench, an enterprise deep-research agent working on a time-series forecasting task. "
          "You can only search a local document collection.")
BRIEF_PROMPT = ("Write a brief of this document for the forecasting task: what it says about the target "
                "series, its timing, and whether it looks relevant or distracting. At most 120 words.")
ACTIONS = {"type": "array", "items": {"type": "object", "required": ["query", "priority"],
                                      "properties": {"query": STRING, "priority": {"type": "integer"}}}}
ENRICH = function_tool("enrich_query", "Rewrite the task as one self-contained research query.",
                       {"enriched_query": STRING}, ["enriched_query"])
PLAN = function_tool("research_plan", "Plan prioritised local-search actions (higher priority runs first).",
                     {"actions": ACTIONS}, ["actions"])
REPLAN = function_tool("replan", "Decide whether research is done; otherwise give new prioritised actions.",
                       {"done": {"type": "boolean"}, "actions": ACTIONS}, ["done", "actions"])
SUBMIT = function_tool("submit_report", "Submit the report and the evidence items, citing briefs as S<n>.",
                       {"report": STRING, "evidence": {"type": "array", "items": {
                           "type": "object", "required": ["claim", "sources"],
                           "properties": {"claim": STRING, "sources": {"type": "array", "items": STRING}}}}},
                       ["report", "evidence"])
SOURCE = re.compile(r"^\s*\[?S?(\d+)\]?\s*$", re.I)


def _actions(args: dict) -> str | None:
    problem = check_fields(args, {"actions": list})
    if problem:
        return problem
    for k, action in enumerate(args["actions"]):
        problem = check_fields(action, {"query": str, "priority": (int, float)})
        if problem:
            return f"actions[{k}]: {problem}"
    return None


def _replan(args: dict) -> str | None:
    return check_fields(args, {"done": bool}) or _actions(args)


def _submission(args: dict) -> str | None:
    problem = check_fields(args, {"report": str, "evidence": list})
    if problem:
        return problem
    for k, item in enumerate(args["evidence"]):
        problem = check_fields(item, {"claim": str, "sources": list})
        if problem:
            return f"evidence[{k}]: {problem}"
    return None


def resolve_citations(evidence: list[dict], sources: list[str]) -> tuple[list[dict], list[str]]:
    """Evidence items with ``S<n>`` markers (1-based) replaced by document ids, and the markers
    that resolve to no brief.  Those stay in the item's ``cited_document_ids`` as written, so the
    harness counts them as hallucinated ids (they name no corpus document)."""
    out, unresolved = [], []
    for item in evidence:
        ids = []
        for marker in item.get("sources") or []:
            match = SOURCE.match(str(marker))
            n = int(match.group(1)) if match else 0
            if 1 <= n <= len(sources):
                if sources[n - 1] not in ids:
                    ids.append(sources[n - 1])
            else:
                unresolved.append(str(marker))
                if str(marker) not in ids:
                    ids.append(str(marker))
        out.append({"claim": item.get("claim", ""), "cited_document_ids": ids})
    return out, unresolved


def research(ep: ResearchEpisode, state: dict) -> str:
    limits = ep.limits
    max_iterations = int(limits.get("max_iterations", 15))
    per_iteration = int(limits.get("actions_per_iteration", 5))
    top_k = int(limits.get("top_k", 5))
    task = task_query(ep.prompt)
    base = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": ep.prompt}]

    ep.stage("query_enrichment")
    try:
        query = ep.structured(base, ENRICH, lambda a: check_fields(a, {"enriched_query": str}))["enriched_query"]
    except StructuredOutputError as exc:
        ep.note(f"query enrichment skipped: {exc}; the task text is the query")
        query = task
    ep.stage("research_plan")
    try:
        plan = ep.structured(base + [{"role": "user", "content": f"Research query: {query}\nPlan local-search "
                                                                  f"actions with priorities."}], PLAN, _actions)
        pending = list(plan["actions"])
    except StructuredOutputError as exc:
        ep.note(f"research plan malformed: {exc}; falling back to one action with the enriched query")
        pending = []
    if not pending:
        pending = [{"query": query, "priority": 1}]
    briefs: dict[str, str] = {}
    done_queries: set[str] = set()
    reason = "complete"
    for iteration in range(1, max_iterations + 1):
        pending.sort(key=lambda a: -float(a.get("priority") or 0))
        batch, pending = pending[:per_iteration], pending[per_iteration:]
        ep.stage("local_search", iteration=iteration)
        for action in batch:
            q = str(action.get("query") or "").strip()
            if not q or q in done_queries:
                continue
            done_queries.add(q)
            hits = ep.tools.search(q, top_k)
            new = [h for h in hits if h.id not in briefs]
            if new:
                ep.stage("document_brief", iteration=iteration)
            for hit in new:
                message = ep.chat([{"role": "system", "content": SYSTEM},
                                   {"role": "user", "content": f"Task:\n{task}\n\nDocument [{hit.id}]:\n"
                                                               f"{hit.text[:8000]}\n\n{BRIEF_PROMPT}"}])
                briefs[hit.id] = str(message.get("content") or "").strip() or hit.text[:400]
                state["report"] = "Briefs gathered (no synthesis yet):\n\n" + _numbered(briefs)
            if new:
                ep.stage("local_search", iteration=iteration)
        if iteration == max_iterations:
            ep.note(f"iteration limit reached ({max_iterations}); {len(pending)} pending action(s) not run",
                    limit="max_iterations")
            break
        ep.stage("adaptive_replanning", iteration=iteration)
        summary = "\n".join(f"- {q}" for q in sorted(done_queries))
        try:
            step = ep.structured(base + [{"role": "user", "content": (
                f"Research query: {query}\nSearches run:\n{summary}\n\nBriefs so far:\n{_numbered(briefs)}\n\n"
                f"Pending actions: {len(pending)}. Are we done? If not, give new prioritised actions.")}],
                REPLAN, _replan)
        except StructuredOutputError as exc:
            ep.note(f"re-planning malformed: {exc}; research ends")
            break
        pending.extend(step["actions"])
        if step["done"] or not pending:
            break
    ep.stage("synthesis")
    sources = list(briefs)
    args = ep.structured(base + [{"role": "user", "content": (
        f"Per-document briefs (cite them as S<n>):\n{_numbered(briefs)}\n\nSynthesise the evidence a forecaster "
        f"needs: a report and evidence items, each citing its sources as S<n>.")}], SUBMIT, _submission)
    ep.stage("citation_resolution")
    evidence, unresolved = resolve_citations(args["evidence"], sources)
    if unresolved:
        ep.note(f"citation resolution: {len(unresolved)} marker(s) name no brief, kept as cited (hallucinated "
                f"ids): {unresolved}")
    state["report"] = _resolve_report(args["report"], sources)
    state["evidence"] = evidence
    return reason


def _numbered(briefs: dict[str, str]) -> str:
    return "\n".join(f"S{k} [{doc}]: {text}" for k, (doc, text) in enumerate(briefs.items(), 1)) or "(none)"


def _resolve_report(report: str, sources: list[str]) -> str:
    def one(match: re.Match) -> str:
        n = int(match.group(1))
        return f"[{sources[n - 1]}]" if 1 <= n <= len(sources) else match.group(0)
    return re.sub(r"\[S(\d+)\]", one, report)


def main(argv: list[str] | None = None) -> int:
    return run_main("drbench", research, LABEL, argv)


if __name__ == "__main__":
    sys.exit(main())

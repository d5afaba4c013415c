"""What every iterative in-sandbox DR agent (``drbench``, ``opendr``, ``bench2future``) shares:
the episode's set-up (prompt, step log, caps, model client, corpus tools), stage marks for the
trajectory, structured output through forced tool calls with bounded retries, and writing
``report.md``/``evidence.json`` whatever happened.

Runs INSIDE the sandbox (``python -m tsagent_plugins.agents.research.<agent> --config JSON``).

- Stages: :meth:`ResearchEpisode.stage` logs a ``stage`` event; every later step of the
  trajectory carries ``extra.stage`` (see :mod:`.trace`), so the trajectory shows the agent's
  structure (DrBench's cascade, Open Deep Research's graph nodes, the ReAct steps).
- Structured output: a forced call of one function tool whose arguments are checked by a
  validator; a malformed answer (no call, arguments that are not a JSON object, a missing or
  mistyped field) is logged as a ``note`` with the reason and retried with the reason fed back,
  up to ``max_structured_output_retries`` attempts in all (Open Deep Research's setting, default
  3); after that :class:`StructuredOutputError` carries the reason and the agent decides (skip,
  fall back, or stop with the reason recorded).  Choice left open by the upstream agents: the
  feedback message tells the model what was wrong (LangChain's retry resends the same request).
- Stopping: caps (:class:`.tools.CapReached`) and model failures end the research; the agent
  keeps what it gathered and the reason goes into the report, the step log and the exit message.
  Exit 0 so the outputs are scored; an unexpected error exits 1 (a crash) after writing them.
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid
from pathlib import Path
from typing import Any, Callable

from tsagent_plugins.agents.research.client import ModelClient, ModelError, StepLog
from tsagent_plugins.agents.research.retrieval import task_query  # noqa: F401 - one definition, re-exported
from tsagent_plugins.agents.research.tools import (Bm25Retriever, Budget, CapReached, Corpus, CorpusTools,
                                           EmbeddingRetriever)



class StructuredOutputError(Exception):
    """Structured output stayed malformed after every retry; ``str(exc)`` is the last reason."""


def function_tool(name: str, description: str, properties: dict, required: list[str]) -> dict:
    """An OpenAI Chat function tool with an object schema."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": properties, "required": required}}}


STRING = {"type": "string"}
EVIDENCE_ITEMS = {"type": "array", "items": {"type": "object", "required": ["claim", "cited_document_ids"],
                                             "properties": {"claim": STRING,
                                                            "cited_document_ids": {"type": "array", "items": STRING}}}}


def check_fields(args: Any, fields: dict[str, type | tuple]) -> str | None:
    """None when ``args`` is an object holding each field with its type, else the reason."""
    if not isinstance(args, dict):
        return "the arguments are not a JSON object"
    for name, kind in fields.items():
        if name not in args:
            return f"field {name!r} is missing"
        if not isinstance(args[name], kind) or isinstance(args[name], bool) and kind is not bool:
            return f"field {name!r} is not of type {getattr(kind, '__name__', kind)}"
    return None


def check_evidence(items: Any) -> str | None:
    if not isinstance(items, list):
        return "'evidence' is not a list"
    for k, item in enumerate(items):
        problem = check_fields(item, {"claim": str, "cited_document_ids": list})
        if problem:
            return f"evidence[{k}]: {problem}"
    return None


class ResearchEpisode:
    """One research episode inside the sandbox, from the adapter's JSON configuration."""

    def __init__(self, config: dict):
        self.config = config
        self.workspace = Path(config.get("workspace") or ".")
        self.log = StepLog(config["log"])
        self.budget = Budget(config.get("max_tool_calls"), config.get("max_tokens"))
        self.prompt = (self.workspace / config.get("prompt_file", "task.md")).read_text(encoding="utf-8")
        self.log.write("user", message=self.prompt)
        self.client = ModelClient(config["base_url"], config["model"], config["api_key"], self.budget, self.log,
                                  embedding_model=config.get("embedding_model"))
        self.corpus = Corpus(self.workspace / config.get("corpus_dir", "corpus"))
        self.retriever_kind = config.get("retriever", "embeddings")
        self.limits = dict(config.get("limits") or {})
        self.retries = int(self.limits.get("max_structured_output_retries") or 3)
        self.log.write("note", session_id=str(uuid.uuid4()), retriever=self.retriever_kind,
                       documents=len(self.corpus.ids), limits=self.limits,
                       deviation=Bm25Retriever.label if self.retriever_kind == "bm25" else None)
        self._tools: CorpusTools | None = None
        self.notes: list[str] = []  # reasons recorded on the way (malformed output, skipped steps)

    # -- tools ------------------------------------------------------------------------------
    @property
    def tools(self) -> CorpusTools:
        """The corpus tools (the retriever is built on first use: embedding the corpus costs tokens)."""
        if self._tools is None:
            kind = self.retriever_kind
            retriever = Bm25Retriever(self.corpus) if kind == "bm25" else EmbeddingRetriever(self.corpus,
                                                                                               self.client.embed)
            self._tools = CorpusTools(self.corpus, retriever, self.budget, self.log.tool)
        return self._tools

    def stage(self, name: str, **data: Any) -> None:
        """Mark the start of a stage / graph node; later steps carry it in ``extra.stage``."""
        self.log.write("stage", name=name, **data)

    def note(self, reason: str, **data: Any) -> None:
        self.notes.append(reason)
        self.log.write("note", reason=reason, **data)

    # -- model calls ------------------------------------------------------------------------
    def chat(self, messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None) -> dict:
        return self.client.chat(messages, tools=tools, tool_choice=tool_choice,
                                max_tokens=self.config.get("max_output_tokens"))

    def structured(self, messages: list[dict], tool: dict, validate: Callable[[dict], str | None],
                   extra_tools: list[dict] | None = None) -> dict:
        """The arguments of a forced call of ``tool``, valid by ``validate`` (None = valid).

        Retries a malformed answer with the reason fed back, ``max_structured_output_retries``
        attempts in all; raises :class:`StructuredOutputError` after the last one.
        """
        name = tool["function"]["name"]
        convo = list(messages)
        problem = "no attempt made"
        for attempt in range(1, self.retries + 1):
            message = self.chat(convo, tools=[tool] + list(extra_tools or []),
                                tool_choice={"type": "function", "function": {"name": name}})
            args, problem = _forced_args(message, name)
            if problem is None:
                problem = validate(args)
            if problem is None:
                return args
            self.note(f"malformed structured output from {name} (attempt {attempt}/{self.retries}): {problem}",
                      attempt=attempt)
            convo = convo + [{"role": "user", "content": f"Your last answer was malformed: {problem}. "
                                                         f"Call {name} again with valid arguments."}]
        raise StructuredOutputError(f"{name}: {problem} after {self.retries} attempt(s)")

    # -- outputs ----------------------------------------------------------------------------
    def write_outputs(self, report: str, evidence: list, reason: str, label: str | None = None) -> None:
        head = []
        if label:
            head.append(f"_{label}_")
        kind = self.retriever_kind
        head.append(f"_Retriever: {kind}" + (f" ({Bm25Retriever.label})" if kind == "bm25" else "") + "._")
        if reason != "complete":
            head.append(f"_Stopped early: {reason}._")
        text = "\n\n".join(head) + "\n\n" + (report or "")
        (self.workspace / self.config.get("report", "report.md")).write_text(text, encoding="utf-8")
        (self.workspace / self.config.get("evidence", "evidence.json")).write_text(json.dumps(evidence, indent=1),
                                                                                   encoding="utf-8")
        self.log.write("stop", reason=reason, tool_calls=self.budget.tool_calls, tokens=self.budget.tokens,
                       notes=self.notes or None)


def _forced_args(message: dict, name: str) -> tuple[Any, str | None]:
    for call in message.get("tool_calls") or []:
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict) and fn.get("name") == name:
            raw = fn.get("arguments")
            if isinstance(raw, dict):
                return raw, None
            try:
                return json.loads(raw or "{}"), None
            except (TypeError, ValueError):
                return None, "the arguments are not JSON"
    return None, f"the model did not call {name}"


def tool_calls(message: dict) -> list[tuple[str, str, Any]]:
    """(call id, function name, parsed arguments or the raw string when not JSON) of a message."""
    out = []
    for k, call in enumerate(message.get("tool_calls") or [], 1):
        fn = call.get("function") if isinstance(call, dict) else None
        if not isinstance(fn, dict):
            continue
        raw = fn.get("arguments")
        try:
            args = raw if isinstance(raw, dict) else json.loads(raw or "{}")
        except (TypeError, ValueError):
            args = raw
        out.append((str(call.get("id") or f"call_{k}"), str(fn.get("name") or ""), args))
    return out


def assistant_turn(message: dict) -> dict:
    """The assistant message to append to a conversation (content + tool calls as sent back)."""
    turn: dict[str, Any] = {"role": "assistant", "content": message.get("content") or None}
    if message.get("tool_calls"):
        turn["tool_calls"] = message["tool_calls"]
    return turn


def run_main(prog: str, body: Callable[[ResearchEpisode, dict], str], label: str | None = None,
             argv: list[str] | None = None) -> int:
    """Parse ``--config``, run ``body(episode, state)`` and write the outputs whatever happens.

    ``body`` fills ``state["report"]``/``state["evidence"]`` as it goes (so a cap or a failure
    keeps what was gathered) and returns ``complete`` or a stop reason.
    """
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--config", required=True, help="JSON configuration")
    args = parser.parse_args(argv)
    episode = ResearchEpisode(json.loads(args.config))
    state: dict[str, Any] = {"report": "", "evidence": []}
    try:
        reason = body(episode, state)
    except CapReached as exc:
        reason = str(exc)
    except ModelError as exc:
        reason = f"model call failed: {exc}"
    except StructuredOutputError as exc:
        reason = f"malformed structured output: {exc}"
    except Exception as exc:  # noqa: BLE001 - write what there is, then fail the run with the reason
        reason = f"agent error: {type(exc).__name__}: {exc}"
    episode.write_outputs(state.get("report") or "", state.get("evidence") or [], reason, label)
    print(json.dumps({"stop_reason": reason}))
    if reason.startswith("agent error:"):
        print(reason, file=sys.stderr)
        return 1
    return 0

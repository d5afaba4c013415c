"""Building an ATIF trajectory (v1.6) from a CLI's native log, cross-checked against the proxy log.

A converter feeds a :class:`TrajectoryBuilder` the steps it reads from the
CLI's own session log: the task prompt (``user`` step), then one ``agent``
step per model call with its visible text, reasoning, tool calls and, once
the tools ran, their results as the step's ``observation``.  :meth:`build`
then reconciles the token counts with the proxy's record
(:mod:`tsagent_plugins.agents.terminal.proxylog`):

* per step: metrics the native log lacks are filled from the proxy call the
  step corresponds to (matched in order among the conversation's calls), and
  every matched step gets the proxy's ``cost_usd`` (profile prices,
  TraceBench equation (1));
* a step with ``llm_call_count`` 0 (a tool the agent's code ran, an embeddings call) is matched
  to no proxy call and gets no ``metrics`` (ATIF's rule); counts it has go to ``extra.usage``;
* totals (``final_metrics``): the proxy's sum over every call it forwarded
  when the CLI's own numbers are missing or disagree with it
  (``extra.token_source == "proxy"``, the differing fields in
  ``extra.disagreement``), else the CLI's (``"cli"``, equal to the proxy's).

Token fields follow the proxy's normalisation (TraceBench Appendix G.3):
``prompt_tokens`` include cached ones, ``completion_tokens`` include reasoning
ones (``metrics.extra.reasoning_tokens`` gives that share).

The result is validated with :func:`harness.trajectory.validate_trajectory`.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

from harness.wire import Usage
from harness.atif import ATIF_SCHEMA_VERSION as SCHEMA_VERSION, to_dict, validate_trajectory
from tsagent_plugins.agents.terminal.proxylog import ProxyCall, total_usage

_FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens")


def iso(value: Any) -> str | None:
    """An ISO 8601 UTC timestamp from epoch seconds, epoch milliseconds or an ISO string; None if unusable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        seconds = value / 1000.0 if value > 1e11 else float(value)
        return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=timezone.utc)
        return parsed.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return None


def arguments_object(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a JSON object (ATIF requires one).

    A JSON string is parsed; anything that is not an object is kept under
    ``"input"`` so nothing is lost.
    """
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return {} if raw is None else {"input": raw}


def usage_dict(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "cached_tokens": usage.cached_tokens, "reasoning_tokens": usage.reasoning_tokens}


def _metrics(usage: Usage, cost: float | None, source: str) -> dict[str, Any]:
    metrics: dict[str, Any] = {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                               "cached_tokens": usage.cached_tokens,
                               "extra": {"reasoning_tokens": usage.reasoning_tokens, "source": source}}
    if cost is not None:
        metrics["cost_usd"] = round(cost, 10)
    return metrics


def _same(a: Usage, b: Usage) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in _FIELDS)


class TrajectoryBuilder:
    """Collects steps in order and builds the ATIF document (see the module docstring).

    ``agent_name``/``agent_version``: the agent plugin and the CLI version.
    ``cli_totals``/``cli_cost_usd``: the totals the CLI reports about the
    whole run (e.g. Claude Code's ``result`` event), when it does.
    """

    def __init__(self, agent_name: str, agent_version: str, model_name: str | None = None,
                 session_id: str | None = None):
        self.agent_name = agent_name
        self.agent_version = agent_version
        self.model_name = model_name
        self.session_id = session_id
        self.steps: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.extra: dict[str, Any] = {}
        self.cli_totals: Usage | None = None
        self.cli_cost_usd: float | None = None
        self._usage: dict[int, Usage] = {}   # id(step) -> native usage
        self._native_cost: dict[int, float] = {}
        self._calls: dict[str, dict] = {}    # tool_call_id -> step

    # -- steps ------------------------------------------------------------------
    def _add(self, step: dict[str, Any]) -> dict[str, Any]:
        step["step_id"] = len(self.steps) + 1
        self.steps.append(step)
        return step

    def user(self, message: Any, timestamp: Any = None, extra: dict | None = None) -> dict:
        """A user step (the task prompt, or a later user message)."""
        step = {"source": "user", "message": message if message is not None else "", "timestamp": iso(timestamp)}
        if extra:
            step["extra"] = extra
        return self._add(step)

    def system(self, message: Any, timestamp: Any = None, extra: dict | None = None) -> dict:
        """A system step (e.g. an error the CLI printed into its session)."""
        step = {"source": "system", "message": message if message is not None else "", "timestamp": iso(timestamp)}
        if extra:
            step["extra"] = extra
        return self._add(step)

    def agent(self, message: Any = "", timestamp: Any = None, reasoning: str | None = None,
              usage: Usage | None = None, cost_usd: float | None = None, model_name: str | None = None,
              extra: dict | None = None) -> dict:
        """An agent step: one model call.  ``usage``: its normalised counts from the native log."""
        step: dict[str, Any] = {"source": "agent", "message": message if message is not None else "",
                                "timestamp": iso(timestamp)}
        if reasoning:
            step["reasoning_content"] = reasoning
        if model_name or self.model_name:
            step["model_name"] = model_name or self.model_name
        if extra:
            step["extra"] = extra
        self._add(step)
        if usage is not None:
            self._usage[id(step)] = usage
        if cost_usd is not None:
            self._native_cost[id(step)] = cost_usd
        return step

    def set_usage(self, step: dict, usage: Usage, cost_usd: float | None = None) -> None:
        """Attach (or replace) the native usage of an agent step."""
        self._usage[id(step)] = usage
        if cost_usd is not None:
            self._native_cost[id(step)] = cost_usd

    def has_usage(self, step: dict) -> bool:
        return id(step) in self._usage

    def tool_call(self, step: dict, call_id: str | None, name: str, arguments: Any) -> str:
        """Add a tool call to an agent step; returns its id (one is made up when the CLI gave none)."""
        call_id = str(call_id) if call_id else f"call_{step['step_id']}_{len(step.get('tool_calls') or []) + 1}"
        while call_id in self._calls:
            call_id += "_dup"
        step.setdefault("tool_calls", []).append(
            {"tool_call_id": call_id, "function_name": name or "unknown", "arguments": arguments_object(arguments)})
        self._calls[call_id] = step
        return call_id

    def observe(self, call_id: str | None, content: Any, is_error: bool | None = None,
                extra: dict | None = None, step: dict | None = None) -> None:
        """Record a tool result on the step that made the call (or on ``step``, or the last agent step)."""
        target = self._calls.get(call_id) if call_id else None
        if target is None:
            target = step or next((s for s in reversed(self.steps) if s["source"] == "agent"), None)
        if target is None:
            target = self.system("")
        result: dict[str, Any] = {"source_call_id": call_id if call_id in self._calls else None,
                                  "content": content if content is not None else ""}
        info = dict(extra or {})
        if is_error is not None:
            info["is_error"] = bool(is_error)
        if info:
            result["extra"] = info
        target.setdefault("observation", {"results": []})["results"].append(result)

    def note(self, text: str) -> None:
        self.notes.append(text)

    def agent_steps(self) -> list[dict]:
        return [s for s in self.steps if s["source"] == "agent"]

    # -- reconciliation ----------------------------------------------------------
    def _match(self, steps: list[dict], calls: list[ProxyCall]) -> dict[int, ProxyCall]:
        """Agent step -> the proxy call it was, matched in order."""
        if len(steps) == len(calls):
            return {id(s): c for s, c in zip(steps, calls, strict=True)}
        matched: dict[int, ProxyCall] = {}
        position = 0
        for step in steps:
            native = self._usage.get(id(step))
            if native is None:
                continue
            for index in range(position, len(calls)):
                if calls[index].usage is not None and _same(native, calls[index].usage):
                    matched[id(step)] = calls[index]
                    position = index + 1
                    break
        return matched

    def build(self, proxy_calls: list[ProxyCall] | None = None) -> dict[str, Any]:
        """The validated ATIF document (a plain dict, fields left unset omitted)."""
        # a step with llm_call_count 0 made no model call: it matches no proxy call and has no metrics (ATIF rule)
        dispatch = [s for s in self.agent_steps() if s.get("llm_call_count") == 0]
        for step in dispatch:
            native = self._usage.pop(id(step), None)
            if native is not None and any(getattr(native, f) for f in (*_FIELDS, "reasoning_tokens")):
                step.setdefault("extra", {})["usage"] = usage_dict(native)
            self._native_cost.pop(id(step), None)
        steps = [s for s in self.agent_steps() if s.get("llm_call_count") != 0]
        conversation = [c for c in proxy_calls or [] if c.conversational]
        matched = self._match(steps, conversation) if proxy_calls is not None else {}
        filled = 0
        for step in steps:
            native = self._usage.get(id(step))
            call = matched.get(id(step))
            cost = call.cost_usd if call is not None else self._native_cost.get(id(step))
            if native is not None:
                step["metrics"] = _metrics(native, cost, "cli")
                if call is not None and call.usage is not None and not _same(native, call.usage):
                    step["metrics"]["extra"]["proxy"] = usage_dict(call.usage)
            elif call is not None and call.usage is not None:
                step["metrics"] = _metrics(call.usage, cost, "proxy")
                filled += 1
            if call is not None:
                step.setdefault("extra", {})["proxy_seq"] = call.seq
        if filled:
            self.note(f"token counts of {filled} step(s) were missing from the CLI's log and were taken from the proxy log")
        final = self._final_metrics(steps, proxy_calls, conversation)
        doc: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION,
            "session_id": self.session_id or "unknown",
            "agent": {"name": self.agent_name, "version": self.agent_version},
            "steps": [{k: v for k, v in s.items() if v is not None} for s in self.steps],
            "final_metrics": final,
        }
        if self.model_name:
            doc["agent"]["model_name"] = self.model_name
        if self.notes:
            doc["notes"] = "\n".join(self.notes)
        if self.extra:
            doc["extra"] = self.extra
        return to_dict(validate_trajectory(doc))

    def _cli_totals(self, steps: list[dict]) -> Usage | None:
        if self.cli_totals is not None:
            return self.cli_totals
        if steps and all(id(s) in self._usage for s in steps):
            total = Usage()
            for s in steps:
                total = total + self._usage[id(s)]
            return total
        return None

    def _final_metrics(self, steps: list[dict], proxy_calls: list[ProxyCall] | None,
                       conversation: list[ProxyCall]) -> dict[str, Any]:
        cli = self._cli_totals(steps)
        cli_cost = self.cli_cost_usd
        if cli_cost is None and steps and all(id(s) in self._native_cost for s in steps):
            cli_cost = sum(self._native_cost[id(s)] for s in steps)
        extra: dict[str, Any] = {"cli_totals": usage_dict(cli) if cli is not None else None}
        if cli_cost is not None:
            extra["cli_cost_usd"] = round(cli_cost, 10)
        if proxy_calls is not None:
            proxy, proxy_cost = total_usage(proxy_calls)
            conv, _ = total_usage(conversation)
            extra.update({"proxy_totals": usage_dict(proxy), "proxy_calls": len(proxy_calls),
                          "proxy_conversation_calls": len(conversation),
                          "proxy_conversation_totals": usage_dict(conv)})
            totals, cost = proxy, proxy_cost
            if cli is None:
                extra["token_source"] = "proxy"
                extra["disagreement"] = {"reason": f"the CLI's log lacks token counts ({len(steps)} model call(s) "
                                                   f"in it, {len(conversation)} in the proxy log)"}
            elif _same(cli, proxy):
                extra["token_source"] = "cli"
            else:
                extra["token_source"] = "proxy"
                diff: dict[str, Any] = {f: {"cli": getattr(cli, f), "proxy": getattr(proxy, f)}
                                        for f in _FIELDS if getattr(cli, f) != getattr(proxy, f)}
                if _same(cli, conv) and len(conversation) < len(proxy_calls):
                    diff["reason"] = ("the proxy also forwarded calls outside the conversation "
                                      f"({len(proxy_calls) - len(conversation)}) that the CLI does not count")
                extra["disagreement"] = diff
        else:
            totals, cost = cli, cli_cost
            extra["token_source"] = "cli" if cli is not None else None
        final: dict[str, Any] = {"total_steps": len(self.steps), "extra": extra}
        if totals is not None:
            final.update({"total_prompt_tokens": totals.prompt_tokens,
                          "total_completion_tokens": totals.completion_tokens,
                          "total_cached_tokens": totals.cached_tokens})
            extra["total_reasoning_tokens"] = totals.reasoning_tokens
        if cost is not None:
            final["total_cost_usd"] = round(cost, 10)
        return final

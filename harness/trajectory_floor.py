"""The least trajectory an LLM agent's episode keeps: the task prompt, and what the model proxy saw.

An agent plugin converts its CLI's native log (``Agent.trajectory``).  A CLI
killed at the wall-clock limit before it wrote that log, or before its first
model call, leaves nothing to convert, and an agent whose log omits the task
leaves a trajectory without it.  The harness itself holds the prompt (it wrote
``prompt.txt``) and the proxy log, so :func:`with_prompt` gives every such
episode a trajectory that starts with the prompt as its user step, however
early the kill.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.proxy_records import load_log
from harness.trajectory import SCHEMA_VERSION, to_dict, validate_trajectory


def iso(ts: float) -> str:
    """Unix seconds as an ISO 8601 UTC timestamp."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat()


def with_prompt(doc: dict | None, prompt: str, started: float, why: str, *, agent: str, version: str,
                model: str | None = None, proxy_log: Path | None = None, usage: Any = None) -> dict:
    """The episode's trajectory, holding at least ``prompt`` as a user step (a validated ATIF dict).

    ``doc``: the agent plugin's trajectory, or None.  One with a user step is returned unchanged; one without
    gets the prompt put first (steps renumbered) and a note.  None becomes the prompt (timestamp ``started``,
    Unix seconds) followed by one agent step per model request the proxy forwarded (``proxy_log``: the
    episode's proxy log, see :mod:`harness.proxy.log`; unreadable lines are skipped), each with the
    token counts of its response when one was logged; ``final_metrics`` are the proxy's totals (``usage``:
    the episode's :class:`harness.proxy.accounting.EpisodeUsage`, else the sum of the logged responses).
    ``why``: the reason, written into the notes (e.g. ``agent killed after 1 s wall-clock limit``).
    Raises :class:`harness.trajectory.TrajectoryError` only if ``doc`` itself does not validate.
    """
    user = {"step_id": 1, "timestamp": iso(started), "source": "user", "message": prompt,
            "extra": {"source": "harness", "file": "prompt.txt"}}
    if doc is not None:
        if any(step.get("source") == "user" for step in doc.get("steps") or []):
            return doc
        steps = [user, *({**step, "step_id": n} for n, step in enumerate(doc.get("steps") or [], 2))]
        note = f"the harness put the task prompt first: {agent}'s trajectory has no user step ({why})"
        doc = {**doc, "steps": steps, "notes": "\n".join(filter(None, [doc.get("notes"), note]))}
        return to_dict(validate_trajectory(doc))
    records = load_log(proxy_log, lenient=True).records if proxy_log is not None else []
    steps = [user, *_proxy_steps(records)]
    models = [s["model_name"] for s in steps if s.get("model_name")]
    doc = {
        "schema_version": SCHEMA_VERSION,
        "session_id": "unknown",
        "agent": {"name": agent, "version": version, "model_name": model or (models[0] if models else None)},
        "steps": steps,
        "notes": f"written by the harness: {agent} left no trajectory ({why}); the steps after the prompt are the "
                 f"model requests the proxy forwarded (no texts or tool calls)",
        "final_metrics": _final_metrics(steps, usage),
        "extra": {"source": "harness"},
    }
    return to_dict(validate_trajectory(doc))


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else 0


def _proxy_steps(records: list[dict]) -> list[dict]:
    """One agent step per request record (``HEAD`` probes excepted), in ``seq`` order."""
    responses = {r.get("seq"): r for r in records if r.get("type") == "response"}
    steps = []
    requests = [r for r in records if r.get("type") == "request" and isinstance(r.get("seq"), int)
                and r.get("method") != "HEAD"]
    for n, request in enumerate(sorted(requests, key=lambda r: r["seq"]), 2):
        response = responses.get(request["seq"]) or {}
        body = request.get("body")
        step: dict[str, Any] = {"step_id": n, "source": "agent", "message": "", "extra": {"proxy_seq": request["seq"]}}
        if "status" in response:
            step["extra"]["status"] = response["status"]
        if isinstance(request.get("ts"), int | float):
            step["timestamp"] = iso(request["ts"])
        if isinstance(body, dict) and isinstance(body.get("model"), str):
            step["model_name"] = body["model"]
        usage = response.get("usage")
        if isinstance(usage, dict):
            step["metrics"] = {"prompt_tokens": _int(usage.get("prompt_tokens")),
                               "completion_tokens": _int(usage.get("completion_tokens")),
                               "cached_tokens": _int(usage.get("cached_tokens")),
                               "extra": {"reasoning_tokens": _int(usage.get("reasoning_tokens")), "source": "proxy"}}
        steps.append(step)
    return steps


def _final_metrics(steps: list[dict], usage: Any) -> dict[str, Any]:
    final: dict[str, Any] = {}
    if usage is not None:
        totals = {name: _int(getattr(usage, name, 0)) for name in
                  ("prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens")}
        if isinstance(getattr(usage, "cost_usd", None), int | float):
            final["total_cost_usd"] = max(float(usage.cost_usd), 0.0)
    else:
        totals = {name: sum(_int((s.get("metrics") or {}).get(name)) for s in steps)
                  for name in ("prompt_tokens", "completion_tokens", "cached_tokens")}
        totals["reasoning_tokens"] = sum(_int(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens"))
                                         for s in steps)
    return {"total_prompt_tokens": totals["prompt_tokens"], "total_completion_tokens": totals["completion_tokens"],
            "total_cached_tokens": totals["cached_tokens"], **final, "total_steps": len(steps),
            "extra": {"token_source": "proxy", "total_reasoning_tokens": totals["reasoning_tokens"],
                      "proxy_calls": len(steps) - 1}}

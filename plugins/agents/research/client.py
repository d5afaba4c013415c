"""Model calls and the step log of an in-sandbox deep-research agent.

Runs INSIDE the sandbox.  Every call goes to the harness model proxy (OpenAI
Chat Completions ``/v1/chat/completions`` and ``/v1/embeddings``) with the dummy
key the harness gives; the proxy holds the real key, logs, counts and caps.
Tokens are counted against :class:`tsagent_plugins.agents.research.tools.Budget`: no call starts once
the token cap is reached (the call that crosses it completes and is counted).

The step log (``$HOME/research/steps.jsonl``) is what the harness turns into the
ATIF trajectory: one JSON line per event, ``{"type": "user"|"tool"|"model"|"note"|
"stop", "ts": ...}`` (see :mod:`tsagent_plugins.agents.research.trace`).
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tsagent_plugins.agents.research.tools import Budget, CapReached


class ModelError(Exception):
    """A model call failed (HTTP error, unreadable answer); ``str(exc)`` is the reason."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


class StepLog:
    """Append-only JSON-lines log of the agent's steps."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def write(self, kind: str, **data: Any) -> None:
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": kind, "ts": now(), **data}, default=str) + "\n")

    def tool(self, name: str, arguments: dict, result: str) -> None:
        self.write("tool", name=name, arguments=arguments, result=result)


def _usage(body: dict) -> dict[str, int]:
    """OpenAI Chat usage normalised (prompt includes cached, completion includes reasoning)."""
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    details = usage.get("prompt_tokens_details") or {}
    out_details = usage.get("completion_tokens_details") or {}
    return {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
            "cached_tokens": int((details or {}).get("cached_tokens") or 0),
            "completion_tokens": int(usage.get("completion_tokens") or 0),
            "reasoning_tokens": int((out_details or {}).get("reasoning_tokens") or 0)}


class ModelClient:
    """OpenAI-compatible client of the model proxy, counting tokens against ``budget``."""

    def __init__(self, base_url: str, model: str, api_key: str, budget: Budget, log: StepLog,
                 embedding_model: str | None = None, timeout: float = 300.0):
        self.base = base_url.rstrip("/") + "/v1"
        self.model = model
        self.key = api_key
        self.budget = budget
        self.log = log
        self.embedding_model = embedding_model or model
        self.timeout = timeout

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(self.base + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json",
                                                  "Authorization": f"Bearer {self.key}"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                data = json.loads(resp.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            text = exc.read().decode("utf-8", "replace")[:500]
            if "budget_exceeded" in text:
                raise CapReached(f"the model proxy refused the call: budget exceeded ({text[:200]})") from None
            raise ModelError(f"HTTP {exc.code} from {path}: {text}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise ModelError(f"{path}: {type(exc).__name__}: {exc}") from None
        if not isinstance(data, dict):
            raise ModelError(f"{path}: the answer is not a JSON object")
        return data

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Embeddings of ``texts`` (one proxy call), logged as a model step without a message."""
        self.budget.check_tokens("an embeddings call")
        started = time.monotonic()
        data = self._post("/embeddings", {"model": self.embedding_model, "input": texts})
        rows = data.get("data")
        if not isinstance(rows, list) or len(rows) != len(texts):
            raise ModelError("/embeddings: 'data' does not hold one embedding per input")
        rows = sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0)
        vectors = [r.get("embedding") for r in rows if isinstance(r, dict)]
        if len(vectors) != len(texts) or not all(isinstance(v, list) and v for v in vectors):
            raise ModelError("/embeddings: an embedding is missing or empty")
        usage = _usage(data)
        self.budget.add_tokens(usage["prompt_tokens"] + usage["completion_tokens"])
        self.log.write("embedding", model=self.embedding_model, inputs=len(texts), usage=usage,
                       seconds=round(time.monotonic() - started, 3))
        return vectors

    def chat(self, messages: list[dict], tools: list[dict] | None = None, tool_choice: Any = None,
             response_format: dict | None = None, max_tokens: int | None = None) -> dict:
        """One chat completion; returns the assistant message (``content``, ``tool_calls``) and logs it."""
        self.budget.check_tokens("a model call")
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools:
            body["tools"] = tools
        if tool_choice is not None:
            body["tool_choice"] = tool_choice
        if response_format is not None:
            body["response_format"] = response_format
        if max_tokens:
            body["max_tokens"] = int(max_tokens)
        data = self._post("/chat/completions", body)
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise ModelError("/chat/completions: no choices in the answer")
        message = choices[0].get("message") if isinstance(choices[0].get("message"), dict) else {}
        usage = _usage(data)
        self.budget.add_tokens(usage["prompt_tokens"] + usage["completion_tokens"])
        self.log.write("model", model=data.get("model") or self.model, message=message.get("content") or "",
                       reasoning=message.get("reasoning_content") or message.get("reasoning") or None,
                       tool_calls=message.get("tool_calls") or [], usage=usage,
                       finish_reason=choices[0].get("finish_reason"))
        return message

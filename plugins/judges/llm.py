"""``llm-judge``: the semantic-match evidence judge through the model proxy (Dr-CiK Appendix H.1;
judge model Appendix D.2: the profile ``agent_profiles/judge-gemini-3-flash.yaml``).

The paper states only that an LLM judges whether a ground-truth evidence item semantically
matches at least one synthesized item in the top K_t.  Our setting, written down once:

- one request per ground-truth item, against the numbered top-K_t list (1-based, the agent's
  order), over OpenAI Chat Completions (``/v1/chat/completions``: OpenRouter, OpenAI or a
  compatible server; other providers are refused with a clear reason);
- temperature 0, no seed, at most :data:`MAX_TOKENS` output tokens; the answer is a JSON
  object ``{"match": true|false, "item": <number>|null}`` (a fenced ```json block is
  accepted); anything else — not JSON, a missing or non-boolean ``match``, a matched
  ``item`` outside 1..K — is a ``malformed`` verdict with the raw answer kept;
- the prompt (:data:`PROMPT_VERSION`) is strict on dates, times, counts and numbers and on
  modal and hedging words, because the paper's qualitative analysis (Appendix J) finds that
  synthesis loses numerical anchors and modal qualifiers; a change of the prompt text must
  change the version.

Each judge call is one proxy episode (its ``proxy.jsonl`` under the model's log folder), so
requests and answers are recorded with usage and cost like any model call.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from harness import VERDICT_ERROR as ERROR, VERDICT_MALFORMED as MALFORMED, Judge, Verdict
from harness.wire import DUMMY_API_KEY
from harness import CostCapReached

PROMPT_VERSION = "judge-prompt-v1"
MAX_TOKENS = 256
TIMEOUT_S = 120.0
RAW_CHARS = 2000
PATH = "/v1/chat/completions"

SYSTEM_PROMPT = "You are a strict evaluator of evidence gathered for time-series forecasting. Answer with JSON only."

USER_TEMPLATE = """Ground-truth evidence item:
<<<
{item}
>>>

Synthesized evidence items, numbered:
{candidates}

Does at least one numbered item state the same fact as the ground-truth item?
Rules:
- Judge meaning, not wording: a paraphrase of the same fact is a match.
- Dates, times, durations, counts, amounts and other numbers stated in the ground-truth item must
  agree exactly; a different, shifted or missing one is not a match.
- Modal and hedging words matter: "will" is not "may", "always" is not "sometimes", "increase" is not
  "decrease"; a change of certainty or direction is not a match.
- An item that contains the fact among other facts is a match; an item on the same topic that lacks
  the fact is not.
Answer with a single JSON object and nothing else:
{{"match": true or false, "item": <the number of the best matching item, or null>}}"""


def build_messages(item: str, candidates: Sequence[str]) -> list[dict[str, str]]:
    """The request's messages for one ground-truth ``item`` against the numbered ``candidates``."""
    numbered = "\n".join(f"{i}. " + c.strip().replace("\n", "\n   ") for i, c in enumerate(candidates, 1))
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": USER_TEMPLATE.format(item=item.strip(), candidates=numbered)}]


_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.S)


def parse_answer(text: Any, n_candidates: int) -> Verdict:
    """A verdict from the judge's answer text (module docstring rules); never raises."""
    if not isinstance(text, str) or not text.strip():
        return Verdict(None, status=MALFORMED, reason="empty answer", raw=None)
    raw = text[:RAW_CHARS]
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        data = json.loads(body)
    except ValueError:
        return Verdict(None, status=MALFORMED, reason="answer is not JSON", raw=raw)
    if not isinstance(data, dict) or not isinstance(data.get("match"), bool):
        return Verdict(None, status=MALFORMED, reason="'match' missing or not a boolean", raw=raw)
    if not data["match"]:
        return Verdict(False, None, raw=raw)
    index = data.get("item")
    if isinstance(index, bool) or not isinstance(index, int) or not 1 <= index <= n_candidates:
        return Verdict(None, status=MALFORMED, reason=f"'item' {index!r} is not a number in 1..{n_candidates}",
                       raw=raw)
    return Verdict(True, index, raw=raw)


class LLMJudge(Judge):
    """Semantic match by an LLM through the proxy (module docstring).  ``model``: a
    :class:`harness.ModelClient`; the registered instance has none and
    :meth:`bind_model` gives a bound copy."""

    name = "llm-judge"
    version = PROMPT_VERSION
    kind = "llm"

    def __init__(self, model: Any = None):
        self.model = model

    def bind_model(self, model: Any) -> "LLMJudge":
        return type(self)(model)

    @property
    def label(self) -> str:
        model = getattr(getattr(self.model, "profile", None), "model", None)
        return f"{self.name}@{self.version} ({self.kind}{', ' + model if model else ''})"

    def request_body(self, item: str, candidates: Sequence[str]) -> dict[str, Any]:
        profile = self.model.profile
        limit = "max_completion_tokens" if profile.provider == "openai" else "max_tokens"
        return {"model": profile.model, "messages": build_messages(item, candidates), "temperature": 0,
                limit: MAX_TOKENS}

    def judge(self, item: str, candidates: Sequence[str]) -> Verdict:
        if not candidates:
            return Verdict(False, None)
        if self.model is None:
            return Verdict(None, status=ERROR, reason="llm-judge has no model (give a judge profile)")
        profile = self.model.profile
        if profile.provider not in ("openai", "openrouter", "custom", None) or not profile.model:
            return Verdict(None, status=ERROR, reason=f"llm-judge speaks Chat Completions; profile {profile.name!r} "
                                                      f"(provider {profile.provider!r}) is not usable")
        body = self.request_body(item, candidates)
        headers = {"authorization": f"Bearer {DUMMY_API_KEY}"}
        try:
            with self.model.call("judge") as call:
                answer = call.request("POST", PATH, body, headers, TIMEOUT_S)
        except OSError as exc:
            return Verdict(None, status=ERROR, reason=f"{type(exc).__name__}: {exc}")
        except CostCapReached as exc:
            return Verdict(None, status=ERROR, reason=str(exc))
        if answer.status != 200:
            return Verdict(None, status=ERROR, reason=f"HTTP {answer.status}")
        try:
            data = answer.json()
            text = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            return Verdict(None, status=MALFORMED, reason="response has no message content")
        return parse_answer(text, len(candidates))

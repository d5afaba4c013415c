# Over 500 lines: one Direct Prompt forecaster (prompt, proxy round trips, parsing, retries) kept in one place.
"""``llm-dp``: the Direct Prompt forecaster of Context is Key (Dr-CiK Section 5.1, Appendix G "Forecasters").

A zero-shot LLM is shown the history as ``(timestamp, value)`` lines, the
context block (the condition's text; empty under No Context), and every future
timestamp listed explicitly, one per line (a numpy array repr would collapse
to "..." past 1,000 entries).  It answers with ``(timestamp, value)`` lines
inside ``<forecast>…</forecast>``; each answer is one sample path.

Sampling (rejection sampling in bounded rounds):

- round 1 asks for S answers, each later round for the ones still missing,
  at most ``max_rounds`` rounds (default 3, as Context is Key's ``n_retries``);
- an answer is *invalid* when it has no ``<forecast>`` block, a line that is
  not a ``(timestamp, value)`` pair, a requested timestamp missing or given
  twice, a non-finite value, or was cut by the output limit; invalid answers
  are counted (``info["invalid"]``, reasons in ``info["invalid_reasons"]``)
  and re-asked;
- fewer than S valid answers is a :class:`ForecastError` — never padded;
- a horizon whose answer would exceed the model's output limit
  (``max_output_tokens``; estimated by :func:`estimate_output_tokens`) fails
  before any request, with that reason.

Model access: the forecaster runs on the host and talks to the harness model
proxy (:mod:`harness.proxy`): each ``forecast`` call is one proxy episode on
its own Unix socket (a call of :class:`harness.ModelClient`, the run's one way to a model), so its token usage and cost
(equation (1) at the profile's prices) are recorded per task
(``Forecast.info["usage"]``; also on the ``info`` of the raised
:class:`DirectPromptError`).  Wire format by the profile's provider:
``anthropic`` → Anthropic Messages (``/v1/messages``, one answer per request);
``openai``, ``openrouter``, ``custom`` → OpenAI Chat Completions
(``/v1/chat/completions``; ``n`` answers per request where the provider
supports it).  ``google`` is refused: the paper reaches Gemini through
OpenRouter (Appendix G "Infrastructure").

Each request carries a seed derived from ``request.seed`` and the request's
index (distinct per request, so one-answer requests are not identical on a
seeded provider); provider-side determinism is best effort.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from harness import Forecast, Forecaster, ForecastError, ForecastRequest, lazy_module
from harness import hookimpl
from harness import CostCapReached, ModelCall, ModelClient
from tsagent_plugins.forecasters._common import Deadline, check_request

if TYPE_CHECKING:  # numpy and pandas load when a forecast is parsed, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
MAX_DIGITS = 6
SYSTEM_PROMPT = "You are a useful forecasting assistant."
DEFAULT_MAX_OUTPUT_TOKENS = 16384
DEFAULT_MAX_ROUNDS = 3
ANTHROPIC_VERSION = "2023-06-01"


# -- prompt ---------------------------------------------------------------------------------------

def format_value(value: float, max_digits: int = MAX_DIGITS) -> str:
    """Up to ``max_digits`` significant digits; integers of that size or more without exponent."""
    if abs(value) >= 10 ** max_digits:
        return f"{value:.0f}"
    return f"{value:.{max_digits}g}"


def format_timestamp(ts: pd.Timestamp) -> str:
    return ts.strftime(TIMESTAMP_FORMAT)


def build_prompt(history: pd.Series, future_index: pd.DatetimeIndex, context: str | None) -> str:
    """The Direct Prompt user message: context block, history lines, every future timestamp listed."""
    lines = "\n".join(f"({format_timestamp(t)}, {format_value(float(v))})" for t, v in history.items())
    wanted = "\n".join(format_timestamp(t) for t in future_index)
    n = len(future_index)
    return (
        "I have a time series forecasting task for you.\n\n"
        "Here is some context about the task. Make sure to factor in any background knowledge, "
        "satisfy any constraints, and respect any scenarios.\n"
        f"<context>\n{(context or '').strip()}\n</context>\n\n"
        "Here is a historical time series in (timestamp, value) format:\n"
        f"<history>\n{lines}\n</history>\n\n"
        f"Now please predict the value at the following {n} timestamp{'s' if n != 1 else ''}:\n"
        f"{wanted}\n\n"
        "Return the forecast in (timestamp, value) format in between <forecast> and </forecast> tags, "
        "one line per timestamp above.\n"
        "Do not include any other information (e.g., comments) in the forecast.\n\n"
        "Example:\n<history>\n(t1, v1)\n(t2, v2)\n(t3, v3)\n</history>\n"
        "<forecast>\n(t4, v4)\n(t5, v5)\n</forecast>\n"
    )


def text_tokens(text: str) -> int:
    """Token estimate of answer text: digits in runs of up to three per token (as the
    cl100k/o200k tokenizers split numbers), every other character one token.
    Measured against cl100k on ``(timestamp, value)`` lines: 1.0-1.2x the true count."""
    digits = sum(math.ceil(len(run) / 3) for run in _DIGITS.findall(text))
    return digits + len(_DIGITS.sub("", text))


def estimate_output_tokens(history: pd.Series, future_index: pd.DatetimeIndex) -> int:
    """Tokens of a complete answer (:func:`text_tokens`): the ``<forecast>`` block with the
    future timestamps and, for each, the history's longest value."""
    values = [format_value(float(v)) for v in history.to_numpy()] or ["0"]
    widest = max(values, key=text_tokens)
    lines = [f"({format_timestamp(t)}, {widest})" for t in future_index]
    return len(_TAG_TOKENS) + sum(text_tokens(line) + 1 for line in lines)


_DIGITS = re.compile(r"\d+")
_TAG_TOKENS = ("<", "forecast", ">", "\n", "</", "forecast", ">")


# -- answers -------------------------------------------------------------------------------------

class InvalidSample(ValueError):
    """One answer is not a usable sample path; the message says why."""


_BLOCK = re.compile(r"<forecast>(.*?)</forecast>", re.DOTALL | re.IGNORECASE)
_PAIR = re.compile(r"^\(?\s*['\"]?(?P<ts>[^,()'\"]+?)['\"]?\s*,\s*(?P<v>[^,()]+?)\s*\)?\s*,?$")


def parse_forecast(text: str | None, future_index: pd.DatetimeIndex) -> np.ndarray:
    """The values of the last ``<forecast>`` block of ``text`` at ``future_index`` (shape (H,)).

    Raises :class:`InvalidSample` (see the module docstring for the rules).
    Timestamps not asked for are ignored.
    """
    if not text:
        raise InvalidSample("empty answer")
    blocks = _BLOCK.findall(text)
    if not blocks:
        raise InvalidSample("no <forecast>…</forecast> block")
    wanted = {format_timestamp(t): i for i, t in enumerate(future_index)}
    by_time = {t: i for i, t in enumerate(future_index)}
    values = np.full(len(future_index), np.nan)
    seen = np.zeros(len(future_index), dtype=bool)
    for line in blocks[-1].strip().splitlines():
        line = line.strip()
        if not line:
            continue
        match = _PAIR.match(line)
        if not match:
            raise InvalidSample(f"line {line[:40]!r} is not a (timestamp, value) pair")
        stamp = match.group("ts").strip()
        index = wanted.get(stamp)
        if index is None:
            import pandas as pd  # imported on use: pandas is slow to load

            try:
                index = by_time.get(pd.Timestamp(stamp))
            except (ValueError, TypeError):
                raise InvalidSample(f"unreadable timestamp {stamp[:40]!r}") from None
        if index is None:
            continue
        try:
            value = float(match.group("v").strip().rstrip(","))
        except ValueError:
            raise InvalidSample(f"value {match.group('v')[:20]!r} at {stamp} is not a number") from None
        if not math.isfinite(value):
            raise InvalidSample(f"value at {stamp} is not finite")
        if seen[index]:
            raise InvalidSample(f"timestamp {stamp} given twice")
        seen[index], values[index] = True, value
    if not seen.all():
        missing = format_timestamp(future_index[int(np.flatnonzero(~seen)[0])])
        raise InvalidSample(f"{int((~seen).sum())} of {len(future_index)} timestamps missing (first: {missing})")
    return values


# -- wire formats --------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelAnswer:
    """One completion: its text and whether the output limit cut it."""

    text: str | None
    truncated: bool


class _ChatCompletions:
    """OpenAI Chat Completions (OpenAI, OpenRouter, vLLM and other compatible servers)."""

    path = "/v1/chat/completions"
    supports_n = True

    def __init__(self, provider: str | None):
        self.limit_field = "max_completion_tokens" if provider == "openai" else "max_tokens"

    def request(self, model: str, prompt: str, n: int, seed: int, max_tokens: int,
                temperature: float | None) -> tuple[dict, dict]:
        body: dict[str, Any] = {"model": model, "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                                                              {"role": "user", "content": prompt}],
                                self.limit_field: max_tokens, "seed": seed}
        if n > 1:
            body["n"] = n
        if temperature is not None:
            body["temperature"] = temperature
        from harness.wire import DUMMY_API_KEY  # the proxy's modules load with the first request

        return body, {"authorization": f"Bearer {DUMMY_API_KEY}"}

    def answers(self, body: Any) -> list[ModelAnswer]:
        choices = body.get("choices") if isinstance(body, dict) else None
        out = []
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict):
                continue
            message = choice.get("message")
            text = message.get("content") if isinstance(message, dict) else None
            out.append(ModelAnswer(text if isinstance(text, str) else None, choice.get("finish_reason") == "length"))
        return out


class _AnthropicMessages:
    """Anthropic Messages: one answer per request (no ``n``), no seed."""

    path = "/v1/messages"
    supports_n = False

    def request(self, model: str, prompt: str, n: int, seed: int, max_tokens: int,
                temperature: float | None) -> tuple[dict, dict]:
        body: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "system": SYSTEM_PROMPT,
                                "messages": [{"role": "user", "content": prompt}]}
        if temperature is not None:
            body["temperature"] = min(temperature, 1.0)
        from harness.wire import DUMMY_API_KEY  # the proxy's modules load with the first request

        return body, {"x-api-key": DUMMY_API_KEY, "anthropic-version": ANTHROPIC_VERSION}

    def answers(self, body: Any) -> list[ModelAnswer]:
        if not isinstance(body, dict) or not isinstance(body.get("content"), list):
            return []
        text = "".join(b.get("text", "") for b in body["content"] if isinstance(b, dict) and b.get("type") == "text")
        return [ModelAnswer(text, body.get("stop_reason") == "max_tokens")]


def wire_for(provider: str | None):
    """The wire format for a profile's provider (see the module docstring)."""
    if provider == "anthropic":
        return _AnthropicMessages()
    if provider in ("openai", "openrouter", "custom", None):
        return _ChatCompletions(provider)
    raise ForecastError(f"llm-dp speaks Chat Completions and Anthropic Messages; provider {provider!r} is not "
                        "supported (reach Gemini models through provider openrouter)")


# -- the forecaster ---------------------------------------------------------------------------------

@dataclass
class _Tally:
    valid: list[np.ndarray] = field(default_factory=list)
    invalid: Counter = field(default_factory=Counter)
    requests: int = 0
    failed_requests: list[str] = field(default_factory=list)
    rounds: int = 0
    budget_cap: str | None = None


class DirectPromptError(ForecastError):
    """A Direct Prompt failure; ``info`` carries what was spent (usage, rounds, invalid answers)."""

    def __init__(self, message: str, info: dict):
        super().__init__(message)
        self.info = info


OPTIONS = ("max_output_tokens", "max_rounds", "samples_per_request", "temperature", "concurrency")


class DirectPromptForecaster(Forecaster):
    """Direct Prompt (Context is Key) through the model proxy.  See the module docstring.

    ``model``: a :class:`harness.ModelClient` (None: :meth:`forecast` fails, saying how to bind one).
    ``max_output_tokens``: the model's output limit (default: the profile's
    ``options.max_output_tokens``, else 16,384).  ``max_rounds``: sampling rounds (3).
    ``samples_per_request``: answers asked per Chat Completions request (default: S on
    openai/custom, 1 on openrouter; Anthropic Messages always 1).  ``temperature``: 1.0
    as in Context is Key (None: the provider's default).  ``concurrency``: requests in
    flight per round (1 keeps scripted answers in order).
    """

    name = "llm-dp"
    uses_context = True
    needs_model = True
    submission_type = "direct_llm"

    def __init__(self, model: ModelClient | None = None, *, max_output_tokens: int | None = None,
                 max_rounds: int = DEFAULT_MAX_ROUNDS, samples_per_request: int | None = None,
                 temperature: float | None = 1.0, concurrency: int = 1):
        if max_rounds < 1 or concurrency < 1 or (samples_per_request is not None and samples_per_request < 1):
            raise ValueError("max_rounds, concurrency and samples_per_request must be >= 1")
        if max_output_tokens is not None and max_output_tokens < 1:
            raise ValueError("max_output_tokens must be >= 1")
        self.model = model
        self.max_output_tokens = max_output_tokens
        self.max_rounds = int(max_rounds)
        self.samples_per_request = samples_per_request
        self.temperature = temperature
        self.concurrency = int(concurrency)

    # configuration ---------------------------------------------------------------------------
    def configured(self, **options: Any) -> "DirectPromptForecaster":
        """A copy with ``options`` (names in :data:`OPTIONS`) changed; ValueError for unknown ones."""
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)} (known: {', '.join(OPTIONS)})")
        current = {k: getattr(self, k) for k in OPTIONS}
        return DirectPromptForecaster(self.model, **{**current, **options})

    def bind_model(self, model: ModelClient) -> "DirectPromptForecaster":
        """A copy that calls ``model``."""
        copy = self.configured()
        copy.model = model
        return copy

    def output_limit(self) -> int:
        if self.max_output_tokens is not None:
            return self.max_output_tokens
        value = self.model.profile.options.get("max_output_tokens") if self.model else None
        return int(value) if isinstance(value, int) and value > 0 else DEFAULT_MAX_OUTPUT_TOKENS

    def per_request(self, wire, n_samples: int) -> int:
        if not wire.supports_n:
            return 1
        if self.samples_per_request is not None:
            return self.samples_per_request
        option = self.model.profile.options.get("samples_per_request")
        if isinstance(option, int) and option > 0:
            return option
        return 1 if self.model.profile.provider == "openrouter" else n_samples

    # forecasting -----------------------------------------------------------------------------
    def forecast(self, request: ForecastRequest) -> Forecast:
        _, horizon = check_request(request)
        deadline = Deadline(request.time_limit)
        if self.model is None:
            raise ForecastError("llm-dp has no model: give an agent profile (harness run --agent PROFILE or "
                                "params.agent, or params.model_backend: scripted with params.script)")
        profile = self.model.profile
        if not profile.model:
            raise ForecastError(f"agent profile {profile.name!r} names no model")
        wire = wire_for(profile.provider)
        limit = self.output_limit()
        needed = estimate_output_tokens(request.history, request.future_index)
        info: dict[str, Any] = {"uses_context": True, "model": profile.model, "profile": profile.name,
                                "wire": wire.path, "output_tokens_estimate": needed, "max_output_tokens": limit}
        if needed > limit:
            raise DirectPromptError(f"horizon of {horizon} steps is too long for the model's output limit: the "
                                    f"answer needs about {needed} tokens, the limit is {limit}", info)
        prompt = build_prompt(request.history, request.future_index, request.context)
        tally = _Tally()
        try:
            with self.model.call(str(request.history.name or "forecast")) as episode:
                self._sample(episode, wire, prompt, request, limit, deadline, tally)
        except CostCapReached as exc:
            raise DirectPromptError(f"no request sent: {exc}", info) from None
        info.update(self._summary(tally, episode))
        info["time_s"] = round(deadline.elapsed(), 4)
        if len(tally.valid) < request.n_samples:
            raise DirectPromptError(self._shortfall(tally, request, deadline), info)
        return Forecast(samples=np.vstack(tally.valid[:request.n_samples]), info=info)

    def _sample(self, episode: ModelCall, wire, prompt: str, request: ForecastRequest, limit: int,
                deadline: Deadline, tally: _Tally) -> None:
        """Rounds of requests.  A round asks for the missing answers and ends once that many
        answers came back (valid or not; a provider that ignores ``n`` gets more requests),
        or it sent one request per missing answer, or time or budget ran out."""
        n_per = self.per_request(wire, request.n_samples)
        index = itertools.count()

        def call(job):
            size, seed = job
            body, headers = wire.request(self.model.profile.model, prompt, size, seed, limit, self.temperature)
            timeout = max(deadline.remaining(), 0.001)
            try:
                answer = episode.request("POST", wire.path, body, headers, timeout)
            except OSError as exc:   # socket timeout included
                return None, f"{type(exc).__name__}: {exc}"
            if answer.status != 200:
                return None, f"HTTP {answer.status}: {_error_text(answer.body)}"
            try:
                return wire.answers(answer.json()), None
            except ValueError:
                return None, "answer is not JSON"

        def stop() -> bool:
            tally.budget_cap = tally.budget_cap or episode.budget_exceeded()
            return deadline.expired() or tally.budget_cap is not None

        while len(tally.valid) < request.n_samples and tally.rounds < self.max_rounds:
            if stop():
                return
            tally.rounds += 1
            missing = request.n_samples - len(tally.valid)
            received = sent = 0
            while received < missing and sent < missing:
                if stop():
                    return
                need = missing - received
                sizes = [min(n_per, need - k) for k in range(0, need, n_per)][:max(1, self.concurrency)]
                sizes = sizes[:missing - sent]
                jobs = [(size, _seed(request.seed, next(index))) for size in sizes]
                if len(jobs) > 1:
                    from concurrent.futures import ThreadPoolExecutor

                    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                        results = list(pool.map(call, jobs))
                else:
                    results = [call(jobs[0])]
                sent += len(jobs)
                for answers, problem in results:
                    tally.requests += 1
                    if problem is not None:
                        tally.failed_requests.append(problem)
                        received += 1   # a failed request spends one answer of the round
                        continue
                    received += max(1, len(answers))
                    for answer in answers:
                        self._take(answer, request, limit, tally)

    @staticmethod
    def _take(answer: ModelAnswer, request: ForecastRequest, limit: int, tally: _Tally) -> None:
        if answer.truncated:
            tally.invalid[f"cut by the output limit of {limit} tokens"] += 1
            return
        try:
            tally.valid.append(parse_forecast(answer.text, request.future_index))
        except InvalidSample as exc:
            tally.invalid[str(exc)] += 1

    @staticmethod
    def _summary(tally: _Tally, episode: ModelCall) -> dict:
        usage = episode.usage.to_dict() if episode.usage is not None else {}
        usage["errors"] = [dataclasses.asdict(e) if dataclasses.is_dataclass(e) else e
                           for e in usage.get("errors", [])]
        return {"rounds": tally.rounds, "requests": tally.requests, "valid": len(tally.valid),
                "budget_cap": tally.budget_cap,
                "invalid": sum(tally.invalid.values()), "invalid_reasons": dict(tally.invalid.most_common(5)),
                "failed_requests": tally.failed_requests[:5], "proxy_episode": episode.key, "usage": usage}

    def _shortfall(self, tally: _Tally, request: ForecastRequest, deadline: Deadline) -> str:
        text = f"{len(tally.valid)} of {request.n_samples} valid samples after {tally.rounds} round(s)"
        why = []
        if deadline.expired():
            why.append(f"time limit of {request.time_limit:g} s reached")
        if tally.budget_cap:
            why.append(f"budget cap {tally.budget_cap} reached")
        if tally.invalid:
            reason, count = tally.invalid.most_common(1)[0]
            why.append(f"{sum(tally.invalid.values())} invalid answer(s), most often: {reason} ({count}x)")
        if tally.failed_requests:
            why.append(f"{len(tally.failed_requests)} failed request(s), first: {tally.failed_requests[0]}")
        return text + (": " + "; ".join(why) if why else "")


def _seed(base: int, k: int) -> int:
    """A per-request seed: distinct per request index ``k``, reproducible from ``base``."""
    return (int(base) * 1_000_003 + k) % (2 ** 31 - 1)


def _error_text(body: bytes) -> str:
    try:
        data = json.loads(body)
        error = data.get("error") if isinstance(data, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        if isinstance(message, str):
            return message[:200]
    except ValueError:
        pass
    return body[:200].decode("utf-8", "replace")


@hookimpl
def register_forecasters(register):
    register(DirectPromptForecaster())

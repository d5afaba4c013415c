"""The stage engine of ``harness dr-generate``: generate-until-correct (Dr-CiK Appendix D.2).

A *stage* (one step of Section 4.1, or one of its parts) has *units* (e.g. one task, one task ×
distractor subtype).  For each unit the engine makes at most ``rounds`` *attempts* (D.2: "each stage
retries for up to 5 rounds"); an attempt:

1. asks the stage's generator model one or more prompts of Appendix L (:meth:`Attempt.ask`); an answer
   that is not JSON of the prompt's pydantic schema is *malformed*: the attempt ends with status
   ``malformed`` and the unit is regenerated (a malformed answer is a failed attempt and counts as one
   of the rounds, so a model that never answers in form cannot loop for ever);
2. runs the stage's code checks (e.g. the chain has no branch, cycle or shortcut): a problem ends the
   attempt with status ``check_failed`` and the judge is not asked;
3. asks the stage's judge (Appendix L.2) once per judged part; the attempt is ``accepted`` only when
   every verdict is ``correct`` (``needs_correction``, ``uncertain`` and a malformed verdict reject:
   D.2 selects judges at least as strict as humans, and "uncertain" is not a pass).

A unit with no accepted attempt after ``rounds`` attempts is *flagged for human repair*: the output of its
last attempt that passed the schema (if any) is kept so the generation goes on, and the flag is carried
into the output and the summary; nothing is silently dropped or passed.

Every attempt is appended to ``generation/<stage>/<unit>/attempts.jsonl`` (prompt name and sha256,
model, response, verdict and reason, tokens and cost of the generator and the judge); the unit's outcome
is written last, atomically, to ``generation/<stage>/<unit>/result.json``.  ``--resume`` keeps every unit
with a ``result.json`` and redoes the others from their first attempt (their partial ``attempts.jsonl``
is replaced), so an accepted unit is never asked again.

Units of a stage run concurrently (``jobs``), each with its own proxy calls on the shared model clients
(rate limiter and cost cap are the clients').
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel, ValidationError

from harness.wire import DUMMY_API_KEY
from tsagent_plugins.tasks.drcik.generation import prompts
from tsagent_plugins.tasks.drcik.generation.schemas import JudgeVerdict

MAX_TOKENS = 16384
TIMEOUT_S = 600.0
ACCEPTED, REJECTED, MALFORMED, CHECK_FAILED, ERROR = "accepted", "rejected", "malformed", "check_failed", "error"


class Malformed(Exception):
    """A model's answer is not JSON of the expected schema (the message says why)."""


class ModelError(Exception):
    """No answer: a failed request, a refused one (budget), or an HTTP error."""


@dataclass
class Unit:
    """One unit of a stage: ``id`` (unique in the stage, a file name), ``data`` (whatever the stage needs)."""

    id: str
    data: Any = None


@dataclass
class UnitResult:
    """The outcome of one unit: ``output`` (the accepted one, else the last schema-valid one, else None),
    ``accepted``, ``flagged`` (for human repair), ``attempts``, ``reason`` (of the last rejection)."""

    stage: str
    unit: str
    output: Any
    accepted: bool
    flagged: bool
    attempts: int
    reason: str | None = None

    def to_dict(self) -> dict:
        return {"stage": self.stage, "unit": self.unit, "accepted": self.accepted, "flagged": self.flagged,
                "attempts": self.attempts, "first_pass": self.accepted and self.attempts == 1,
                "reason": self.reason, "output": self.output}


@dataclass
class JudgeCall:
    """One judged part of an attempt: the judge's prompt name and its placeholder values."""

    prompt: str
    values: dict[str, Any]
    label: str = ""


@dataclass
class Stage:
    """A stage: ``name`` (folder under ``generation/``), ``step`` (1-8 of Section 4.1), ``generate(unit,
    attempt) -> output`` (JSON-able; uses :meth:`Attempt.ask`), ``checks(unit, output) -> problems``,
    ``judge(unit, output) -> [JudgeCall]`` (empty: no judge guards the stage)."""

    name: str
    step: int
    generate: Callable[[Unit, "Attempt"], Any]
    checks: Callable[[Unit, Any], list[str]] = lambda unit, output: []
    judge: Callable[[Unit, Any], list[JudgeCall]] = lambda unit, output: []
    judge_name: str | None = None


#: providers whose API the engine's requests speak (OpenAI Chat Completions); Gemini is reached through OpenRouter
CHAT_PROVIDERS = ("openai", "openrouter", "custom", None)


def chat_body(profile: Any, prompt: str, seed: int | None = None) -> dict:
    """A Chat Completions request of one user message (``max_tokens`` named as the provider wants it) with the
    generation's ``seed`` (provider-side determinism is best effort)."""
    limit = "max_completion_tokens" if profile.provider == "openai" else "max_tokens"
    body = {"model": profile.model, "messages": [{"role": "user", "content": prompt}], limit: MAX_TOKENS}
    if seed is not None:
        body["seed"] = seed
    return body


def answer_text(data: Any) -> str | None:
    try:
        text = data["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None
    return text if isinstance(text, str) else None


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_json(text: str | None, schema: type[BaseModel] | None) -> Any:
    """The JSON value of ``text`` (a bare object or one fenced block), validated by ``schema``
    (its ``model_dump``); :class:`Malformed` saying why not.  A JSON ``null`` is returned as None without a
    schema and is Malformed with one (a model answering ``null`` is a failed attempt, never a crash)."""
    if text is None or not text.strip():
        raise Malformed("empty answer")
    raw = text.strip()
    fenced = _FENCE.findall(raw)
    candidates = [raw] + fenced
    for candidate in candidates:
        try:
            value = json.loads(candidate)
            break
        except ValueError:
            continue
    else:
        start, end = raw.find("{"), raw.rfind("}")
        try:
            value = json.loads(raw[start:end + 1]) if 0 <= start < end else None
        except ValueError:
            value = None
        if value is None:
            raise Malformed("not JSON")
    if schema is None:
        return value
    if value is None:
        raise Malformed(f"{schema.__name__}: the answer is JSON null")
    try:
        return schema.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "<root>"
        raise Malformed(f"{schema.__name__}: {where}: {first['msg']}") from None


class _UnitCalls:
    """The proxy calls of one unit, one per model role, opened on first use and closed with the unit."""

    def __init__(self, label: str):
        self.label = label
        self.stack = ExitStack()
        self.calls: dict[str, Any] = {}

    def __enter__(self) -> "_UnitCalls":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stack.close()

    def call(self, role: str, client: Any) -> Any:
        if role not in self.calls:
            self.calls[role] = self.stack.enter_context(client.call(f"{self.label}__{role}"))
        return self.calls[role]


class Attempt:
    """One attempt of one unit: :meth:`ask` sends a prompt to the stage's generator, recording each call."""

    def __init__(self, engine: "Engine", stage: Stage, unit: Unit, role: str, calls: _UnitCalls):
        self.engine, self.stage, self.unit, self.role = engine, stage, unit, role
        self.unit_calls = calls
        self.calls: list[dict] = []

    def ask(self, prompt_name: str, values: dict[str, Any], schema: type[BaseModel] | None,
            role: str | None = None) -> Any:
        """Render ``prompt_name`` with ``values``, ask the model of ``role`` (default the stage's
        generator), and return the answer parsed and validated by ``schema``; Malformed otherwise."""
        prompt = prompts.load(prompt_name)
        text, record = self.engine.ask(role or self.role, prompt, prompt.render(**values), self.unit_calls)
        record["prompt"] = prompt_name
        self.calls.append(record)
        return parse_json(text, schema)

    def ask_input(self, prompt_name: str, input_text: str, schema: type[BaseModel] | None,
                  role: str | None = None) -> Any:
        """As :meth:`ask` for an Appendix L.3/L.4 instruction prompt, its input appended
        (:meth:`prompts.Prompt.with_input`)."""
        prompt = prompts.load(prompt_name)
        text, record = self.engine.ask(role or self.role, prompt, prompt.with_input(input_text), self.unit_calls)
        record["prompt"] = prompt_name
        self.calls.append(record)
        return parse_json(text, schema)


class Engine:
    """Runs stages for one generation (module docstring).

    ``out``: the output folder (attempts under ``out/generation/``); ``clients``: role (e.g.
    ``generator``, ``judge_entity``) -> :class:`harness.ModelClient`; ``rounds``: attempts per unit;
    ``jobs``: units in flight; ``progress``: ``(stage, done, total)`` callback; ``seed``: sent with every
    request.
    """

    def __init__(self, out: Path, clients: dict[str, Any], rounds: int = 5, jobs: int = 1,
                 progress: Callable[[str, int, int], None] | None = None, seed: int | None = None):
        if rounds < 1 or jobs < 1:
            raise ValueError("rounds and jobs must be >= 1")
        self.out = Path(out)
        self.root = self.out / "generation"
        self.clients = clients
        self.rounds = rounds
        self.jobs = jobs
        self.seed = seed
        self.progress = progress or (lambda stage, done, total: None)
        self._lock = threading.Lock()

    # -- one model request -----------------------------------------------------------------------
    def ask(self, role: str, prompt: prompts.Prompt, text: str, unit: "_UnitCalls") -> tuple[str | None, dict]:
        """One request to the model of ``role`` on the unit's call of that model (one proxy episode per unit
        and model, so a scripted model's turns run on across the unit's attempts); ``(answer text or None,
        attempt record)`` with the request's tokens and cost (the call's usage before and after)."""
        client = self.clients[role]
        record: dict[str, Any] = {"role": role, "prompt_sha256": prompt.sha256, "model": client.profile.model,
                                  "profile": client.profile.name}
        call = unit.call(role, client)
        before = call.usage_now()
        try:
            answer = call.request("POST", "/v1/chat/completions", chat_body(client.profile, text, self.seed),
                                  {"authorization": f"Bearer {DUMMY_API_KEY}"}, TIMEOUT_S)
        except OSError as exc:
            raise ModelError(f"{role}: {type(exc).__name__}: {exc}") from None
        after = call.usage_now()
        record.update(tokens=int(after.total_tokens - before.total_tokens),
                      cost_usd=round(float(after.cost_usd - before.cost_usd), 8))
        if answer.status != 200:
            record["response"] = answer.body[:500].decode("utf-8", "replace")
            raise ModelError(f"{role}: HTTP {answer.status}: {record['response'][:200]}")
        try:
            text_out = answer_text(answer.json())
        except ValueError:
            text_out = None
        record["response"] = text_out
        return text_out, record

    # -- stages ----------------------------------------------------------------------------------
    def run(self, stage: Stage, units: list[Unit], role: str = "generator") -> dict[str, UnitResult]:
        """Every unit of ``stage`` to an outcome (kept ones read back from ``result.json``)."""
        folder = self.root / stage.name
        results: dict[str, UnitResult] = {}
        todo = []
        for unit in units:
            kept = _read_result(folder / unit.id / "result.json")
            if kept is not None:
                results[unit.id] = kept
            else:
                todo.append(unit)
        done = len(results)
        self.progress(stage.name, done, len(units))
        if todo:
            with ThreadPoolExecutor(max_workers=self.jobs) as pool:
                for result in pool.map(lambda u: self._unit(stage, u, role, folder / u.id), todo):
                    results[result.unit] = result
                    done += 1
                    self.progress(stage.name, done, len(units))
        return {u.id: results[u.id] for u in units}

    def _unit(self, stage: Stage, unit: Unit, role: str, folder: Path) -> UnitResult:
        folder.mkdir(parents=True, exist_ok=True)
        log = folder / "attempts.jsonl"
        log.write_text("")  # a unit without result.json starts again from its first attempt
        with _UnitCalls(f"{stage.name}__{unit.id}") as calls:
            return self._attempts(stage, unit, role, folder, log, calls)

    def _attempts(self, stage: Stage, unit: Unit, role: str, folder: Path, log: Path,
                  calls: _UnitCalls) -> UnitResult:
        kept_output, reason = None, None
        for n in range(1, self.rounds + 1):
            started = time.time()
            attempt = Attempt(self, stage, unit, role, calls)
            record: dict[str, Any] = {"stage": stage.name, "step": stage.step, "unit": unit.id, "attempt": n}
            judged: list[dict] = []
            output = None
            try:
                output = stage.generate(unit, attempt)
                problems = stage.checks(unit, output)
                kept_output = output
                if problems:
                    status, reason = CHECK_FAILED, "; ".join(problems)
                else:
                    status, reason = ACCEPTED, None
                    for part in stage.judge(unit, output):
                        verdict = self._judge(part, calls, judged)
                        if verdict is not None:
                            status, reason = REJECTED, verdict
                            break
            except Malformed as exc:
                status, reason = MALFORMED, str(exc)
            except ModelError as exc:
                status, reason = ERROR, str(exc)
            record.update(status=status, reason=reason, generator=attempt.calls, judge=judged,
                          tokens=sum(c.get("tokens", 0) for c in attempt.calls + judged),
                          cost_usd=round(sum(c.get("cost_usd", 0.0) for c in attempt.calls + judged), 8),
                          started_at=round(started, 3), duration_s=round(time.time() - started, 3))
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            if status == ACCEPTED:
                result = UnitResult(stage.name, unit.id, output, True, False, n)
                break
        else:
            result = UnitResult(stage.name, unit.id, kept_output, False, True, self.rounds, reason)
        _write_atomic(folder / "result.json", result.to_dict())
        return result

    def _judge(self, part: JudgeCall, calls: _UnitCalls, judged: list[dict]) -> str | None:
        """Ask one judge; None when it says ``correct``, else the rejection reason."""
        prompt = prompts.load(part.prompt)
        text, record = self.ask(part.prompt, prompt, prompt.render(**part.values), calls)
        record.update(prompt=part.prompt, part=part.label, values={k: str(v) for k, v in part.values.items()})
        judged.append(record)
        try:
            verdict = parse_json(text, JudgeVerdict)
        except Malformed as exc:
            record.update(verdict=MALFORMED, reason=str(exc))
            return f"{part.prompt}{' ' + part.label if part.label else ''}: malformed verdict ({exc})"
        record.update(verdict=verdict["judge"], reason=verdict.get("summary"))
        if verdict["judge"] == "correct":
            return None
        hint = verdict.get("correction_hint") or verdict.get("summary") or ""
        return f"{part.prompt}{' ' + part.label if part.label else ''}: {verdict['judge']}: {hint}".strip()


def _read_result(path: Path) -> UnitResult | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return UnitResult(data["stage"], data["unit"], data["output"], data["accepted"], data["flagged"],
                      data["attempts"], data.get("reason"))


def _write_atomic(path: Path, data: Any) -> None:
    # keys keep the answer's order: a resumed run fills later prompts from these outputs, and its requests
    # must be the uninterrupted run's, byte for byte
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def unit_id(*parts: str) -> str:
    """A file-name-safe unit id from ``parts`` (long ones shortened with a hash)."""
    text = "__".join(re.sub(r"[^A-Za-z0-9_.-]+", "-", p) for p in parts)
    return text if len(text) <= 100 else text[:80] + "-" + hashlib.sha256(text.encode()).hexdigest()[:12]

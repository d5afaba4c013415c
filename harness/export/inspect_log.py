"""A finished run as Inspect AI eval logs: ``harness export RUN --format inspect --out DIR``.

One ``.eval`` log per (task, agent) group of the run's rows, written by ``inspect_ai.log.write_eval_log``
(the ``inspect`` extra: ``pip install 'tsagent-harness[inspect]'``).  The agent of a row is its template
page's ``agent_column`` (``profile`` by default; e.g. the forecaster of an in-harness forecast).

* eval spec: the task name, ``task_id`` = the first 12 hex digits of the SHA-256 of the task spec file
  (of the episode parameters when the file is gone), the model (``none/<agent>`` for an agent without
  one), the agent as the solver with its profile, the run's settings and package versions as metadata;
* one sample per results row, its id the episode key: input = the prompt (``prompt.txt``, or the
  template's :class:`harness.EpisodeText` input), target and output from the template's ``text``
  (answer key read after the episode), scores = the template page's scored columns
  (:meth:`harness.ViewPage.scored_columns`, those with a number in the row: results.parquet plus the
  page's ``run_columns``; each carries the answer, which ``inspect view`` shows there), model usage
  and cost from the proxy's columns (Inspect's ``input_tokens`` exclude cached tokens, ours include them), ``total_time`` = ``episode_seconds`` and ``working_time``
  = ``agent_seconds``, the transcript from ``trajectory.json`` (:mod:`.transcript`) and the whole
  results row as metadata;
* a row whose status is ``failed`` or ``infra_failed`` is an errored sample (its error kind and
  message); an episode the run planned (``run.json``) but has no row for is an errored sample
  "not run", never dropped;
* results: per score, the mean over the samples that have it.
"""

from __future__ import annotations

import hashlib
import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.export.transcript import to_transcript
from harness.view.data import Run, load_run, read_trajectory, slug, with_run_columns
from harness.view.pages import EpisodeText, EpisodeView, ViewPage, registered_pages

#: Row statuses that make a sample errored (the harness's own: a template's other statuses are results).
FAILED = ("failed", "infra_failed")
NOT_RUN = "not run: the run has no result for this planned episode"
#: The answer is repeated (at most this many characters) on each score: ``inspect view`` shows a sample's answer
#: in its scoring tab only from there; the whole answer is the sample's output.
ANSWER_CHARS = 4000


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def _count(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None else 0


def _utc(value: Any) -> str | None:
    """``run.json``'s ``%Y-%m-%dT%H:%M:%S%z`` stamp as ISO 8601 in UTC, or None."""
    if not isinstance(value, str):
        return None
    for pattern in ("%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z"):
        try:
            return datetime.strptime(value, pattern).astimezone(timezone.utc).isoformat()
        except ValueError:
            continue
    return None


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def spec_hash(entry: dict) -> str:
    """The first 12 hex digits of the SHA-256 of the episode's task spec file (``run.json`` episode entry),
    or of its parameters when the file cannot be read."""
    try:
        data = Path(entry["task_file"]).read_bytes()
    except (KeyError, TypeError, OSError):
        data = json.dumps(entry.get("params"), sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:12]


def _usage(row: dict):
    from inspect_ai.model import ModelUsage

    prompt, cached, completion = (_count(row.get(c)) for c in ("prompt_tokens", "cached_tokens", "completion_tokens"))
    if not (prompt or completion):
        return None
    return ModelUsage(input_tokens=max(prompt - cached, 0), output_tokens=completion,
                      total_tokens=prompt + completion, input_tokens_cache_read=cached or None,
                      reasoning_tokens=_count(row.get("reasoning_tokens")) or None,
                      total_cost=_number(row.get("cost_usd")))


def _error(message: str):
    from inspect_ai.log import EvalError

    return EvalError(message=message, traceback=message, traceback_ansi=message)


def _row_error(row: dict, text: EpisodeText) -> str | None:
    if row.get("status") not in FAILED:
        return None
    parts = [str(row.get("status")), str(row.get("error_kind") or ""), str(row.get("error") or text.failure or "")]
    return ": ".join(p for p in parts if p)


def _text(page: ViewPage | None, view: EpisodeView) -> EpisodeText:
    if page is None or page.text is None:
        return EpisodeText()
    try:
        return page.text(view)
    except Exception as exc:  # noqa: BLE001 - a plugin's reader never breaks the export
        return EpisodeText(output=f"(the template could not read this episode: {type(exc).__name__}: {exc})")


def sample_for_row(run: Run, index: int, page: ViewPage | None, model: str):
    """The Inspect ``EvalSample`` of row ``index`` of ``run`` (see the module docstring)."""
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    row = run.row(index)
    folder = run.folder(index)
    view = EpisodeView(run.root, run.meta, row, run.rows, folder, reveal=True)
    text = _text(page, view)
    prompt = text.input if text.input is not None else (view.read_text("prompt.txt") or "")
    transcript = to_transcript(read_trajectory(folder), model)
    messages = transcript.messages or [ChatMessageUser(content=prompt)]
    answer = text.output or transcript.last_answer()
    shown = answer if len(answer) <= ANSWER_CHARS else answer[:ANSWER_CHARS] + " …"
    scores = {column: Score(value=value, answer=shown) for column in (page.scored_columns() if page else [])
              if (value := _number(row.get(column))) is not None}
    usage = _usage(row)
    error = _row_error(row, text)
    return EvalSample(
        id=str(row.get("episode") or f"row{index}"), epoch=1, input=prompt, target=text.target,
        messages=messages, output=ModelOutput.from_content(model, answer),
        scores=scores or None, metadata=_jsonable({k: v for k, v in row.items() if v is not None}),
        events=transcript.events, model_usage={model: usage} if usage else {},
        started_at=transcript.started.isoformat() if transcript.started else None,
        completed_at=transcript.completed.isoformat() if transcript.completed else None,
        total_time=_number(row.get("episode_seconds")), working_time=_number(row.get("agent_seconds")),
        error=_error(error) if error else None)


def _not_run_sample(entry: dict, model: str):
    from inspect_ai.log import EvalSample

    return EvalSample(id=str(entry.get("key")), epoch=1, input="", target="", metadata=_jsonable(entry),
                      error=_error(NOT_RUN))


def _agent_of(row: dict, page: ViewPage | None) -> str:
    column = page.agent_column if page else "profile"
    return str(row.get(column) or row.get("profile") or row.get("agent") or "unknown")


def _results(samples: list):
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    names = list(dict.fromkeys(name for s in samples for name in (s.scores or {})))
    scores = []
    for name in names:
        values = [float(s.scores[name].value) for s in samples if s.scores and name in s.scores]
        scores.append(EvalScore(name=name, scorer=name, scored_samples=len(values),
                                unscored_samples=len(samples) - len(values),
                                metrics={"mean": EvalMetric(name="mean", value=sum(values) / len(values))}))
    return EvalResults(total_samples=len(samples), completed_samples=sum(s.error is None for s in samples),
                       scores=scores)


def group_log(run: Run, task: str, agent: str, indices: list[int], not_run: list[dict], page: ViewPage | None):
    """The ``EvalLog`` of one (task, agent) group: rows ``indices`` of ``run`` and the planned episodes
    ``not_run`` (``run.json`` entries without a row)."""
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalPlanStep, EvalSpec, EvalStats

    rows = [run.row(i) for i in indices]
    models = [str(r["model"]) for r in rows if r.get("model")]
    model = models[0] if models else f"none/{agent}"
    samples = [sample_for_row(run, i, page, model) for i in indices] + [_not_run_sample(e, model) for e in not_run]
    entries = [e for e in run.meta.get("episodes") or [] if isinstance(e, dict) and e.get("task") == task]
    first = entries[0] if entries else {}
    profiles = run.meta.get("profiles") if isinstance(run.meta.get("profiles"), dict) else {}
    profile = profiles.get(agent) or {}
    solver = str(rows[0].get("agent") or agent) if rows else agent
    usage = None
    for sample in samples:
        for value in sample.model_usage.values():
            usage = value if usage is None else usage + value
    created = _utc(run.meta.get("started_at")) or datetime.now(timezone.utc).isoformat()
    spec = EvalSpec(
        run_id=run.root.name, eval_id=hashlib.sha256(f"{run.root.resolve()}|{task}|{agent}".encode()).hexdigest()[:22],
        created=created, task=task, task_id=spec_hash(first), task_file=first.get("task_file"),
        task_args=_jsonable(first.get("params") or {}), solver=solver, solver_args=_jsonable({"profile": profile}),
        model=model, dataset=EvalDataset(name=task, samples=len(samples), sample_ids=[s.id for s in samples]),
        config=EvalConfig(), packages={k: str(v) for k, v in (run.meta.get("versions") or {}).items()},
        metadata=_jsonable({"exported_by": "harness export --format inspect", "run_dir": str(run.root),
                            "template": rows[0].get("template") if rows else None, "agent": agent,
                            "settings": run.meta.get("settings"), "model_backend": run.meta.get("model_backend")}))
    finished = bool(run.meta.get("finished_at"))
    return EvalLog(
        version=2, status="success" if finished and not not_run else "started" if not finished else "error",
        eval=spec, plan=EvalPlan(steps=[EvalPlanStep(solver=solver, params=_jsonable({"profile": agent}))]),
        results=_results(samples),
        stats=EvalStats(started_at=created, completed_at=_utc(run.meta.get("finished_at")) or "",
                        model_usage={model: usage} if usage else {}),
        error=_error(f"{len(not_run)} planned episode(s) not run") if not_run else None,
        samples=samples)


def export_run(run_root: Path | str, out: Path | str) -> list[Path]:
    """Write one ``<task>__<agent>.eval`` log per (task, agent) group of the run at ``run_root`` into the
    folder ``out``; returns the paths written.  Raises :class:`HarnessError` naming the folder when it is no
    run directory, and when ``inspect-ai`` is not installed."""
    try:
        from inspect_ai.log import write_eval_log
    except ImportError as exc:
        raise HarnessError(f"--format inspect needs the inspect extra: pip install 'tsagent-harness[inspect]' "
                           f"({exc})") from None
    pages = registered_pages()
    run = with_run_columns(load_run(run_root), pages)
    groups: dict[tuple[str, str], list[int]] = {}
    page_of: dict[tuple[str, str], ViewPage | None] = {}
    for index in range(len(run.rows)):
        row = run.row(index)
        page = pages.get(str(row.get("template")))
        key = (str(row.get("task") or "task"), _agent_of(row, page))
        groups.setdefault(key, []).append(index)
        page_of.setdefault(key, page)
    done = set(run.rows["episode"].dropna()) if "episode" in run.rows.columns else set()
    missing: dict[tuple[str, str], list[dict]] = {}
    for entry in run.meta.get("episodes") or []:
        if isinstance(entry, dict) and entry.get("key") not in done:
            key = (str(entry.get("task") or "task"), str(entry.get("profile") or "unknown"))
            missing.setdefault(key, []).append(entry)
            groups.setdefault(key, [])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for (task, agent), indices in groups.items():
        log = group_log(run, task, agent, indices, missing.get((task, agent), []), page_of.get((task, agent)))
        path = out / f"{slug(task)}__{slug(agent)}.eval"
        write_eval_log(log, path, format="eval")
        written.append(path)
    return written

"""Judge a research run and write its DR metric rows (Dr-CiK Appendix H.1; Table 3).

:func:`score_run` reads every research episode of a run directory, asks a judge
(:class:`harness.contracts.Judge`) one question per ground-truth item of E_t against the
agent's numbered top-K_t claims, and returns one row per (agent, task) with the metrics of
:mod:`.metrics`, the verdicts, and the judge's name, version and kind.  :func:`write_scores`
stores them as ``dr_scores.jsonl`` in the run directory (rows of several judges may live
there side by side; reports keep them apart).  A malformed or failed verdict counts as not
matched and is counted (``judge_malformed``, ``judge_errors``).

Row fields (``dr_scores.jsonl``; readers may rely on them): the :class:`~.dr_metrics.TaskDR` fields
(``distractor_avoidance`` is Table 3's reading, the share of cited documents that are not
distractors, equal to ``cited_not_distractor``; ``distractors_uncited`` is the share of the task's
distractors D_t left uncited; ``hallucinated`` counts distinct unresolved ids, ``hallucinated_occurrences`` every
occurrence; ``n_distractors`` = |D_t|), ``in_task_<subtype>`` / ``universe_<subtype>``, ``dr_run``,
``k_t``, ``judged``, ``report_cited`` (resolved ids the report text cites), the judge's ``judge``,
``judge_version``, ``judge_kind``, ``judge_label``, ``judge_errors``, ``judge_malformed``, and
``verdicts`` (per item of E_t: ``item``, ``matched``, ``index``, ``status``, ``reason``, ``raw`` and
``cited_documents``, C_e: the documents the matched claim cites), ``evidence_roles`` (item of E_t ->
``retrospective`` | ``prospective`` where the task marks it, Table 16) and ``difficulty`` (dimension ->
level, Table 15), each None when the task has none.  A failed episode (the agent
crashed, timed out...) gets a row with ``status: "failed"`` and its ``reason`` and no metric: tables
count it in its own column and leave it out of every mean (:func:`failed`, :func:`scored`).
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from harness import VERDICT_ERROR, Judge, Verdict
from tsagent_plugins.tasks.drcik.research import metrics as m
from harness import ConfigError, RowError
from tsagent_plugins.tasks.drcik.research.inputs import labels_from_key, read_episode, research_episodes
from tsagent_plugins.tasks.drcik.research.episodes import read_key

if TYPE_CHECKING:
    import pandas as pd

SCORES_FILE = "dr_scores.jsonl"


def judge_task(output: m.ResearchOutput, labels: m.TaskLabels, documents, judge: Judge) -> dict:
    """One row: the metrics of ``output`` on its task, judged by ``judge``."""
    candidates = m.judged_claims(output, labels)
    verdicts = [judge.judge(text, candidates) for _, text in m.scored_evidence(labels)]
    matches = [v.matched if v.status == "ok" else None for v in verdicts]
    score = m.score_task(output, labels, documents, matches)
    row = asdict(score)
    subtypes = row.pop("in_task_distractors")
    for sub in m.SUBTYPES:
        row[f"in_task_{sub}"] = subtypes.get(sub, 0)
        row[f"universe_{sub}"] = sum(1 for d in documents.values()
                                     if d.task == labels.benchmark_id and d.role == "distractor" and d.subtype == sub)
    row.update(dr_run=output.run, k_t=m.k_t(labels), judged=len(candidates), report_cited=len(output.report_cited),
               judge=judge.name, judge_version=judge.version, judge_kind=judge.kind, judge_label=judge.label,
               judge_errors=sum(v.status == "error" for v in verdicts),
               verdicts=[{"item": item_id, "matched": v.matched, "index": v.index, "status": v.status,
                          "reason": v.reason, "raw": v.raw,
                          "cited_documents": m.matched_documents(output, labels, v.index) if v.matched else []}
                         for (item_id, _), v in zip(m.scored_evidence(labels), verdicts)])
    row["judge_malformed"] = sum(v.status == "malformed" for v in verdicts)
    scored_ids = {item_id for item_id, _ in m.scored_evidence(labels)}
    row["evidence_roles"] = {i: r for i, r in labels.roles if i in scored_ids} or None
    row["difficulty"] = dict(labels.difficulty) or None
    return row


def score_run(run_dir: Path | str, judge: Judge, problems: list[str] | None = None) -> list[dict]:
    """Rows for every finished research episode of ``run_dir`` (see the module docstring).

    ``problems``: when given, an unreadable episode is skipped and its error appended there (an
    agent's output never stops the scoring of the others); otherwise its error (ConfigError, or
    :class:`harness.RowError` for the harness's own files; each names the file) propagates."""
    rows = []
    for folder, row in research_episodes(run_dir):
        try:
            failure = _failure(folder, row)
            if failure is not None:
                rows.append({**failure, "judge": judge.name, "judge_version": judge.version,
                             "judge_kind": judge.kind, "judge_label": judge.label})
                continue
            episode = read_episode(folder, row)
            labels = labels_from_key(folder)
        except (ConfigError, RowError) as exc:
            if problems is None:
                raise
            problems.append(str(exc))
            continue
        rows.append(judge_task(episode.output, labels, episode.documents, judge))
    return rows


#: The profile of the LLM judge's model (Dr-CiK Appendix D.2) when none is named.
DEFAULT_JUDGE_PROFILE = "judge-gemini-3-flash"
#: Characters of an LLM judge request besides the item and the candidates (its instructions and JSON
#: framing, ``tsagent_plugins.judges.llm``), and the answer tokens it allows: the cost estimate's terms.
JUDGE_REQUEST_CHARS = 1500
JUDGE_ANSWER_TOKENS = 256


def judge_with_model(run_dir: Path | str, judge: Judge, profile: str = DEFAULT_JUDGE_PROFILE,
                     backend: str | None = None, options: dict | None = None, settings=None,
                     max_cost: float | None = None) -> list[dict]:
    """:func:`score_run` with ``judge`` bound to a model client of agent profile ``profile`` (its proxy logs
    under ``run_dir/judge/``; ``backend``/``options``: e.g. ``scripted`` and ``{"script": FILE}``), the client
    stopped afterwards; a judge without ``bind_model`` is used as it is.  ``harness dr-score`` and
    ``harness rescore --yes`` judge through here."""
    model = None
    if hasattr(judge, "bind_model"):
        from harness import ModelClient, resolve_profile

        model = ModelClient.open(resolve_profile(profile), Path(run_dir) / "judge", backend, options or {},
                                 settings=settings, max_cost_usd=max_cost)
        judge = judge.bind_model(model)
    try:
        return score_run(run_dir, judge)
    finally:
        if model is not None:
            model.stop()


class _Estimate(Judge):
    """Counts the requests an LLM judge would send over a run and their characters (answers nothing)."""

    name, version, kind = "estimate", "-", "estimate"

    def __init__(self) -> None:
        self.requests = self.chars = 0

    def judge(self, item: str, candidates) -> Verdict:
        if candidates:  # an empty list is judged without a request
            self.requests += 1
            self.chars += JUDGE_REQUEST_CHARS + len(item) + sum(len(c) + 8 for c in candidates)
        return Verdict(None, status=VERDICT_ERROR, reason="not judged: an estimate")


def estimate_judging(run_dir: Path | str, prices) -> tuple[int, float | None]:
    """(requests, estimated USD) of judging every research episode of ``run_dir`` with an LLM judge at
    ``prices`` (:class:`harness.Prices`, None: unknown cost): prompt tokens as characters / 4, every
    answer at its cap of :data:`JUDGE_ANSWER_TOKENS` (so rather above the cost than below)."""
    counter = _Estimate()
    score_run(run_dir, counter, problems=[])
    if prices is None:
        return counter.requests, None
    return counter.requests, prices.cost(counter.chars // 4, 0, counter.requests * JUDGE_ANSWER_TOKENS)


def model_judged(run_dir: Path | str) -> dict[str, str]:
    """Judge label -> judge name of the LLM judges (judges that need a model: ``bind_model``) whose rows
    ``dr_scores.jsonl`` holds, the judge still registered."""
    from harness import UnknownPlugin, get_plugin

    found = {}
    for row in read_scores(run_dir):
        name, label = row.get("judge"), row.get("judge_label")
        if not isinstance(name, str) or not isinstance(label, str) or label in found:
            continue
        try:
            judge = get_plugin("judge", name)
        except UnknownPlugin:
            continue
        if hasattr(judge, "bind_model"):
            found[label] = name
    return found


def model_rescoring(run_dir: Path | str, model: dict) -> list[tuple[str, float | None, Callable[[], str]]]:
    """``harness rescore``'s model work on a research run (:meth:`harness.TaskTemplate.model_rescoring`): per LLM
    judge whose verdicts ``dr_scores.jsonl`` holds, judging the run again with today's version of that judge
    (its model from the profile :data:`DEFAULT_JUDGE_PROFILE`; ``model``: the command's backend and options),
    priced by :func:`estimate_judging`; the new rows join the file under their own label."""
    from harness import get_plugin, resolve_profile

    judged: dict[str, list[str]] = {}
    for label, name in model_judged(run_dir).items():
        judged.setdefault(name, []).append(label)
    work = []
    for name, labels in judged.items():
        judge = get_plugin("judge", name)
        profile = resolve_profile(DEFAULT_JUDGE_PROFILE)
        requests, cost = estimate_judging(run_dir, profile.prices)

        def run(judge=judge, profile=profile) -> str:
            rows = judge_with_model(run_dir, judge, profile.name, model.get("backend"), model.get("options") or {})
            path = write_scores(run_dir, rows)
            return f"{len(rows)} row(s) judged by {rows[0]['judge_label'] if rows else judge.name} -> {path}"

        work.append((f"{judge.name}@{judge.version} on {run_dir} (was {', '.join(labels)}): {requests} "
                     f"request(s) to {profile.model}", cost, run))
    return work


def _failure(folder: Path, row: dict) -> dict | None:
    """A failed research episode's row (``status`` ``failed``, the agent, task and reason; no metric) from
    its results ``row`` and research key, or None when the episode finished.  A failed episode is no zero:
    tables count it apart."""
    if row.get("status") in (None, "ok"):
        return None
    key = read_key(folder / "key") or {}
    return {"agent": str(row.get("profile") or row.get("agent") or "?"), "benchmark_id": key.get("benchmark_id"),
            "status": "failed", "reason": str(row.get("error") or row.get("reason") or row.get("status"))[:300],
            "dr_run": str(row.get("run_id") or folder.parent.parent.name), "origin": key.get("origin"),
            "reasoning_hops": key.get("reasoning_hops")}


def failed(rows: list[dict]) -> list[dict]:
    """The rows of failed episodes (:func:`_failure`)."""
    return [r for r in rows if r.get("status") == "failed"]


def scored(rows: list[dict]) -> list[dict]:
    """The rows of finished, judged episodes."""
    return [r for r in rows if r.get("status") != "failed"]


def write_scores(run_dir: Path | str, rows: list[dict]) -> Path:
    """Append-replace: rows of the same judge label in ``dr_scores.jsonl`` are replaced, others kept."""
    path = Path(run_dir) / SCORES_FILE
    labels = {r["judge_label"] for r in rows}
    kept = [r for r in read_scores(run_dir) if r.get("judge_label") not in labels]
    path.write_text("".join(json.dumps(r) + "\n" for r in kept + rows), encoding="utf-8")
    return path


def read_scores(run_dir: Path | str) -> list[dict]:
    path = Path(run_dir) / SCORES_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def task_scores(rows: list[dict]) -> list[m.TaskDR]:
    """Rows back to :class:`~.dr_metrics.TaskDR` (for aggregation); one judge's rows only; failed
    episodes are left out (they have no metric)."""
    fields = m.TaskDR.__dataclass_fields__
    out = []
    for r in scored(rows):
        data = {k: r[k] for k in fields if k in r and k != "in_task_distractors"}
        data["in_task_distractors"] = {s: r.get(f"in_task_{s}", 0) for s in m.SUBTYPES if r.get(f"in_task_{s}")}
        out.append(m.TaskDR(**data))
    return out


def research_scores(rows: pd.DataFrame) -> tuple[list[dict], list[str]]:
    """The DR metric rows of the research runs of ``rows`` (``rows["run_dir"]``), every judge's, each with
    the ``corpus`` label of its episode's results row (Table 10) when the rows carry one; and the messages
    for runs not judged yet."""
    import pandas as pd

    run_dirs = list(dict.fromkeys(rows["run_dir"])) if "run_dir" in rows.columns else []
    corpus: dict[tuple, str] = {}
    if "corpus" in rows.columns:
        who = rows["profile"] if "profile" in rows.columns else rows.get("agent", pd.Series(None, index=rows.index))
        for run, agent, task, label in zip(rows["run_dir"], who, rows.get("benchmark_id", who), rows["corpus"]):
            if isinstance(label, str) and label:
                corpus[(run, str(agent), str(task))] = label
    scores, messages = [], []
    for run in run_dirs:
        found = read_scores(run)
        if not found:
            messages.append(f"{run}: research run not judged yet; run `harness dr-score {run}` for Table 3")
        for r in found:
            label = corpus.get((run, str(r.get("agent")), str(r.get("benchmark_id"))))
            if label and not r.get("corpus"):
                r["corpus"] = label
        scores += found
    return scores, messages

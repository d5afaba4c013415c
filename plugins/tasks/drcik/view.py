"""Dr-CiK episode page for ``harness view`` (``register_view_pages``).

A Dr-CiK row is one forecaster × context condition × task (``episode``
``<forecaster>/<context>/<benchmark_id>``).  The page shows, for that
forecaster and task, one forecast fan per context condition found in the
run: the history, the sample paths' 5–95 % and 25–75 % bands and median
(each episode folder's ``samples.npy``) and -- only
when the viewer may reveal answers and the task's labels are public -- the
realised future; each fan carries its condition's sCRPS.  A research episode (an
episode folder with ``workspace/report.md`` and/or ``workspace/evidence.json``)
shows the report and the evidence items, every cited id resolved through the
episode's key as the scoring resolves it and linked to the task's document.  Below, the task's documents
(sorted by id: file order leaks roles) and, revealed only, each document's
role and distractor subtype and the ground-truth evidence items.

Choice written down here: the history drawn is the last
:data:`HISTORY_HORIZONS` × H points (the whole history can be thousands of
points; the fan is what the page is for).
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from harness import hookimpl, lazy_module
from harness.pages import EpisodeText, EpisodeView, Markup, Panel, ViewPage, fan_svg
from harness.pages import html_escape as escape

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

HISTORY_HORIZONS = 3
#: The leaderboard's condition columns (a DR condition is one per evidence agent: never pooled).
CONDITIONS = ("context", "evidence_agent")
#: dr_scores.jsonl fields shown per research episode and averaged on the leaderboard: (field, column the
#: viewer adds, label, lower is better).  Read, never computed here (Dr-CiK Table 3's definitions).
DR_FIELDS = (("evidence_recall", "dr_evidence_recall", "evidence recall", False),
             ("supporting_recall", "dr_supporting_recall", "supporting-doc recall", False),
             ("distractor_avoidance", "dr_distractor_avoidance", "distractor avoidance", False),
             ("hallucinated", "dr_hallucinated", "hallucinated ids", True))
#: Results columns that, beside the citations a page shows, tell which documents are distractors or
#: another task's (and a local folder): left out unless answers are revealed.
HIDDEN_COLUMNS = ("distractor_citations", "hallucinated_ids", "cross_task_citations", "evidence_run",
                  "dr_distractor*", "dr_hallucinated*", "dr_judge")
#: Further dr_scores.jsonl fields read when present (e.g. a second distractor-avoidance reading, hallucinated
#: id occurrences): every number whose name starts with one of these, added as ``dr_<field>``.
DR_FIELD_PREFIXES = ("evidence_recall", "supporting_recall", "distractor_avoidance", "hallucinated")


def _tasks_values(value) -> list[str]:
    """Every string under a ``tasks`` key of run.json (the spec's task source: ``sample`` or a folder)."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "tasks" and isinstance(item, str):
                found.append(item)
            else:
                found += _tasks_values(item)
    elif isinstance(value, list):
        for item in value:
            found += _tasks_values(item)
    return found


@lru_cache(maxsize=8)
def _folder_tasks(folder: str) -> dict:
    from tsagent_plugins.tasks.drcik.dataset.loader import load_tasks

    return {t.benchmark_id: t for t in load_tasks(folder)}


def _task(episode: EpisodeView, benchmark_id: str):
    """The task of a row, from the spec's ``tasks`` value (``sample`` or a release folder)."""
    from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR

    for value in dict.fromkeys(_tasks_values(episode.run)):
        folder = SAMPLE_DIR if value == "sample" else Path(value)
        if Path(folder).exists():
            task = _folder_tasks(str(folder)).get(benchmark_id)
            if task is not None:
                return task
    return None


def _samples(root: Path, episode: str | None) -> np.ndarray | None:
    """The (S, H) sample paths of an episode: ``episodes/<episode>/samples.npy``, or None."""
    if isinstance(episode, str) and (root / "episodes" / episode / "samples.npy").is_file():
        return np.asarray(np.load(root / "episodes" / episode / "samples.npy", allow_pickle=False), float)
    return None


def _role(doc, reveal: bool) -> str:
    if not reveal or doc is None:
        return ""
    subtype = f" · {escape(doc.paper_subtype or doc.subtype)}" if doc.subtype else ""
    return f' <span class="answer doc-role" data-role="{escape(doc.role)}">{escape(doc.role)}{subtype}</span>'


def _epoch_seconds(index) -> np.ndarray:
    """(N,) float seconds since 1970 of a DatetimeIndex, whatever its resolution (pandas 3 parses
    these dates at microseconds, so ``asi8 / 1e9`` was off by 1000)."""
    return np.asarray(index.as_unit("ms").asi8, dtype=float) / 1e3


def _fans(episode: EpisodeView, task, forecaster: str, context: str | None) -> Panel:
    row, rows = episode.row, episode.rows
    history = task.history.iloc[-HISTORY_HORIZONS * task.horizon:]
    hx = _epoch_seconds(history.index)
    fx = _epoch_seconds(task.future_index)
    show_future = episode.reveal and task.future is not None
    same = rows[(rows["forecaster"] == forecaster) & (rows["benchmark_id"] == row["benchmark_id"])] \
        if {"forecaster", "benchmark_id"} <= set(rows.columns) else rows.iloc[:0]
    if "evidence_agent" in same.columns:  # DR conditions: this row's evidence agent's (and the conditions without one)
        agent = row.get("evidence_agent")
        same = same[same["evidence_agent"].isna() | (same["evidence_agent"] == agent)] if agent else \
            same[same["evidence_agent"].isna()]
    contexts = list(dict.fromkeys(list(same["context"]) if "context" in same.columns else [context]))
    fans = []
    for name in contexts:
        match = same[same["context"] == name]
        samples = _samples(episode.run_root,
                           match["episode"].iloc[0] if "episode" in match.columns and len(match) else None)
        current = " current" if name == context else ""
        if samples is None:
            fans.append(f'<div class="sample{current}"><b>{escape(name)}</b>: no samples in this run</div>')
            continue
        score = match["scrps"].iloc[0] if "scrps" in match.columns and len(match) else None
        caption = f"{samples.shape[0]} sample paths" + (  # a score, not an answer: shown in every export
            f" · sCRPS {score:.3f}" if isinstance(score, float) and np.isfinite(score) else "")
        chart = fan_svg(hx, history.to_numpy(float), fx, samples, task.future.to_numpy(float) if show_future else None,
                        title=f"{forecaster} · {name}", time_axis=True)
        fans.append(f'<div class="sample forecast{current}" data-context="{escape(name)}">{chart}'
                    f'<div>{escape(name)} · {escape(caption)}</div></div>')
    legend = ("history (black), forecast median (dark blue), 25–75 % and 5–95 % sample bands"
              + (", realised future (red, dashed)" if show_future else
                 "; the realised future is not part of this export" if task.future is not None else
                 "; this task's future is hidden"))
    agent = f" · evidence from {row['evidence_agent']}" if row.get("evidence_agent") else ""
    return Panel(f"Forecast fans · {task.benchmark_id} · {forecaster}{agent}", Markup(
        f'<p class="hint">{escape(task.target_description[:400])}</p><p class="hint">{escape(legend)}</p>'
        f'<div class="fans">{"".join(fans)}</div>'))


def _citations(episode: EpisodeView, task) -> tuple[dict[str, str], dict[str, str | None]]:
    """(cited id -> release id, release id -> owning task) for a research episode: the salted ids of the
    episode's ``key/research_key.json`` (the mapping its scoring used); without a key (a folder written
    by hand), the task's release ids themselves."""
    from tsagent_plugins.tasks.drcik.research.episodes import KEY_FILE

    key = episode.read_json(f"key/{KEY_FILE}")
    if isinstance(key, dict) and isinstance(key.get("ids"), dict):
        owners = {rid: info.get("task") for rid, info in (key.get("documents") or {}).items()
                  if isinstance(info, dict)}
        return {str(k): str(v) for k, v in key["ids"].items()}, owners
    return {d.document_id: d.document_id for d in task.documents}, {d.document_id: task.benchmark_id
                                                                       for d in task.documents}


def _research(episode: EpisodeView, task) -> Panel | None:
    """``workspace/report.md`` and ``workspace/evidence.json`` of a research episode (read and resolved as
    :func:`tsagent_plugins.tasks.drcik.research.episodes.score_research` does), each citation linked to the
    cited document in the list below; an id outside the corpus is marked unknown (the scoring drops it
    as hallucinated), a document of another task is marked cross-task (its task shown only revealed)."""
    from tsagent_plugins.tasks.drcik.research.episodes import EVIDENCE_FILE, REPORT_FILE
    from tsagent_plugins.tasks.drcik.research.outputs import read_evidence, resolve_id

    evidence = episode.file(f"workspace/{EVIDENCE_FILE}")
    if evidence is None and episode.file(f"workspace/{REPORT_FILE}") is None:
        return None
    docs = {d.document_id: d for d in task.documents}
    ids, owners = _citations(episode, task)

    def cite(raw: str, role: bool = True) -> str:
        release = resolve_id(raw, ids)
        shown = escape(raw) if release in (None, raw) else f"{escape(raw)} → {escape(release)}"
        if release is None:
            return (f'<span class="cite unknown" title="not a document of the corpus">{shown}</span>'
                    f'<span class="cite-note"> (no such document: counted as a hallucinated id, dropped)</span>')
        if release not in docs:
            owner = f" ({owners.get(release)})" if episode.reveal and owners.get(release) else ""
            return f'<span class="cite cross-task" title="a document of another task{escape(owner)}">{shown}</span>'
        return (f'<a class="cite" href="#doc-{escape(release)}">{shown}</a>'
                + (_role(docs[release], episode.reveal) if role else ""))

    body = ""
    report = episode.read_text(f"workspace/{REPORT_FILE}")
    if report is not None:
        from markdown_it import MarkdownIt

        html = MarkdownIt("commonmark", {"html": False}).render(report)  # raw HTML in the report is escaped
        if ids:
            pattern = re.compile(r"(?<![\w.-])(?:" + "|".join(re.escape(str(escape(i))) for i in
                                                         sorted(ids, key=len, reverse=True)) + r")(?![\w-])")
            # citations are linked in text only, never inside a tag the Markdown made
            html = "".join(part if part.startswith("<") else pattern.sub(lambda m: cite(m.group(), role=False), part)
                           for part in re.split(r"(<[^>]*>)", html))
        body += f'<h3>{REPORT_FILE}</h3><div class="report-md report">{html}</div>'
    if evidence is not None:
        items, reasons = read_evidence(evidence)
        body += "".join(f'<div class="hint">{escape(r)}</div>' for r in reasons)
        claims = "".join(f'<li class="claim">{escape(c.claim)}<div class="hint">cites: '
                         f'{", ".join(cite(d) for d in c.cited) or "nothing"}</div></li>' for c in items)
        body += f'<h3>Evidence items ({len(items)})</h3><ol class="evidence-items">{claims}</ol>'
    return Panel("Research output", Markup(body))


def _documents(task, reveal: bool) -> Panel:
    docs = [f'<li id="doc-{escape(doc.document_id)}"><b>{escape(doc.document_id)}</b>{_role(doc, reveal)}'
            f'<div class="hint">{escape(doc.content[:300])}{"…" * (len(doc.content) > 300)}</div></li>'
            for doc in sorted(task.documents, key=lambda d: d.document_id)]
    body = (f'<details><summary>{len(docs)} documents, sorted by id</summary><ol class="docs">{"".join(docs)}'
            f'</ol></details>' if docs else '<p class="hint">No documents.</p>')
    if reveal and task.evidence:
        body += '<h3>Ground-truth evidence</h3><ol class="evidence">' + "".join(
            f'<li class="answer"><b>{escape(item.id)}</b>: {escape(item.text)}</li>'
            for item in task.evidence) + "</ol>"
    return Panel(f"Documents ({len(task.documents)})", Markup(body))


def _given_context(episode: EpisodeView) -> Panel | None:
    """The context block of the forecaster's first model request (``<context>…</context>`` of the prompt, as
    the model read it), for a DR or other context condition of a model-backed forecaster; None otherwise."""
    from harness.wire import PROXY_LOG_NAMES, first_record

    folder = episode.folder
    if folder is None or not episode.row.get("context") or episode.row.get("context") == "no-context":
        return None
    calls = folder / "proxy"
    sessions = sorted(p.name for p in calls.iterdir() if p.is_dir()) if calls.is_dir() else []
    for session in sessions:  # each model call's log (proxy.jsonl.zst; an older run's proxy.jsonl)
        path = next(filter(None, (episode.file(f"proxy/{session}/{name}") for name in PROXY_LOG_NAMES)), None)
        first = first_record(path) if path is not None else None
        if first is None:
            continue
        body = first.get("body")
        messages = body.get("messages") if isinstance(body, dict) else None
        prompt = messages[-1].get("content") if isinstance(messages, list) and messages and \
            isinstance(messages[-1], dict) else None
        found = re.search(r"<context>\n?(.*?)\n?</context>", prompt, re.S) if isinstance(prompt, str) else None
        if found is None:
            continue
        text = found.group(1).strip()
        agent = episode.row.get("evidence_agent")
        source = f" from {escape(agent)}'s research" if agent else ""
        shown = f'<pre class="text">{escape(text)}</pre>' if text else \
            '<p class="hint">(empty: the condition gave the forecaster no text)</p>'
        return Panel(f"Context given to the forecaster · {episode.row['context']}", Markup(
            f'<p class="hint">The &lt;context&gt; block of the first model request{source}.</p>{shown}'))
    return None


def render(episode: EpisodeView) -> list[Panel]:
    """The Dr-CiK panels of one row (see the module docstring)."""
    row = episode.row
    benchmark_id = row.get("benchmark_id")
    if not benchmark_id:
        return [Panel("Dr-CiK", Markup('<p class="hint">This row names no task.</p>'))]
    task = _task(episode, benchmark_id)
    if task is None:
        return [Panel("Dr-CiK", Markup(f'<p class="hint">Task {escape(benchmark_id)} is not listed in run.json.</p>'))]
    panels = []
    if row.get("forecaster"):
        panels.append(_fans(episode, task, row["forecaster"], row.get("context")))
        context = _given_context(episode)
        if context is not None:
            panels.append(context)
    research = _research(episode, task)
    if research is not None:
        panels.append(research)
    panels.append(_documents(task, episode.reveal))
    return panels


def labels_public(row: dict) -> bool:
    """Hidden-label (expert) tasks are never exported with answers."""
    return row.get("scale_status") != "labels_hidden"


def _judge(rows: list[dict]) -> str | None:
    """The judge whose rows are shown: the one that scored the most rows (ties: the first label in order)."""
    counts: dict[str, int] = {}
    for r in rows:
        counts[str(r.get("judge_label"))] = counts.get(str(r.get("judge_label")), 0) + 1
    return min(counts, key=lambda label: (-counts[label], label)) if counts else None


def run_columns(run_root: Path, rows):
    """The research rows' DR metrics from the run's ``dr_scores.jsonl`` (:data:`DR_FIELDS`, matched on
    agent profile and task; one judge, see :func:`_judge`; ``dr_judge`` names it).  Lines that are not
    JSON objects and fields that are missing or not numbers are skipped: the file is read, not validated."""
    import json

    import pandas as pd

    from tsagent_plugins.tasks.drcik.research.scoring import SCORES_FILE

    path = Path(run_root) / SCORES_FILE
    out = pd.DataFrame(index=rows.index)
    if not path.is_file() or not {"profile", "benchmark_id"} <= set(rows.columns):
        return out
    scores = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if isinstance(item, dict):
            scores.append(item)
    judge = _judge(scores)
    by = {(s.get("agent"), s.get("benchmark_id")): s for s in scores if str(s.get("judge_label")) == judge}
    fields = [(field, column) for field, column, _, _ in DR_FIELDS]
    known = {field for field, _ in fields}
    fields += [(name, f"dr_{name}") for name in sorted({k for s in by.values() for k in s})
               if name not in known and name.startswith(DR_FIELD_PREFIXES)]
    for field, column in fields:
        values = []
        for profile, task in zip(rows["profile"], rows["benchmark_id"]):
            value = by.get((profile, task), {}).get(field)
            values.append(float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None)
        if any(v is not None for v in values):
            out[column] = pd.Series(values, index=rows.index, dtype=object)
    if len(out.columns):
        out["dr_judge"] = [judge if (p, t) in by else None for p, t in zip(rows["profile"], rows["benchmark_id"])]
    return out


def compare_key(row: dict) -> str | None:
    """Research episodes of the same task were given the same corpus and question: one comparison page
    per task (``task_42 · research``)."""
    if row.get("episode_kind") == "research" and row.get("benchmark_id"):
        return f"{row['benchmark_id']} · research"
    return None


def compare(episodes: list[EpisodeView]) -> list[Panel]:
    """Each deep-research agent's DR scores (from ``dr_scores.jsonl``, as the leaderboard) and evidence claims
    with the ids they cite, side by side; roles are not shown here (each episode page resolves them)."""
    from tsagent_plugins.tasks.drcik.research.episodes import EVIDENCE_FILE
    from tsagent_plugins.tasks.drcik.research.outputs import read_evidence

    columns = []
    for episode in episodes:
        row = episode.row
        scores = [(label, row.get(column)) for _, column, label, _ in DR_FIELDS  # role-revealing ones revealed only
                  if episode.reveal or not column.startswith(("dr_distractor", "dr_hallucinated"))]
        facts = "".join(f"<div>{escape(label)}: <b>{'–' if value is None else f'{value:.3f}'}</b></div>"
                        for label, value in scores)
        path = episode.file(f"workspace/{EVIDENCE_FILE}")
        items, _ = read_evidence(path) if path is not None else ([], [])
        claims = "".join(f'<li class="claim">{escape(item.claim)}<div class="hint">cites: '
                         f'{escape(", ".join(item.cited) or "nothing")}</div></li>' for item in items)
        status = row.get("status")
        columns.append(f'<div class="sample research-agent"><h3>{escape(row.get("profile") or "?")}</h3>'
                       f'<div class="hint">status {escape(status)}</div>{facts}'
                       f'<ol class="evidence-items">{claims or "<li class=hint>no evidence items</li>"}</ol></div>')
    return [Panel("Deep-research agents on this task", Markup(f'<div class="samples">{"".join(columns)}</div>'))]


def text(episode: EpisodeView) -> EpisodeText:
    """The episode for an export (``harness export --format inspect``).  Research (§4.2): ``target`` = the
    task's ground-truth evidence and supporting documents (``key/research_key.json``), ``output`` =
    ``report.md`` then ``evidence.json``.  Forecast (§5): ``input`` names the task and context condition,
    ``target`` = the realised future, ``output`` = the per-step median of the sample paths and their count; ``failure`` = the row's ``reason``.
    A hidden-label task's target is never written (:func:`labels_public`)."""
    import json

    from tsagent_plugins.tasks.drcik.research.episodes import EVIDENCE_FILE, REPORT_FILE

    row = episode.row
    public = labels_public(row)
    hidden = "(labels hidden: an expert task's answers are never exported)"
    if row.get("episode_kind") == "research":
        key = episode.read_json("key/research_key.json") or {}
        target = json.dumps({"evidence": key.get("gt_evidence"), "supporting_documents": key.get("supporting")},
                            indent=1)
        output = (f"{episode.read_text(f'workspace/{REPORT_FILE}') or '(no report.md)'}\n\n{EVIDENCE_FILE}:\n"
                  f"{episode.read_text(f'workspace/{EVIDENCE_FILE}') or '(none)'}")
        return EpisodeText(target=target if public else hidden, output=output, failure=row.get("output_reason") or None)
    benchmark_id = str(row.get("benchmark_id"))
    task = _task(episode, benchmark_id)
    samples = _samples(episode.run_root, row.get("episode"))
    future = task.future.to_numpy(float).round(6).tolist() if task is not None and task.future is not None else None
    output = json.dumps({"median": np.median(samples, axis=0).round(6).tolist(), "sample_paths": len(samples)}) \
        if samples is not None and len(samples) else ""
    return EpisodeText(input=f"forecast {benchmark_id} with context condition {row.get('context')}",
                       target=(json.dumps(future) if future is not None else "") if public else hidden, output=output,
                       failure=row.get("reason") or None)


PAGE = ViewPage(template="drcik", metric="scrps", metric_label="sCRPS", lower_is_better=True, spread="se",
                conditions=CONDITIONS, agent_column="forecaster", render=render, labels_public=labels_public,
                board_columns=tuple((column, label, lower) for _, column, label, lower in DR_FIELDS),
                hidden_columns=HIDDEN_COLUMNS, run_columns=run_columns, compare_key=compare_key, compare=compare,
                score_columns=("smae", "srmse"), text=text)


@hookimpl
def register_view_pages(register):
    """The Dr-CiK leaderboard (sCRPS by forecaster and context condition) and episode page; the calibration review
    page of a ``harness dr-generate`` output (Appendix D.2)."""
    from tsagent_plugins.tasks.drcik.quality.review import PAGE as REVIEW_PAGE

    register(PAGE)
    register(REVIEW_PAGE)

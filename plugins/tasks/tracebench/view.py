"""TraceBench episode page for ``harness view`` (``register_view_pages``).

Shows the test samples as plots (one panel per channel, stacked), each with
the agent's ranked answer and -- only when the viewer may reveal answers --
the true label and whether the top-1 answer was right; for programmatic
episodes the submitted ``rule.py`` and, revealed, its held-out results.
Inputs: ``workspace/test_samples/*.parquet`` (what the agent saw; listed and read through
:meth:`harness.pages.EpisodeView.listing` and ``file``, which rebuild a sample kept by reference),
``score.json`` details (predictions; ``true_label`` is read only when revealing)
and ``workspace/rule.py``.

Choice written down here: the x axis of a sample plot is its first strictly
increasing column (the time column of every TraceBench simulator), else the
row index; every channel is scaled to its own range; channels are thinned to at most :data:`MAX_POINTS` points by a
uniform stride (a display choice; scoring never reads these plots).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness import hookimpl, lazy_module, untrusted
from harness.pages import EpisodeText, EpisodeView, Markup, Panel, ViewPage, stacked_lines_svg
from harness.pages import html_escape as escape, html_table as table

if TYPE_CHECKING:  # numpy and pandas load when a page is rendered, not when the plugin registers
    import numpy as np
    import pandas as pd
else:
    np = lazy_module("numpy")

#: Points per channel drawn in a sample plot.
MAX_POINTS = 600
#: Test samples plotted per episode page.
MAX_SAMPLES = 24
#: The leaderboard's condition: the paper's condition name with its settings (:func:`condition_name`).
CONDITIONS = ("condition",)


def _sample_chart(frame: pd.DataFrame, title: str, t_int: float | None = None,
                  names: dict[str, str] | None = None) -> Markup:
    """One sample's stacked-channel chart; ``names``: column -> the name the task gave it (:func:`_signal_names`;
    columns without one keep their own), ``t_int``: the intervention time marked."""
    names = names or {}
    numeric = frame.select_dtypes("number")
    x_name = next((c for c in numeric.columns if len(numeric) > 1 and np.all(np.diff(numeric[c].to_numpy()) > 0)),
                  None)
    channels = [c for c in numeric.columns if c != x_name] or list(numeric.columns)
    stride = max(1, -(-len(numeric) // MAX_POINTS))  # ceil: at most MAX_POINTS points
    x = numeric[x_name].to_numpy()[::stride] if x_name else np.arange(len(numeric))[::stride]
    return stacked_lines_svg(x, {names.get(str(c), str(c)): numeric[c].to_numpy()[::stride] for c in channels},
                             f"{title} (x: {names.get(str(x_name), x_name) if x_name else 'row'})",
                             marker=t_int if x_name else None,
                             marker_label="intervention" if t_int is not None else "")


def _signal_names(row: dict) -> dict[str, str]:
    """Column -> the name the episode's prompt gave it (its "Observed Signals": with domain context, each
    channel's description and ``time``); {} when the prompt named none (no context: the agent saw ``col1``...,
    and so does the page) or the simulator is not installed here."""
    from harness import UnknownPlugin, get_plugin
    from tsagent_plugins.tasks.tracebench.prompts import signal_names

    if row.get("context") is not True or not isinstance(row.get("simulator"), str):
        return {}
    try:
        return signal_names(get_plugin("simulator", row["simulator"]))
    except UnknownPlugin:
        return {}


def _names_hint(names: dict[str, str]) -> str:
    """The line under a panel of charts saying which column each name is (what a ``rule.py`` reads)."""
    if not names:
        return ""
    return '<p class="hint signals">Channels as the prompt names them: ' + escape(
        ", ".join(f"{column} {name}" for column, name in names.items())) + ".</p>"


def _intervention_times(episode: EpisodeView) -> dict[str, float]:
    """Test file -> intervention time (s) from the episode's answer key (``key/recipes.json``); read only
    when revealing (the time says a change happened)."""
    if not episode.reveal:
        return {}
    recipes = episode.read_json("key/recipes.json")
    return {r["file"]: float(r["t_int"]) for r in recipes or [] if isinstance(r, dict)
            and isinstance(r.get("file"), str) and isinstance(r.get("t_int"), (int, float))}


def _examples(episode: EpisodeView, names: dict[str, str]) -> Panel | None:
    """One labelled support sample per class (``workspace/train_samples`` and ``train_labels.json``: what
    the agent was given), folded."""
    import pandas as pd

    labels = episode.read_json("workspace/train_labels.json")
    if not isinstance(labels, dict) or not labels:
        return None
    first: dict[str, str] = {}
    for name, label in sorted(labels.items()):
        first.setdefault(str(label), name)
    cards = []
    for label, name in sorted(first.items()):
        path = episode.file(f"workspace/train_samples/{name}")
        if path is None:
            continue
        try:
            chart = _sample_chart(pd.read_parquet(path), name, names=names)
        except Exception:  # noqa: BLE001 - a damaged file is left out
            continue
        cards.append(f'<div class="sample example">{chart}<div>label: <b>{escape(label)}</b></div></div>')
    if not cards:
        return None
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[str(label)] = counts.get(str(label), 0) + 1
    return Panel(f"Labelled examples ({len(labels)}, one per class shown)", Markup(
        f'<details><summary>{escape(", ".join(f"{k} × {v}" for k, v in sorted(counts.items())))}</summary>'
        f'<div class="samples">{"".join(cards)}</div></details>'))


def _labels(value) -> str:
    if isinstance(value, list):
        return " › ".join(str(v) for v in value) or "(empty)"
    return "(no valid answer)" if value is None else f"(invalid: {value})"


def render(episode: EpisodeView) -> list[Panel]:
    """The TraceBench panels of one episode (see the module docstring)."""
    panels: list[Panel] = []
    folder = episode.folder
    score = episode.read_json("score.json") or {}
    details = [d for d in score.get("details") or [] if isinstance(d, dict)]
    test = {d.get("file"): d for d in details if d.get("split") == "test"}
    listed = [n for n in episode.listing("workspace/test_samples") if n.endswith(".parquet")]
    # (file name, path): a sample kept by reference is read from its rebuilt copy, named by its digest
    files = [(n, p) for n, p in ((n, episode.file(f"workspace/test_samples/{n}")) for n in listed[:MAX_SAMPLES])
             if p is not None]
    import pandas as pd  # imported on use: pandas is slow to load

    cards = []
    times = _intervention_times(episode)
    names = _signal_names(episode.row)
    for file, path in files:
        detail = test.get(file, {})
        name = untrusted.shown_name(file)  # an agent's file name that is not UTF-8 is shown escaped
        try:
            frame = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - a damaged file is shown, not raised
            cards.append(Markup(f'<div class="sample"><b>{escape(name)}</b>: unreadable ({escape(exc)})</div>'))
            continue
        answer = _labels(detail.get("predicted")) if detail else "(not scored)"
        verdict, css = "", ""
        if episode.reveal and detail:
            right = bool(detail.get("correct"))
            css = " right" if right else " wrong"
            verdict = (f'<div class="answer">true label: <b class="true-label">{escape(detail.get("true_label"))}</b>'
                       f' · <span class="verdict">{"right" if right else "wrong"}</span></div>')
        note = detail.get("reason") or detail.get("note")
        cards.append(Markup(
            f'<div class="sample{css}" data-file="{escape(name)}">'
            f'{_sample_chart(frame, name, times.get(file), names)}'
            f'<div>agent\'s answer: <b>{escape(answer)}</b></div>{verdict}'
            + (f'<div class="hint">{escape(note)}</div>' if note else "") + "</div>"))
    if cards:
        more = f'<p class="hint">{len(listed) - MAX_SAMPLES} more test samples not shown.</p>' \
            if len(listed) > MAX_SAMPLES else ""
        hidden = "" if episode.reveal else '<p class="hint">True labels are not part of this export.</p>'
        panels.append(Panel(f"Test samples ({len(listed)})", Markup(
            f'{hidden}{_names_hint(names)}<div class="samples">{"".join(cards)}</div>{more}')))
    elif folder is not None:
        panels.append(Panel("Test samples", Markup('<p class="hint">No test samples in the workspace.</p>')))
    if episode.row.get("submission") == "programmatic":
        rule = episode.read_text("workspace/rule.py", limit=50_000)
        body = f'<pre class="code">{escape(rule)}</pre>' if rule is not None else \
            '<p class="hint">No rule.py was submitted.</p>'

        heldout = [d for d in details if d.get("split") == "heldout"]
        accuracy = episode.row.get("heldout_accuracy")
        summary = f"held-out accuracy: <b>{accuracy:.3f}</b> on {len(heldout)} samples" \
            if isinstance(accuracy, (int, float)) else "no held-out accuracy"
        body += f"<p>{summary}</p>"
        if episode.reveal and heldout:
            by_class: dict[str, list[bool]] = {}
            for d in heldout:
                by_class.setdefault(str(d.get("true_label")), []).append(bool(d.get("correct")))
            body += str(table(["true label", "samples", "right", "accuracy"],
                              [[label, len(v), sum(v), f"{sum(v) / len(v):.3f}"]
                               for label, v in sorted(by_class.items())],
                              css="grid heldout-classes"))
            body += (f"<details><summary>every held-out sample ({len(heldout)})</summary>"
                     + str(table(["file", "rule.py answer", "true label", "top-1"],
                                 [[d.get("file"), _labels(d.get("predicted")), d.get("true_label"),
                                   "right" if d.get("correct") else "wrong"] for d in heldout], css="grid heldout"))
                     + "</details>")
        panels.append(Panel("Submitted rule.py", Markup(body)))
    examples = _examples(episode, names)
    if examples is not None:
        panels.append(examples)
    return panels


def condition_name(row: dict) -> str | None:
    """The paper's condition slug and its settings (``gentle-cloud · low noise, direct, context, 3 ex/class``);
    the settings alone for a condition the paper does not have (no ``slug``)."""
    parts = []
    if row.get("noise") is not None:
        parts.append(f"{row['noise']} noise")
    if row.get("submission") is not None:
        parts.append(str(row["submission"]))
    if row.get("context") is not None:
        parts.append("context" if row["context"] else "no context")
    if isinstance(row.get("examples_per_class"), (int, float)):
        parts.append(f"{int(row['examples_per_class'])} ex/class")
    settings = ", ".join(parts)
    slug = row.get("slug")
    if isinstance(slug, str) and slug:
        return f"{slug} · {settings}" if settings else slug
    return settings or None


def outcome(row: dict) -> str | None:
    """The episode's answers at a glance: ``all right`` (accuracy 1), ``all wrong`` (0), ``some wrong``;
    None without an accuracy (a failed episode)."""
    accuracy = row.get("accuracy")
    if not isinstance(accuracy, (int, float)) or accuracy != accuracy:
        return None
    return "all right" if accuracy >= 1 else "all wrong" if accuracy <= 0 else "some wrong"


def run_columns(run_root, rows):
    """``condition`` (:func:`condition_name`; the leaderboard's condition column) and ``outcome``
    (:func:`outcome`; a facet of the episode list) of each row."""
    import pandas as pd

    records = [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
               for r in rows.to_dict("records")]
    return pd.DataFrame({"condition": pd.Series([condition_name(r) for r in records], index=rows.index, dtype=object),
                         "outcome": pd.Series([outcome(r) for r in records], index=rows.index, dtype=object)})


def compare_key(row: dict) -> str | None:
    """Episodes with the same simulator, condition, repetition seed, pool seed and batch size saw the same
    test batch (the template draws it from these alone): ``balldrop · gentle-cloud · … · seed 0``."""
    if row.get("simulator") is None or row.get("seed") is None:
        return None
    parts = [str(row["simulator"]), condition_name(row) or "", f"seed {row['seed']}"]
    if row.get("pool_seed") is not None:
        parts.append(f"pool {row['pool_seed']}")
    if row.get("n_test") is not None:
        parts.append(f"n_test {row['n_test']}")
    return " · ".join(p for p in parts if p)


def _last_message(episode: EpisodeView, limit: int = 400) -> str:
    """The last agent message of the episode's trajectory (its stated reasoning for the answer), cut to
    ``limit`` characters; empty for an agent without a trajectory (a baseline)."""
    trajectory = episode.read_json("trajectory.json")
    steps = trajectory.get("steps") if isinstance(trajectory, dict) else None
    for step in reversed(steps if isinstance(steps, list) else []):
        if isinstance(step, dict) and step.get("source") == "agent" and isinstance(step.get("message"), str) \
                and step["message"].strip():
            text = step["message"].strip()
            return text[:limit] + ("…" if len(text) > limit else "")
    return ""


def _agent_name(episode: EpisodeView) -> str:
    return str(episode.row.get("profile") or episode.row.get("episode") or "?")


def compare(episodes: list[EpisodeView]) -> list[Panel]:
    """Each agent's answer per test sample of one batch, beside the sample's plot (see :func:`compare_key`);
    true labels and right/wrong only when revealed."""
    import pandas as pd

    details = []
    for episode in episodes:
        score = episode.read_json("score.json") or {}
        details.append({d.get("file"): d for d in score.get("details") or []
                        if isinstance(d, dict) and d.get("split") == "test"})
    files = sorted({f for d in details for f in d if isinstance(f, str)})
    reveal = all(e.reveal for e in episodes)
    times: dict[str, float] = {}  # the batch's intervention times, as the episode page marks them (revealed only)
    for episode in episodes if reveal else []:
        times.update({k: v for k, v in _intervention_times(episode).items() if k not in times})
    names = next((found for found in (_signal_names(e.row) for e in episodes) if found), {})
    accuracies = [e.row.get("accuracy") if isinstance(e.row.get("accuracy"), (int, float)) else None
                  for e in episodes]
    summary = []
    for episode, accuracy in zip(episodes, accuracies):
        rank = 1 + sum(1 for other in accuracies if other is not None and accuracy is not None and other > accuracy)
        summary.append([rank if accuracy is not None else "–", _agent_name(episode),
                        "–" if accuracy is None else f"{accuracy:.3f}",
                        "–" if episode.row.get("n_invalid") is None else episode.row.get("n_invalid"),
                        episode.row.get("status"), _last_message(episode)])
    summary.sort(key=lambda r: (r[0] if isinstance(r[0], int) else 10**9, r[1]))
    panels = [Panel("Agents on this batch", table(["rank", "agent", "accuracy", "invalid", "status",
                                                   "the agent's last words"], summary, css="grid compare-summary"))]
    cards = []
    for name in files[:MAX_SAMPLES]:
        path = next((p for p in (e.file(f"workspace/test_samples/{name}") for e in episodes) if p is not None), None)
        try:
            chart = _sample_chart(pd.read_parquet(path), name, times.get(name), names) if path is not None else \
                Markup(f'<div class="hint">{escape(name)}: the sample file is not in any workspace</div>')
        except Exception as exc:  # noqa: BLE001 - a damaged file is shown, not raised
            chart = Markup(f'<div class="hint">{escape(name)}: unreadable ({escape(exc)})</div>')
        truth = next((d[name].get("true_label") for d in details if name in d), None) if reveal else None
        rows = []
        for episode, found in zip(episodes, details):
            detail = found.get(name)
            answer = _labels(detail.get("predicted")) if detail else "(not scored)"
            verdict = ""
            if reveal and detail:
                verdict = "right" if detail.get("correct") else "wrong"
            note = (detail or {}).get("reason") or (detail or {}).get("note") or ""
            rows.append(f'<tr class="agent-answer {verdict}"><th>{escape(_agent_name(episode))}</th>'
                        f'<td class="answer-text">{escape(answer)}</td>'
                        + (f'<td class="verdict">{verdict}</td>' if reveal else "")
                        + f'<td class="hint">{escape(note)}</td></tr>')
        head = "<tr><th>agent</th><th>ranked answer</th>" + ("<th>top-1</th>" if reveal else "") + "<th>note</th></tr>"
        label = f'<div class="answer">true label: <b class="true-label">{escape(truth)}</b></div>' if truth else ""
        cards.append(f'<div class="sample compare-sample" data-file="{escape(name)}">{chart}{label}'
                     f'<div class="scroll"><table class="grid answers"><thead>{head}</thead>'
                     f'<tbody>{"".join(rows)}</tbody></table></div></div>')
    hidden = "" if reveal else '<p class="hint">True labels are not part of this export.</p>'
    more = f'<p class="hint">{len(files) - MAX_SAMPLES} more test samples not shown.</p>' \
        if len(files) > MAX_SAMPLES else ""
    panels.append(Panel(f"Test samples ({len(files)}): every agent's answer", Markup(
        f'{hidden}{_names_hint(names)}<div class="samples compare">{"".join(cards)}</div>{more}')))
    return panels


def text(episode: EpisodeView) -> EpisodeText:
    """The episode for an export (``harness export --format inspect``): ``target`` = the true label of each
    sample, ``output`` = the agent's ranked labels (or why a sample is invalid), both as JSON objects keyed
    ``<split>/<file>`` from ``score.json``'s details (Section 4.2 scoring, test then held-out samples); a
    programmatic episode's output starts with the submitted ``rule.py``.  Without details (the episode failed
    before scoring) the target is the test batch's labels from the answer key and the output is
    ``results.json`` as written."""
    import json

    score = episode.read_json("score.json") or {}
    details = [d for d in score.get("details") or [] if isinstance(d, dict)]
    if details:
        target = {f"{d.get('split')}/{d.get('file')}": d.get("true_label") for d in details}
        output = {f"{d.get('split')}/{d.get('file')}": d.get("predicted") if d.get("reason") is None
                  else f"invalid: {d.get('reason')}" for d in details}
        answer = json.dumps(output, indent=1)
    else:
        key = episode.read_json("key/key.json") or {}
        target = {f"test/{name}": truth.get("label") for name, truth in (key.get("test") or {}).items()
                  if isinstance(truth, dict)}
        answer = episode.read_text("workspace/results.json") or ""
    rule = episode.read_text("workspace/rule.py") if episode.row.get("submission") == "programmatic" else None
    if rule is not None:
        answer = f"rule.py:\n{rule}\n\npredictions:\n{answer}"
    return EpisodeText(target=json.dumps(target, indent=1), output=answer)


PAGE = ViewPage(template="tracebench", metric="accuracy", metric_label="accuracy", conditions=CONDITIONS,
                render=render, group_column="simulator", run_columns=run_columns, compare_key=compare_key,
                compare=compare, facet_columns=("outcome",),
                score_columns=("shortlist", "heldout_accuracy", "heldout_shortlist"), text=text)


@hookimpl
def register_view_pages(register):
    """The TraceBench leaderboard (accuracy by noise, submission, context, examples) and episode page."""
    register(PAGE)

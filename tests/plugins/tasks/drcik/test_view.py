"""The Dr-CiK view page on an episode-folder run (``episodes/<episode>/samples.npy``): fans, answers, roles."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from harness.store import RunStore, write_json
from harness.view.data import load_runs
from harness.view.site import Site
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, load_tasks

TASK = "task_42"
CONTEXTS = {"no-context": 0.25, "supporting-evidence": 0.125}
SUPPORTING, DISTRACTOR = "doc_1548", "doc_1561"  # roles in the embedded sample: supporting; off-variable


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    task = {t.benchmark_id: t for t in load_tasks(SAMPLE_DIR)}[TASK]
    store = RunStore.create(tmp_path_factory.mktemp("drcik-view") / "dr")
    write_json(store.root / "run.json", {"spec": {"template": "drcik", "params": {"tasks": "sample"}}})
    for context, scrps in CONTEXTS.items():
        label = f"ses_{context}_{TASK}-s20"
        paths = store.episode(label).create()
        samples = np.tile(np.arange(20, dtype=float)[:, None], (1, task.horizon))  # quantiles known exactly
        np.save(paths.root / "samples.npy", samples)
        write_json(paths.row, {"run_id": store.run_id, "episode": label, "template": "drcik", "task": "t",
                               "forecaster": "ses", "context": context, "benchmark_id": TASK, "status": "ok",
                               "scale_status": task.scale_status, "scrps": scrps})
    paths = store.episode(f"research_{TASK}").create()
    (paths.workspace / "report.md").write_text(f"# Report\nSales rose after a bug ({SUPPORTING}).\n")
    (paths.workspace / "evidence.json").write_text(json.dumps({"evidence": [
        {"claim": "A software bug inflated sales.", "cited_document_ids": [SUPPORTING, DISTRACTOR]},
        {"claim": "Unsupported.", "cited_document_ids": ["doc_nope"]}]}))
    write_json(paths.row, {"run_id": store.run_id, "episode": f"research_{TASK}", "template": "drcik", "task": "t",
                           "benchmark_id": TASK, "status": "ok", "scale_status": task.scale_status,
                           "profile": "dr-agent"})
    store.write_results()
    return store.root, task


def page(run, reveal: bool, context: str = "no-context") -> str:
    root, _ = run
    site = Site(load_runs([root]), reveal=reveal)
    return site.render(f"runs/dr/ses_{context}_{TASK}-s20/index.html")[0].decode()


def test_fan_per_context_from_episode_folders(run):
    html = page(run, reveal=True)
    assert re.findall(r'class="sample forecast[^"]*" data-context="([^"]+)"', html) == list(CONTEXTS)
    assert html.count('class="fan-outer"') == 2 and html.count('class="fan-median"') == 2
    assert "no-context · 20 sample paths · sCRPS 0.250" in html
    assert "supporting-evidence · 20 sample paths · sCRPS 0.125" in html
    assert html.count('class="future"') == 2  # revealed: the realised future on both fans
    # the current condition is framed
    assert re.search(r'class="sample forecast current" data-context="no-context"', html)


def test_answers_only_when_revealed(run):
    _, task = run
    shown, hidden = page(run, reveal=True), page(run, reveal=False)
    roles = [d.role for d in task.documents]
    assert shown.count('class="answer doc-role"') == len(task.documents) and "Ground-truth evidence" in shown
    assert shown.count("distractor") >= roles.count("distractor")
    for marker in ("doc-role", "Ground-truth evidence", 'class="future"', "distractor"):
        assert marker not in hidden, marker
    assert "no-context · 20 sample paths · sCRPS 0.250" in hidden  # scores are not answers
    # documents are listed by id, not in file order (file order leaks roles)
    ids = re.findall(r'<li id="doc-([^"]+)">', hidden)
    assert ids == sorted(d.document_id for d in task.documents)


def test_leaderboard_ranks_scrps_lower_first(run):
    root, _ = run
    html = Site(load_runs([root])).render("index.html")[0].decode()
    assert "Leaderboard · drcik" in html and "lower is better" in html
    cells = re.findall(r'<td class="n metric(?: best)?" data-sort="([^"]+)">([^<]+)</td>', html)
    assert cells == sorted([(str(v), f"{v:.3f}") for v in CONTEXTS.values()])  # the value itself, lowest first
    assert '<td class="n metric best" data-sort="0.125">' in html  # only the lowest sCRPS is bold
    assert re.search(r'<th class="n metric" data-first="asc">sCRPS</th>', html)  # the first click: lowest first


def test_research_output_links_citations_and_reveals_roles(run):
    _, task = run
    docs = {d.document_id: d for d in task.documents}
    assert docs[SUPPORTING].role == "supporting" and docs[DISTRACTOR].role == "distractor"
    root, _ = run
    shown, hidden = (Site(load_runs([root]), reveal=r).render(f"runs/dr/research_{TASK}/index.html")[0].decode()
                     for r in (True, False))
    for html in (shown, hidden):
        assert "Research output" in html and "Forecast fans" not in html
        assert f'<p>Sales rose after a bug (<a class="cite" href="#doc-{SUPPORTING}">{SUPPORTING}</a>).</p>' in html
        assert "<h1>Report</h1>" in html and "# Report" not in html  # report.md rendered as Markdown
        assert html.count(f'href="#doc-{DISTRACTOR}"') == 1 and f'id="doc-{DISTRACTOR}"' in html
        assert '<span class="cite unknown" title="not a document of the corpus">doc_nope</span>' in html
    assert (f'<a class="cite" href="#doc-{DISTRACTOR}">{DISTRACTOR}</a> <span class="answer doc-role" '
            f'data-role="distractor">distractor · '
            f'{docs[DISTRACTOR].paper_subtype or docs[DISTRACTOR].subtype}</span>') in shown
    assert "doc-role" not in hidden and "distractor" not in hidden
    # an id outside the corpus is explained on the page, not only in a tooltip
    assert "doc_nope</span><span class=\"cite-note\"> (no such document: counted as a hallucinated id" in shown


def test_fan_axis_shows_the_tasks_dates_whatever_the_index_resolution(run):
    """The tick labels are the task's own dates: first tick = first history point shown, last = last future
    point (pandas 3 parses dates at microseconds; dividing ``asi8`` by 1e9 labelled a daily series 1970/01-21)."""
    _, task = run
    html = page(run, reveal=True)
    fan = html[html.index('data-context="no-context"'):]
    ticks = re.findall(r'<text class="tick"[^>]*>([^<]+)</text>', fan)[:5]
    history = task.history.iloc[-3 * task.horizon:]
    span = (task.future_index[-1] - history.index[0]).total_seconds()
    fmt = "%m-%d %H:%M" if span < 10 * 86400 else "%Y-%m-%d"
    assert ticks[0] == history.index[0].strftime(fmt) and ticks[-1] == task.future_index[-1].strftime(fmt)
    assert not ticks[0].startswith("1970")


def test_the_context_given_is_read_from_a_compressed_or_an_old_plain_proxy_log(tmp_path):
    """The forecaster's first request (``proxy/<call>/proxy.jsonl.zst``, or an older run's ``proxy.jsonl``)
    shows as the context panel."""
    from harness.logfile import LogWriter

    task = {t.benchmark_id: t for t in load_tasks(SAMPLE_DIR)}[TASK]
    store = RunStore.create(tmp_path / "dr")
    write_json(store.root / "run.json", {"spec": {"template": "drcik", "params": {"tasks": "sample"}}})
    for forecaster, name in (("llm-new", "proxy.jsonl.zst"), ("llm-old", "proxy.jsonl")):
        label = f"{forecaster}_supporting-evidence_{TASK}"
        paths = store.episode(label).create()
        np.save(paths.root / "samples.npy", np.tile(np.arange(20, dtype=float)[:, None], (1, task.horizon)))
        prompt = f"Forecast.\n<context>\nA bug inflated sales ({forecaster}).\n</context>\nGo."
        first = {"type": "request", "seq": 1, "body": {"messages": [{"role": "user", "content": prompt}]}}
        log = paths.root / "proxy" / "llm-dp-0001" / name
        log.parent.mkdir(parents=True)
        writer = LogWriter(log)
        writer.write((json.dumps(first) + "\n").encode())
        writer.close()
        write_json(paths.row, {"run_id": store.run_id, "episode": label, "template": "drcik", "task": "t",
                               "forecaster": forecaster, "context": "supporting-evidence", "benchmark_id": TASK,
                               "status": "ok", "scale_status": task.scale_status, "scrps": 0.1})
    store.write_results()
    site = Site(load_runs([store.root]), reveal=False)
    for forecaster in ("llm-new", "llm-old"):
        html = site.render(f"runs/dr/{forecaster}_supporting-evidence_{TASK}/index.html")[0].decode()
        assert "Context given to the forecaster · supporting-evidence" in html
        assert f'<pre class="text">A bug inflated sales ({forecaster}).</pre>' in html

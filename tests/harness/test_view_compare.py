"""``harness view`` for comparing agents: leaderboards a researcher can read and sort, Dr-CiK deep-research
agents kept apart with their ``dr_scores.jsonl`` numbers, bundles that leak nothing, phone-width pages and a
page per test batch with every agent's answer.  Runs are made here by hand (the documented layout), so the
values checked are known; the browser tests use headless Debian Chromium (Playwright)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness.store import RunStore, write_json
from harness.view.bundle import export_bundle
from harness.view.data import leaderboard, load_runs
from harness.view.site import Site, scrub_paths

from tests.support.report_runs import make_main_run, read_json
from tests.support.view import browser, chromium_missing, served, shot

BROWSER = chromium_missing()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=BROWSER or "")

AGENTS = ("retrieval-bm25-gemini-3-flash", "opendr-gemini-3-flash")
#: dr_scores.jsonl values per agent (task_42): what the leaderboard and the research rows must show
DR = {AGENTS[0]: {"evidence_recall": 0.5, "supporting_recall": 0.25, "distractor_avoidance": 0.75, "hallucinated": 1,
                  "distractor_avoidance_cited": 0.5, "hallucinated_occurrences": 3},  # fields a scorer may add
      AGENTS[1]: {"evidence_recall": 1.0, "supporting_recall": 0.5, "distractor_avoidance": 1.0, "hallucinated": 0}}
#: sCRPS of the forecast rows: (context, evidence agent) -> value
SCRPS = {("no-context", None): 0.40, ("dr-evidence", AGENTS[0]): 0.30, ("dr-evidence", AGENTS[1]): 0.20}


def _dr_runs(root: Path) -> tuple[Path, Path]:
    research = RunStore.create(root / "research")
    for i, agent in enumerate(AGENTS):
        paths = research.episode(f"research_task_42-{i}").create()
        write_json(paths.row, {"run_id": research.run_id, "episode": f"research_task_42-{i}", "task": "drcik-research",
                               "template": "drcik", "episode_kind": "research", "benchmark_id": "task_42",
                               "profile": agent, "status": "ok", "total_tokens": 60_000 + i, "cost_usd": 0.03,
                               "agent_seconds": 10.0, "hallucinated_ids": DR[agent]["hallucinated"],
                               "distractor_citations": 1 - i, "cross_task_citations": 0, "evidence_items": 3})
    research.write_results()
    scores = [{"agent": a, "benchmark_id": "task_42", "judge_label": "lexical@lexical-v1 (lexical)", **v}
              for a, v in DR.items()]
    scores.append({"agent": AGENTS[0], "benchmark_id": "task_42", "judge_label": "other@1 (llm)",
                   "evidence_recall": 0.0})  # a second judge with fewer rows is not the one shown
    (research.root / "dr_scores.jsonl").write_text("".join(json.dumps(s) + "\n" for s in scores) + "not json\n")
    forecast = RunStore.create(root / "forecast")
    for i, ((context, agent), value) in enumerate(SCRPS.items()):
        key = f"naive_{context}_task_42-{i}"
        paths = forecast.episode(key).create()
        write_json(paths.row, {"run_id": forecast.run_id, "episode": key, "task": "drcik-forecast", "template": "drcik",
                               "episode_kind": "forecast", "benchmark_id": "task_42", "forecaster": "naive",
                               "context": context, "evidence_agent": agent, "status": "ok", "scrps": value,
                               "evidence_run": str(research.root) if agent else None, "seconds": 0.5})
    forecast.write_results()
    return research.root, forecast.root


def _sample(seed: int) -> pd.DataFrame:
    t = np.linspace(0.0, 10.0, 200)
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"col1": np.cos(t) + rng.normal(0, 0.05, t.size), "col2": -np.sin(t),
                         "col3": np.zeros_like(t), "col4": t})


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("view-compare")
    main = make_main_run(root, with_ablation=False)
    # the balldrop seed-0 low-noise direct batch: both agents' workspaces hold the ten test samples
    for agent in ("alpha", "beta"):
        folder = main / "episodes" / f"{agent}-ctx3-low-direct-balldrop-s0" / "workspace" / "test_samples"
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(10):
            _sample(i).to_parquet(folder / f"{i:012x}.parquet")
    research, forecast = _dr_runs(root)
    return {"tracebench": main, "research": research, "forecast": forecast, "root": root}


def _site(runs, **options) -> Site:
    return Site(load_runs([runs["tracebench"], runs["research"], runs["forecast"]]), **options)


# -- without a browser -----------------------------------------------------------------------------------------

def test_research_agents_are_apart_with_their_dr_scores(runs):
    site = _site(runs)
    rows = site.runs["research"].rows.set_index("profile")
    for agent, values in DR.items():  # read from dr_scores.jsonl (the judge with most rows), never computed
        assert rows.loc[agent, "dr_evidence_recall"] == values["evidence_recall"]
        assert rows.loc[agent, "dr_hallucinated"] == values["hallucinated"]
        assert rows.loc[agent, "dr_judge"] == "lexical@lexical-v1 (lexical)"
    assert rows.loc[AGENTS[0], "dr_hallucinated_occurrences"] == 3 and pd.isna(rows.loc[AGENTS[1],
                                                                                       "dr_distractor_avoidance_cited"])
    page = site.pages["drcik"]
    present, entries = leaderboard(list(site.runs.values()), "drcik", page.metric, page.conditions,
                                   page.agent_column, extra=tuple(c for c, _, _ in page.board_columns))
    assert present == ["context", "evidence_agent"]
    research = {e["agent"]: e for e in entries if e["run"] == "research"}
    assert set(research) == set(AGENTS) and all(e["n"] == 1 for e in research.values())
    assert research[AGENTS[1]]["extra"]["dr_supporting_recall"] == 0.5
    forecasts = {tuple(e["conditions"]): e for e in entries if e["run"] == "forecast"}
    assert {k: e["metric_mean"] for k, e in forecasts.items()} == {
        ("no-context", None): 0.40, ("dr-evidence", AGENTS[0]): 0.30, ("dr-evidence", AGENTS[1]): 0.20}
    html = site.render("runs/research/index.html")[0].decode()
    assert "evidence recall: 1.000" in html and "evidence recall: 0.500" in html  # the research rows' score
    forecast_page = site.render("runs/forecast/index.html")[0].decode()
    assert forecast_page.count("dr-evidence · opendr-gemini-3-flash") == 1  # the evidence agent is listed


def test_every_board_row_has_one_cell_per_header(runs):
    html = _site(runs).render("index.html")[0].decode()
    boards = re.findall(r'<table class="grid sortable board".*?</table>', html, re.S)
    # tracebench, tracebench by simulator, drcik sCRPS (forecasts), drcik DR scores (research episodes)
    assert len(boards) == 4
    assert "<th>evidence recall</th>" not in boards[2] and "sCRPS" not in boards[3]
    assert re.search(r'<th class="n" data-first="desc">evidence recall</th>', boards[3])
    for board in boards:
        head, body = board.split("</thead>")
        headers = len(re.findall(r"<th[ >]", head))
        rows = body.split("</tr>")[:-1]
        assert rows and {len(re.findall(r"<td[ >]", row)) for row in rows} == {headers}


def test_scrub_paths_keeps_urls_and_names():
    assert scrub_paths('{"path": "/home/me/runs/dr/research", "url": "https://x.org/v1/a"}') == \
        '{"path": "<research>", "url": "https://x.org/v1/a"}'
    assert scrub_paths("n/a and 3/4 stay; /tmp/x/ goes") == "n/a and 3/4 stay; <x> goes"
    assert scrub_paths(0.5) == 0.5


def test_bundle_has_no_local_path_role_column_review_page_or_calibration_file(runs, tmp_path):
    local = str(runs["root"])
    for with_answers in (False, True):
        out, _ = export_bundle(load_runs([runs["tracebench"], runs["research"], runs["forecast"]]),
                               tmp_path / f"site-{with_answers}", with_answers=with_answers)
        files = [p for p in out.rglob("*") if p.is_file()]
        text = "\n".join(p.read_text(errors="replace") for p in files)
        assert local not in text and "/tmp/" not in text  # run folders, evidence_run: no absolute path
        assert not [p for p in files if "calibration" in p.name or "generation-review" in str(p)]
        research_page = next(p for p in files if "research_task_42-0" in str(p) and p.name == "index.html")
        shown = research_page.read_text()
        for column in ("distractor_citations", "hallucinated_ids", "cross_task_citations", "dr_distractor_avoidance",
                       "dr_distractor_avoidance_cited", "dr_hallucinated_occurrences"):
            assert (f"<th>{column}</th>" in shown) == with_answers, (column, with_answers)
        assert "<th>evidence_items</th>" in shown  # other columns stay
        dr_page = next(p for p in files if "naive_dr-evidence_task_42-1" in str(p) and p.name == "index.html")
        assert ("<th>evidence_run</th><td>&lt;research&gt;</td>" in dr_page.read_text()) == with_answers
    assert (out / "compare" / "index.html").is_file()


def test_compare_pages_group_episodes_that_saw_the_same_batch(runs):
    site = _site(runs)
    pages = site.comparisons()
    # 4 conditions x 6 (simulator, seed) pairs, each seen by alpha and beta; task_42's two research agents
    assert len(pages) == 25 and all(len(p["members"]) == 2 for p in pages.values())
    research = next(k for k, p in pages.items() if p["title"] == "task_42 · research")
    shown = site.render(f"compare/{research}/index.html")[0].decode()
    hidden = _site(runs, reveal=False, bundle=True).render(f"compare/{research}/index.html")[0].decode()
    for html in (shown, hidden):  # each agent's dr_scores.jsonl numbers, side by side
        assert html.count('class="sample research-agent"') == 2
        assert "evidence recall: <b>0.500</b>" in html and "evidence recall: <b>1.000</b>" in html
    assert "distractor avoidance: <b>0.750</b>" in shown and "distractor avoidance" not in hidden
    key = next(k for k, p in pages.items() if p["title"].startswith("balldrop · low noise, direct") and "seed 0" in
               p["title"])
    html = site.render(f"compare/{key}/index.html")[0].decode()
    assert html.count('class="sample compare-sample"') == 10 and html.count("<svg") == 10


def test_the_compare_page_marks_the_intervention_as_the_episode_page_does(runs, tmp_path):
    """The batch's intervention times (the answer key's recipes) are drawn on the compare page's plots too, only
    when answers are revealed; the channels carry the names the prompt gave them."""
    import shutil

    run = tmp_path / "run-main"
    shutil.copytree(runs["tracebench"], run)
    folder = run / "episodes" / "alpha-ctx3-low-direct-balldrop-s0"
    write_json(folder / "key" / "recipes.json", [{"file": "000000000000.parquet", "t_int": 4.0},
                                                 {"file": "000000000003.parquet", "t_int": 7.5},
                                                 {"file": "000000000001.parquet", "t_int": None}])
    episode_path = "runs/run-main/alpha-ctx3-low-direct-balldrop-s0/index.html"
    for reveal in (True, False):
        site = Site(load_runs([run]), reveal=reveal)
        key = next(k for k, p in site.comparisons().items()
                   if p["title"].startswith("balldrop · low noise, direct") and "seed 0" in p["title"])
        compare, episode = (site.render(path)[0].decode() for path in (f"compare/{key}/index.html", episode_path))
        for html in (compare, episode):
            assert html.count('<line class="marker"') == (2 if reveal else 0)
            assert html.count(">intervention</text>") == (2 if reveal else 0)
            # x from 0 to 10 s in a 440 px chart whose plot starts at 120 px (a two-line channel name): 4 s at
            # 120 + 0.4 * 316
            assert (f'x1="{120 + 0.4 * 316:.1f}"' in html) == reveal
            assert 'fill="#1d2433">ball height</text>' in html and ">col1</text>" not in html
            assert "Channels as the prompt names them: col1 ball height, col2 ball velocity, col3 contact impulse " \
                   "(N*s), col4 time." in html.replace("&#39;", "'")
            assert '<p class="hint signals">Channels' in html and "&lt;p class" not in html  # markup, not text


# -- in the browser ----------------------------------------------------------------------------------------------

@needs_browser
def test_first_click_puts_the_best_first_and_tab_reaches_the_headers(runs):
    with served(_site(runs)) as (url, _), browser() as page:
        page.goto(url)
        board = page.locator("table.board[data-template=drcik]").first
        header = board.locator("thead th", has_text="sCRPS")
        header.click()
        assert header.get_attribute("aria-sort") == "ascending"
        assert header.evaluate("th => getComputedStyle(th, '::after').content") == '" ▲"'
        column = [h.strip() for h in board.locator("thead th").all_inner_texts()].index("sCRPS")
        values = board.locator(f"tbody tr td:nth-child({column + 1})").all_inner_texts()
        assert values == ["0.200", "0.300", "0.400"]  # lower is better: best first
        accuracy = page.locator("#board-1 thead th", has_text="accuracy")
        accuracy.click()
        assert accuracy.get_attribute("aria-sort") == "descending"  # higher is better: best first
        # keyboard: Tab from the page start reaches a sort header; Enter sorts it
        page.goto(url)
        for _ in range(30):
            page.keyboard.press("Tab")
            if page.evaluate("document.activeElement.tagName") == "TH":
                break
        assert page.evaluate("document.activeElement.tagName") == "TH"
        assert page.evaluate("document.activeElement.getAttribute('aria-sort')") == "none"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.getAttribute('aria-sort')") in ("ascending", "descending")


@needs_browser
def test_board_rows_line_up_with_headers_in_the_browser(runs):
    with served(_site(runs)) as (url, _), browser() as page:
        page.goto(url)
        counts = page.evaluate("""() => Array.from(document.querySelectorAll('table.board')).map(t => [
            t.tHead.rows[0].cells.length, Array.from(t.tBodies[0].rows).map(r => r.cells.length)])""")
        assert len(counts) == 4
        for headers, cells in counts:
            assert set(cells) == {headers}
        page.goto(f"{url}runs/research/index.html")
        page.fill('input[data-table="episodes"]', "opendr")
        assert page.locator("#episodes tbody tr:visible").count() == 1


@needs_browser
def test_phone_width_pages_do_not_scroll_sideways(runs):
    site = _site(runs)
    key = next(iter(site.comparisons()))
    paths = ["", "runs/run-main/index.html", "runs/research/index.html", "runs/forecast/index.html",
             "runs/research/research_task_42-0/index.html",
             "runs/run-main/alpha-ctx3-low-direct-balldrop-s0/index.html",
             "compare/index.html", f"compare/{key}/index.html"]
    with served(site) as (url, _), browser() as page:
        for width in (390, 1280):
            page.set_viewport_size({"width": width, "height": 844})
            for path in paths:
                page.goto(url + path)
                wide = page.evaluate("document.documentElement.scrollWidth")
                assert wide <= width, (path, width, wide)
                shot(page, f"{width}-{(path.replace('/', '_').replace('.html', '') or 'home')}")


@needs_browser
def test_at_phone_width_the_leaderboard_metric_stays_in_view(runs):
    """At 390 px a leaderboard scrolls inside its box; its metric column stays at the box's right edge (sticky),
    so each row's score is on screen without scrolling."""
    with served(_site(runs)) as (url, _), browser() as page:
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(url)
        boxes = page.evaluate("""() => Array.from(document.querySelectorAll('table.board')).flatMap(t =>
            Array.from(t.querySelectorAll('th.metric, td.metric')).map(c => {
                const r = c.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.right)]; }))""")
        assert len(boxes) > 10 and all(0 <= left and right <= 390 for left, right in boxes), boxes
        page.set_viewport_size({"width": 1280, "height": 900})  # wide: the column sits where it belongs
        page.goto(url)
        assert page.evaluate("getComputedStyle(document.querySelector('td.metric')).position") == "static"


@needs_browser
def test_compare_page_shows_every_agents_answer_for_a_sample(runs):
    site = _site(runs)
    key = next(k for k, p in site.comparisons().items()
               if p["title"].startswith("balldrop · low noise, direct") and "seed 0" in p["title"])
    folders = {agent: runs["tracebench"] / "episodes" / f"{agent}-ctx3-low-direct-balldrop-s0"
               for agent in ("alpha", "beta")}
    details = {agent: {d["file"]: d for d in read_json(folder / "score.json")["details"]}
               for agent, folder in folders.items()}
    with served(site) as (url, _), browser() as page:
        page.goto(f"{url}compare/{key}/index.html")
        cards = page.locator(".compare-sample")
        assert cards.count() == 10
        for i in range(10):
            card = cards.nth(i)
            name = card.get_attribute("data-file")
            rows = card.locator("tr.agent-answer")
            assert rows.locator("th").all_inner_texts() == ["alpha", "beta"]
            assert rows.locator("td.answer-text").all_inner_texts() == [
                " › ".join(details[a][name]["predicted"]) for a in ("alpha", "beta")]
            assert card.locator(".true-label").inner_text() == details["alpha"][name]["true_label"]
            assert card.locator("svg.chart").count() == 1
        page.check("input.only-diff")
        assert page.locator("#diff tr.same:visible").count() == 0
        assert page.locator("#diff tr.differs:visible th").all_inner_texts()[:2] == ["episode", "profile"]


@needs_browser
def test_a_page_open_during_a_run_shows_an_episode_that_finishes_later(tmp_path):
    """No reload, no restart: the live viewer re-reads the run folder and the open page polls it."""
    store = RunStore.create(tmp_path / "live")
    row = {"run_id": store.run_id, "task": "t", "template": "other", "profile": "p", "status": "ok"}
    paths = store.episode("ep-1").create()
    write_json(paths.row, {**row, "episode": "ep-1"})
    later = store.episode("ep-2").create()  # started, not finished: no row.json yet
    site = Site(load_runs([store.root]), live=True)
    with served(site) as (url, _), browser() as page:
        page.goto(f"{url}runs/live/index.html")
        assert page.locator("#episodes tbody tr").all_inner_texts()[0].startswith("ep-1")
        assert page.locator("#episodes tbody tr").count() == 1
        page.fill('input[data-table="episodes"]', "ep")  # the filter stays applied to the new rows
        write_json(later.row, {**row, "episode": "ep-2", "status": "failed"})
        page.wait_for_function("document.querySelectorAll('#episodes tbody tr').length === 2", timeout=5000)
        assert page.locator("#episodes tbody tr td:first-child").all_inner_texts() == ["ep-1", "ep-2"]
        assert page.locator(".toolbar .count").inner_text() == "2 of 2 shown"
        page.goto(url)
        assert page.locator("table.sortable tbody tr td:nth-child(4)").first.inner_text() == "2"
        # a resumed run: results.parquet written, then one more episode finishes
        store.write_results()
        third = store.episode("ep-3").create()
        write_json(third.row, {**row, "episode": "ep-3"})
        page.wait_for_function(
            "document.querySelector('table.sortable tbody tr td:nth-child(4)').textContent === '3'", timeout=5000)
    bundle = Site(load_runs([store.root]), bundle=True)
    assert 'data-live' not in bundle.render("runs/live/index.html")[0].decode()  # a bundle never polls


def _call_log(path: Path, n: int) -> None:
    """A proxy log of ``n`` calls; request headers include credentials a hand-written log might carry."""
    lines = []
    for seq in range(1, n + 1):
        lines.append({"type": "request", "seq": seq, "ts": 1000.0 + 10 * seq, "method": "POST", "path": "/v1/messages",
                      "headers": {"content-type": "application/json", "authorization": "Bearer SECRET-TOKEN",
                                  "x-api-key": "SECRET-KEY"},
                      "body": {"model": "m", "messages": [{"role": "user", "content": f"question number {seq}"}]},
                      "body_encoding": "json"})
        lines.append({"type": "response", "seq": seq, "ts": 1000.5 + 10 * seq, "status": 200,
                      "last_byte_ts": 1002.0 + 10 * seq,
                      "headers": {"request-id": f"req-{seq}", "set-cookie": "SECRET"},
                      "body": {"type": "message", "role": "assistant", "content": [{"type": "text",
                                                                                   "text": f"answer number {seq}"}]},
                      "body_encoding": "json", "usage": {"prompt_tokens": 100 * seq, "completion_tokens": seq},
                      "cost_usd": 0.01})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines) + "{broken\n")


@pytest.fixture
def traced(tmp_path) -> Path:
    from tests.support.view import trajectory

    store = RunStore.create(tmp_path / "traced")
    for key, agent in (("ep-1", "p"), ("ep-2", "q")):
        paths = store.episode(key).create()
        write_json(paths.row, {"run_id": store.run_id, "episode": key, "task": "t", "template": "other",
                               "profile": agent, "status": "ok" if agent == "p" else "failed"})
        (paths.root / "trajectory.json").write_text(json.dumps(trajectory(3)))
        _call_log(paths.root / "proxy.jsonl", 3)
    store.write_results()
    return store.root


@needs_browser
def test_each_step_links_to_its_raw_model_call_loaded_on_demand(traced, tmp_path):
    with served(Site(load_runs([traced]))) as (url, _), browser() as page:
        requests = []
        page.on("request", lambda r: requests.append(r.url))
        page.goto(f"{url}runs/traced/ep-1/index.html")
        assert not [r for r in requests if "call" in r]  # nothing read from the log until asked
        page.wait_for_function("document.documentElement.getAttribute('data-chunk-0') === 'loaded'")
        page.locator("li.step.agent").nth(1).locator("a.call-link").click()  # the second agent step
        page.wait_for_selector("#call-2 .raw-call")
        call = page.locator("#call-2 .raw-call").inner_text()
        assert "question number 2" in call and "answer number 2" in call and "request-id: req-2" in call
        # latency: request ts 1020 to the last byte at 1022
        assert "prompt_tokens: 200" in call and "2.00 s" in page.locator("#call-2 > details > summary").inner_text()
        assert page.locator("ol.calls li").count() == 3  # the broken line is skipped
        assert "SECRET" not in page.content()
        shot(page, "1280-model-calls")
    bundle, _ = export_bundle(load_runs([traced]), tmp_path / "site")
    assert not list(bundle.rglob("calls.html")) and "SECRET" not in "".join(
        p.read_text(errors="replace") for p in bundle.rglob("*") if p.is_file())


@needs_browser
def test_step_anchors_arrow_keys_facets_and_json_downloads(traced, runs):
    steps = json.loads((traced / "episodes" / "ep-1" / "trajectory.json").read_text())["steps"]
    with served(Site(load_runs([traced, runs["tracebench"]]))) as (url, _), browser() as page:
        page.goto(f"{url}runs/traced/ep-1/index.html#step-2")
        assert page.locator("li.step.current").get_attribute("id") == "step-2"
        page.keyboard.press("ArrowDown")
        assert page.evaluate("location.hash") == "#step-3"
        page.keyboard.press("k")
        page.keyboard.press("k")
        assert page.evaluate("location.hash") == "#step-1"
        trajectory = page.evaluate("fetch('trajectory.json').then(r => r.json())")
        assert trajectory["steps"] == steps
        page.goto(f"{url}runs/traced/index.html")
        page.select_option('select[data-facet="status"]', "failed")
        assert page.locator("#episodes tbody tr:visible td:first-child").all_inner_texts() == ["ep-2"]
        page.goto(f"{url}runs/run-main/index.html")
        page.select_option('select[data-facet="agent"]', "beta")
        page.select_option('select[data-facet="condition"]', "low noise, direct, context, 3 ex/class")
        assert page.locator("#episodes tbody tr:visible").count() == 6  # six (simulator, seed) pairs
        rows = page.evaluate("fetch('rows.json').then(r => r.json())")
        assert len(rows) == 48 and {r["profile"] for r in rows} == {"alpha", "beta"}


def test_a_tracebench_episode_marks_the_intervention_and_shows_labelled_examples(runs, tmp_path):
    import shutil

    run = tmp_path / "run-main"
    shutil.copytree(runs["tracebench"], run)
    folder = run / "episodes" / "alpha-ctx3-low-direct-balldrop-s0"
    write_json(folder / "key" / "recipes.json", [{"file": "000000000000.parquet", "t_int": 4.0},
                                                 {"file": "000000000001.parquet", "t_int": None}])
    (folder / "workspace" / "train_samples").mkdir()
    labels = {"a.parquet": "mass", "b.parquet": "mass", "c.parquet": "drag coefficient"}
    for i, name in enumerate(labels):
        _sample(20 + i).to_parquet(folder / "workspace" / "train_samples" / name)
    write_json(folder / "workspace" / "train_labels.json", labels)
    path = "runs/run-main/alpha-ctx3-low-direct-balldrop-s0/index.html"
    shown, hidden = (Site(load_runs([run]), reveal=r).render(path)[0].decode() for r in (True, False))
    # the one sample with an intervention, at t = 4 s of 0..10 s: the key's time, shown only with answers
    assert shown.count('<line class="marker"') == 1 and ">intervention</text>" in shown
    assert 'class="marker"' not in hidden
    for html in (shown, hidden):  # what the agent was given: one labelled example per class, 12 px labels
        assert "Labelled examples (3, one per class shown)" in html and html.count('class="sample example"') == 2
        # the channels as the prompt names them (with context), a long name on two lines
        assert 'font-size="12" text-anchor="end" fill="#1d2433">ball height</text>' in html
        assert 'fill="#1d2433">contact impulse</text>' in html and 'fill="#1d2433">(N*s)</text>' in html
        assert '<link rel="icon" href="data:,">' in html  # no favicon request, no 404


@needs_browser
def test_outcome_facet_picks_the_all_right_episodes(runs):
    with served(_site(runs)) as (url, _), browser() as page:
        page.goto(f"{url}runs/run-main/index.html")
        page.select_option('select[data-facet="outcome"]', "all right")
        # accuracy 1.0 only in alpha, low noise, direct: massslide seeds 0 and 1
        assert sorted(page.locator("#episodes tbody tr:visible td:first-child").all_inner_texts()) == [
            "alpha-ctx3-low-direct-massslide-s0", "alpha-ctx3-low-direct-massslide-s1"]

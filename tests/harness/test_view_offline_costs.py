"""The viewer marks costs an offline model backend (a script) answered: on the run page, the episode page and the
leaderboards, where such rows rank on a board of their own after the real ones, with no best mean."""

from __future__ import annotations

import html
import re

import pytest

from harness.store import RunStore
from harness.view.data import load_runs
from harness.view.site import Site
from tests.support.report_runs import episode

SCRIPTED = {"model_backend": "scripted", "model_billed": False, "n_requests": 4}
REAL = {"model_backend": "anthropic", "model_billed": True, "n_requests": 4}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Site:
    """One real run (opus 0.5, sonnet 0.3) and one scripted run of the same profile names that scores higher
    (0.9, the script knows the answers); a run of rows written before the backend columns existed, whose run.json
    names the offline backend."""
    root = tmp_path_factory.mktemp("offline")
    real = RunStore.create(root / "real")
    for seed in (0, 1):
        episode(real, agent="opus", sim="balldrop", seed=seed, noise="low", submission="direct", accuracy=0.5,
                extra={**REAL, "cost_usd": 1.25})
        episode(real, agent="sonnet", sim="balldrop", seed=seed, noise="low", submission="direct", accuracy=0.3,
                extra={**REAL, "cost_usd": 0.5})
    real.write_results()
    scripted = RunStore.create(root / "scripted")
    for seed in (0, 1):
        episode(scripted, agent="opus", sim="balldrop", seed=seed, noise="low", submission="direct", accuracy=0.9,
                extra={**SCRIPTED, "cost_usd": 0.75})
    scripted.write_results()
    old = RunStore.create(root / "old")
    episode(old, agent="sonnet", sim="balldrop", seed=0, noise="low", submission="direct", accuracy=0.7,
            extra={"n_requests": 2, "cost_usd": 0.25})
    old.write_results()
    old.write_run_json({"model_backend": "scripted"})
    return Site(load_runs([real.root, scripted.root, old.root]))


def boards(html: str) -> list[str]:
    return re.findall(r'<section class="board( offline)?">(.*?)</section>', html, re.S)


def test_scripted_rows_rank_on_a_board_of_their_own_after_the_real_ones(site):
    found = boards(site.render("index.html")[0].decode())
    # the template's boards, then its boards by simulator: each a real one and an offline one after it
    assert [bool(offline) for offline, _ in found] == [False, True, False, True]
    assert "by simulator" in found[2][1] and "by simulator" in found[3][1] and "offline model" in found[3][1]
    real, offline = found[0][1], found[1][1]
    assert "<h2>Leaderboard · tracebench</h2>" in real
    assert re.findall(r"<td>(opus|sonnet)</td>", real) == ["opus", "sonnet"]  # 0.5 then 0.3: the script's 0.9 is not here
    assert "(scripted)" not in real and 'class="offline"' not in real
    assert "<h2>Leaderboard · tracebench · offline model (scripted)</h2>" in offline
    assert "Not ranked with the boards above: these episodes' model calls were answered by an offline model " \
           "backend (scripted), not by the model named; their costs are the profiles' prices for the tokens an " \
           "offline model backend answered with; no money was spent." in html.unescape(offline)
    assert re.findall(r"<td>(opus|sonnet)</td>", offline) == ["opus", "sonnet"]  # 0.9 then 0.7
    assert "metric best" not in offline  # a script's score is no best
    costs = re.findall(r'data-sort="([\d.]+)">[\d.]+ <span class="offline" title="[^"]+">\((\w+)\)</span>', offline)
    assert costs == [("0.75", "scripted"), ("0.25", "scripted")]


def test_the_run_page_marks_each_scripted_cost_and_says_why(site):
    page = site.render("runs/scripted/index.html")[0].decode()
    assert len(re.findall(r'>0\.7500 <span class="offline" title="[^"]+">\(scripted\)</span>', page)) == 2
    assert "2 episode(s) answered by an offline model backend (scripted), not by the model named" in page
    real = site.render("runs/real/index.html")[0].decode()
    assert 'class="offline"' not in real and "offline model backend" not in real
    old = site.render("runs/old/index.html")[0].decode()
    assert re.search(r'>0\.2500 <span class="offline" title="[^"]+">\(scripted\)</span>', old)


def test_the_episode_page_marks_its_cost(site):
    slug = next(s for s in site.runs["scripted"].episode_slugs)
    page = site.render(f"runs/scripted/{slug}/index.html")[0].decode()
    assert re.search(r"<dt>cost \(USD\)</dt><dd>0\.7500 \(scripted: the profiles&#39; prices for the tokens an "
                     r"offline model backend answered with; no money was spent\)</dd>", page)
    slug = site.runs["real"].episode_slugs[0]
    assert re.search(r"<dt>cost \(USD\)</dt><dd>[\d.]+</dd>", site.render(f"runs/real/{slug}/index.html")[0].decode())

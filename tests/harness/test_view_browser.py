"""``harness view`` in headless Debian Chromium (Playwright), on real run directories.

The runs are made here, offline: ``euclidean-1nn`` and Claude Code (the real
CLI from the npm prefix, against the scripted model backend; the script
plots a test sample, reads the plot back and answers) on BallDrop shrunk to
5 test samples, in a local sandbox; and a Dr-CiK forecasting run
(naive and SES, two context conditions).  Screenshots are written to
``tests/artifacts/view/``.  Runtime: about a minute.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from harness import plugins as registry
from harness.cli import cli
from harness.view.data import load_runs
from harness.view.site import Site

from tests.support.view import browser, chromium_missing, served, shot, trajectory, write_proxy_log
from tests.support.paths import REPO

pytestmark = pytest.mark.slow

SPEC = REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"
SMALL = {"n_test": 5, "heldout_per_class": 2, "pool_per_class": 25}
BROWSER = chromium_missing()
needs_browser = pytest.mark.skipif(BROWSER is not None, reason=BROWSER or "")

PLOT_SCRIPT = {"turns": [
    {"reasoning": "Plot a test sample first.", "text": "I will plot a test sample and run a nearest-neighbour script.",
     "tool_calls": [{"shell": (
         "cat > nearest.py <<'PY'\n"
         "import json, os\nimport numpy as np\nimport pandas as pd\nimport matplotlib\nmatplotlib.use('Agg')\n"
         "import matplotlib.pyplot as plt\n"
         "labels = json.load(open('train_labels.json'))\n"
         "def series(path):\n    return pd.read_parquet(path)[['col1', 'col2', 'col3']].to_numpy(float)\n"
         "names = sorted(os.listdir('test_samples'))\nfirst = series(os.path.join('test_samples', names[0]))\n"
         "fig, ax = plt.subplots(figsize=(4, 2.5))\nax.plot(first)\nfig.savefig('sample0.png', dpi=60)\n"
         "train = {n: series(os.path.join('train_samples', n)) for n in labels}\nresults = {}\n"
         "for name in names:\n    x = series(os.path.join('test_samples', name))\n"
         "    near = min(train, key=lambda t: np.linalg.norm(train[t][: len(x)] - x[: len(train[t])]))\n"
         "    results[name] = [labels[near]]\n"
         "json.dump(results, open('results.json', 'w'), indent=1)\n"
         "print(f'wrote results.json with {len(results)} predictions; first sample mean {first.mean():.4f}')\n"
         "PY\npython3 nearest.py\n")}],
     "usage": {"prompt_tokens": 12000, "cached_tokens": 8000, "completion_tokens": 400}},
    {"text": "Let me look at the plot.",
     "tool_calls": [{"name": "Read", "arguments": {"file_path": "/workspace/sample0.png"}}],
     "usage": {"prompt_tokens": 12800, "cached_tokens": 12000, "completion_tokens": 60}},
    {"text": "results.json is written: each test file gets the label of its nearest labeled example.",
     "usage": {"prompt_tokens": 13800, "cached_tokens": 12800, "completion_tokens": 50}},
]}


def local_sandbox() -> str:
    for name in ("bubblewrap", "unshare"):
        if registry.get("sandbox_backend", name).available()[0]:
            return name
    return "none"


def claude_prefix() -> Path | None:
    from tsagent_plugins.agents.terminal.base import host_prefix

    agent = registry.get("agent", "claude-code")
    return host_prefix(agent.package, agent.version, agent.binary)[0]


def harness(*args: str) -> None:
    registry.plugins()
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output[-3000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path | None]:
    root = tmp_path_factory.mktemp("view-runs")
    spec = yaml.safe_load(SPEC.read_text())
    spec["params"].update(SMALL)
    (root / "small.yaml").write_text(yaml.safe_dump(spec))
    (root / "plot.yaml").write_text(yaml.safe_dump(PLOT_SCRIPT, sort_keys=False))
    made: dict[str, Path | None] = {"classical": root / "euclidean-1nn", "drcik": root / "drcik", "llm": None}
    sandbox, prefix = local_sandbox(), claude_prefix()
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HARNESS_CACHE_DIR", str(root / "cache"))
        harness("run", "--task", str(root / "small.yaml"), "--sandbox", sandbox, "--out", str(made["classical"]))
        harness("run", "--task", str(REPO / "tasks/drcik/sample-statistical.yaml"), "--set", "forecasters=[naive, ses]",
                "--set", "samples=20", "--out", str(made["drcik"]))
        if prefix is not None and sandbox != "none":
            env.setenv("HARNESS_AGENT_PREFIX", str(prefix))
            made["llm"] = root / "claude"
            harness("run", "--task", str(root / "small.yaml"), "--agent", "claude-opus-4.6", "--sandbox", sandbox,
                    "--model-backend", "scripted", "--script", str(root / "plot.yaml"), "--timeout", "180",
                    "--seed", "0", "--seed", "1", "--out", str(made["llm"]))
    return made


def llm_run(runs) -> Path:
    if runs["llm"] is None:
        pytest.skip("needs a local sandbox and Claude Code in an npm prefix on the host (HARNESS_AGENT_PREFIX)")
    return runs["llm"]


def score_details(run: Path, episode: str) -> list[dict]:
    return json.loads((run / "episodes" / episode / "score.json").read_text())["details"]


# -- the bundle's answers ---------------------------------------------------------------------------------------

def test_bundle_has_no_answer_key_or_document_role_without_with_answers(runs, tmp_path):
    folders = {}
    for name, extra in (("public", []), ("full", ["--with-answers"])):
        folders[name] = tmp_path / name
        harness("view", str(runs["classical"]), str(runs["drcik"]), "--bundle", str(folders[name]), *extra)

    def text(folder: Path) -> str:
        return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*")
                         if p.is_file() and "static" not in p.parts)

    hidden, shown = text(folders["public"]), text(folders["full"])
    episode = pd.read_parquet(runs["classical"] / "results.parquet")["episode"].iloc[0]
    details = score_details(runs["classical"], episode)
    key = json.loads((runs["classical"] / "episodes" / episode / "key" / "key.json").read_text())
    # with --with-answers every test sample's true label is shown, and the Dr-CiK roles and evidence
    assert shown.count('class="true-label"') == len(details) == 5
    for detail in details:
        assert f'<b class="true-label">{detail["true_label"]}</b>' in shown
    assert 'class="answer doc-role"' in shown and "Ground-truth evidence" in shown and 'class="future"' in shown
    # without it: no label reveal, no verdict, no role, no evidence, no realised future, no key file
    for marker in ('class="true-label"', "true label:", 'class="verdict"', "doc-role", "distractor",
                   "Ground-truth evidence", 'class="future"', "label_mapping", "recipes"):
        assert marker not in hidden, marker
    assert json.dumps(key["labels"]) not in hidden
    hidden = ("key.json", "score.json", "proxy.jsonl", "proxy.jsonl.zst")
    assert not [p for p in folders["public"].rglob("*") if p.name in hidden]


# -- pages in the browser ---------------------------------------------------------------------------------------

@needs_browser
def test_run_page_lists_the_episodes_of_a_scripted_run(runs):
    run = llm_run(runs)
    rows = pd.read_parquet(run / "results.parquet")
    with served(Site(load_runs([run, runs["classical"], runs["drcik"]]))) as (url, _), browser() as page:
        page.goto(url)
        boards = page.locator("section.board h2").all_inner_texts()
        # the scripted claude-opus-4.6 episodes rank on a board of their own, after the real one (euclidean-1nn)
        assert boards == ["Leaderboard · tracebench", "Leaderboard · tracebench · offline model (scripted)",
                          "Leaderboard · tracebench · by simulator",
                          "Leaderboard · tracebench · offline model (scripted) · by simulator", "Leaderboard · drcik"]
        assert page.locator("#board-1 tbody tr td:first-child").all_inner_texts() == ["euclidean-1nn"]
        assert page.locator("#board-2 tbody tr td:first-child").all_inner_texts() == ["claude-opus-4.6"]
        assert "(scripted)" in page.locator("#board-2 tbody tr").first.inner_text()
        page.fill('input[data-table="board-2"]', "euclidean")
        assert page.locator("#board-2 tbody tr:visible").count() == 0
        shot(page, "index")
        page.click(f'text={run.name}')
        page.wait_for_selector("#episodes")
        listed = page.locator("#episodes tbody tr.episode-row td:first-child").all_inner_texts()
        assert sorted(listed) == sorted(rows["episode"]) and len(listed) == 2
        page.click("#episodes thead th:nth-child(1)")
        assert page.locator("#episodes tbody tr td:first-child").all_inner_texts() == sorted(rows["episode"])
        shot(page, "run")


@needs_browser
def test_episode_page_shows_steps_an_inline_plot_and_the_revealed_label(runs):
    run = llm_run(runs)
    episode = pd.read_parquet(run / "results.parquet")["episode"].iloc[0]
    steps = json.loads((run / "episodes" / episode / "trajectory.json").read_text())["steps"]
    details = score_details(run, episode)
    with served(Site(load_runs([run]))) as (url, _), browser() as page:
        page.goto(f"{url}runs/{run.name}/{episode}/index.html")
        assert page.locator("li.step").count() == len(steps) == 4
        page.wait_for_function("document.documentElement.getAttribute('data-chunk-0') === 'loaded'")
        bash = page.locator("#body-1")
        assert "nearest.py" in bash.inner_text() and "wrote results.json with 5 predictions" in bash.inner_text()
        assert page.locator("#body-1 pre.out .num").first.inner_text() == "5"  # numbers printed, highlighted
        plot = page.locator("#body-1 figure.plot")
        assert "sample0.png" in plot.inner_text() and "inspected" in plot.inner_text()
        assert page.evaluate("document.querySelector('#body-1 figure.plot img').naturalWidth") > 0
        assert page.locator("li.step .usage").nth(1).inner_text().startswith("12000 in · 400 out")
        labels = page.locator(".true-label").all_inner_texts()
        assert sorted(labels) == sorted(d["true_label"] for d in details if d["split"] == "test")
        assert page.locator(".samples .sample[data-file] svg.chart").count() == 5  # the test samples
        # and, folded, one labelled example per class (BallDrop: four parameters and no change)
        assert page.locator(".samples .example svg.chart").count() == 5
        shot(page, "episode")


@needs_browser
def test_drcik_page_shows_a_forecast_fan_per_context(runs):
    rows = pd.read_parquet(runs["drcik"] / "results.parquet")
    row = rows[(rows["forecaster"] == "ses") & (rows["context"] == "no-context")].iloc[0]
    with served(Site(load_runs([runs["drcik"]]))) as (url, _), browser() as page:
        page.goto(f"{url}runs/drcik/{row['episode']}/index.html")
        fans = page.locator(".forecast")
        assert fans.count() == 2
        assert [fans.nth(i).get_attribute("data-context") for i in range(2)] == ["no-context", "supporting-evidence"]
        for i in range(2):
            assert fans.nth(i).locator("polygon.fan-outer").count() == 1
            assert fans.nth(i).locator("polygon.fan-inner").count() == 1
            assert fans.nth(i).locator("polyline.future").count() == 1
        box = fans.nth(0).locator("svg").bounding_box()
        assert box["width"] > 200 and box["height"] > 80
        shot(page, "drcik")


@needs_browser
def test_an_episode_with_a_70_mb_proxy_log_paints_and_loads_step_bodies_lazily(runs, tmp_path):
    """A TraceBench episode with a 2,000-step trajectory (20 output lines per step) and a 70 MB proxy log.

    The page paints and later chunks load only when scrolled to; the 3 s first-paint target is measured by
    ``benchmarks/view.py``, not asserted here (a timing depends on the machine's load)."""
    source = runs["classical"]
    run = tmp_path / "big"
    shutil.copytree(source, run, ignore=shutil.ignore_patterns("cache"))
    episode = pd.read_parquet(run / "results.parquet")["episode"].iloc[0]
    folder = run / "episodes" / episode
    (folder / "trajectory.json").write_text(json.dumps(trajectory(2000, output_lines=20)))
    size = write_proxy_log(folder / "proxy.jsonl", 70)
    assert size >= 70_000_000
    with served(Site(load_runs([run]))) as (url, _), browser() as page:
        page.goto(f"{url}runs/big/{episode}/index.html", wait_until="load")
        first_paint = page.evaluate(
            "performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0]")
        print(f"first contentful paint: {first_paint:.0f} ms (trajectory "
              f"{(folder / 'trajectory.json').stat().st_size / 1e6:.1f} MB, proxy log {size / 1e6:.1f} MB)")
        assert first_paint is not None
        assert page.locator("li.step").count() == 2001
        page.wait_for_function("document.documentElement.getAttribute('data-chunk-0') === 'loaded'")
        assert page.locator("#body-1 pre.out").count() == 1
        assert page.locator("#body-1900 pre.out").count() == 0  # later chunks load when scrolled to
        page.locator("#step-1900").scroll_into_view_if_needed()
        page.wait_for_selector("#body-1900 pre.out", timeout=10_000)


@needs_browser
def test_bundle_over_file_url_shows_steps_and_a_plot(runs, tmp_path):
    run = llm_run(runs)
    episode = pd.read_parquet(run / "results.parquet")["episode"].iloc[0]
    bundle = tmp_path / "site"
    harness("view", str(run), str(runs["drcik"]), "--bundle", str(bundle))
    with browser() as page:
        page.goto((bundle / "runs" / run.name / episode / "index.html").as_uri())
        page.wait_for_function("document.documentElement.getAttribute('data-chunk-0') === 'loaded'")
        assert page.locator("li.step").count() == 4
        assert "wrote results.json with 5 predictions" in page.locator("#body-1").inner_text()
        assert page.evaluate("document.querySelector('#body-1 figure.plot img').naturalWidth") > 0
        assert page.locator(".true-label").count() == 0 and page.locator(".badge.public").count() == 1
        shot(page, "bundle-episode")
        page.goto((bundle / "index.html").as_uri())
        page.click(f"text={run.name}")
        assert page.locator("#episodes tbody tr").count() == 2
        page.goto((bundle / "runs" / "drcik" / "index.html").as_uri())
        page.locator("#episodes tbody tr td a").first.click()
        assert page.locator(".forecast polygon.fan-outer").count() >= 1

"""``harness view`` without a browser: leaderboards, trajectory steps, plots, the server's guards, the bundle."""

from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from harness.cli import cli
from harness.store import RunStore, write_json
from harness.view.data import leaderboard, load_runs, plots, read_trajectory, step_views
from harness.view.html import highlight_numbers
from harness.view.server import allowed_hosts
from harness.view.site import CHUNK, Site

from tests.support.report_runs import ACCURACY, make_main_run
from tests.support.view import served, trajectory

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


@pytest.fixture(scope="module")
def main_run(tmp_path_factory) -> Path:
    return make_main_run(tmp_path_factory.mktemp("view"), with_ablation=False)


@pytest.fixture
def traced_run(tmp_path) -> Path:
    """One TraceBench-like episode with a 60-step trajectory, a plot that was read and one never opened."""
    store = RunStore.create(tmp_path / "traced")
    paths = store.episode("ep-1").create()
    write_json(paths.row, {"run_id": store.run_id, "episode": "ep-1", "task": "t", "template": "other",
                           "profile": "p", "status": "ok", "total_tokens": 1234, "cost_usd": 0.5})
    (paths.workspace / "fig.png").write_bytes(PNG)
    (paths.workspace / "unseen.png").write_bytes(PNG)
    (paths.workspace / ".cache").mkdir()
    (paths.workspace / ".cache" / "cached.png").write_bytes(PNG)
    # links the agent made to files outside its workspace are never listed or served
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "host.png").write_bytes(b"HOST-SECRET")
    (paths.workspace / "leak.png").symlink_to(outside / "host.png")
    (paths.workspace / "linked").symlink_to(outside, target_is_directory=True)
    (paths.root / "trajectory.json").write_text(json.dumps(trajectory(60, plot="fig.png")))
    (paths.key / "key.json").write_text(json.dumps({"labels": ["SECRET-LABEL"]}))
    store.write_results()
    return store.root


def test_leaderboard_values_are_mean_and_sample_sd(main_run):
    runs = load_runs([main_run])
    conditions, entries = leaderboard(runs, "tracebench", "accuracy", ("noise", "submission", "nothing"))
    assert conditions == ["noise", "submission"]  # a condition column no row has is left out
    assert len(entries) == len(ACCURACY)
    for entry in entries:
        values = ACCURACY[(entry["agent"], *entry["conditions"])]
        assert entry["n"] == 6
        assert entry["metric_mean"] == pytest.approx(np.mean(values))
        assert entry["metric_sd"] == pytest.approx(np.std(values, ddof=1))
        assert entry["failures"] == 0
    alpha = next(e for e in entries if e["agent"] == "alpha" and e["conditions"] == ["low", "direct"])
    assert alpha["tokens"] == 1_000_000 and alpha["cost"] == pytest.approx(np.mean([1.0 + 0.5 * i for i in range(6)]))
    assert alpha["seconds"] == pytest.approx(100.5)  # agent_seconds 100 + seed, seeds 0 and 1


def test_two_runs_side_by_side_and_unique_ids(main_run):
    runs = load_runs([main_run, main_run])
    assert [r.id for r in runs] == ["run-main", "run-main-2"]
    _, entries = leaderboard(runs, "tracebench", "accuracy", ("noise", "submission"))
    assert {e["run"] for e in entries} == {"run-main", "run-main-2"} and len(entries) == 2 * len(ACCURACY)
    html = Site(runs).render("index.html")[0].decode()
    boards = html.split('<section class="board">')[1:]
    assert [re.search(r"<h2>(.*?)</h2>", b).group(1) for b in boards] == [
        "Leaderboard · tracebench", "Leaderboard · tracebench · by simulator"]
    assert boards[0].count('href="runs/run-main-2/index.html"') == len(ACCURACY)
    assert boards[1].count('href="runs/run-main-2/index.html"') == 3 * len(ACCURACY)  # three simulators
    # pooled over simulators, ± is Table 1's within-simulator SD: alpha low direct is 0.9 0.7 | 0.6 0.8 | 1.0 1.0,
    # residuals ±0.1 ±0.1 0 0 -> sqrt(0.04 / 5) = 0.089 (the SD over all six would be 0.160)
    assert "0.833 ± 0.089" in boards[0] and "0.833 ± 0.160" not in html
    assert "0.800 ± 0.141" in boards[1]  # balldrop alone: 0.9 and 0.7


def test_step_views_time_tokens_errors(traced_run):
    runs = load_runs([traced_run])
    steps = step_views(read_trajectory(runs[0].folder(0)))
    assert len(steps) == 61 and steps[0].source == "user"
    assert steps[1].seconds == pytest.approx(2.0) and steps[0].seconds == pytest.approx(2.0)
    assert steps[5].prompt_tokens == 1004 and steps[5].completion_tokens == 14 and steps[5].cost_usd == 0.001
    assert [s.index for s in steps if s.error] == [60]  # the last call failed
    assert steps[3].calls[0]["arguments_text"] == "python3 -c 'print(2 * 1.5)'"


def test_plots_inspected_or_not(traced_run):
    run = load_runs([traced_run])[0]
    steps = step_views(read_trajectory(run.folder(0)))
    found = {p.path: p for p in plots(run.folder(0), steps)}
    assert set(found) == {"fig.png", "unseen.png"}  # the tool cache is skipped
    assert found["fig.png"].inspected and found["fig.png"].step_index == 1
    assert not found["unseen.png"].inspected and found["unseen.png"].step_index is None


def test_numbers_highlighted():
    html = str(highlight_numbers("col1 mean=0.25 std 1e-3 <x> nan file2.png 3s"))
    assert re.findall(r'<span class="num">([^<]*)</span>', html) == ["0.25", "1e-3", "nan"]
    assert "&lt;x&gt;" in html and "col1" in html


def test_episode_page_summaries_first_and_chunks(traced_run):
    site = Site(load_runs([traced_run]))
    page = site.render("runs/traced/ep-1/index.html")[0].decode()
    assert page.count('class="step ') == 61 and "loading…" in page  # summaries only, bodies come in chunks
    assert "mean=0.25" not in page
    chunks = (61 + CHUNK - 1) // CHUNK
    assert f"window.HARNESS_CHUNKS = {chunks};" in page
    script = site.render("runs/traced/ep-1/steps-0.js")[0].decode()
    assert script.startswith("harnessView.steps(0, ") and script.endswith(");\n") and "</" not in script
    items = json.loads(script[len("harnessView.steps(0, "):-len(");\n")])
    assert [index for index, _ in items] == list(range(CHUNK))
    body = dict(items)
    assert '<span class="num">0.25</span>' in body[1] and "Find the change." in body[0]
    assert '<img loading="lazy" src="ws/fig.png"' in body[1] and '<span class="inspected">' in body[1]
    assert site.render(f"runs/traced/ep-1/steps-{chunks}.js") is None
    assert site.render("runs/traced/ep-1/ws/fig.png") == (PNG, "image/png")
    for missing in ("runs/traced/ep-1/ws/.cache/cached.png", "runs/traced/ep-1/ws/leak.png",
                    "runs/traced/ep-1/ws/linked/host.png", "runs/traced/ep-1/ws/../key/key.json",
                    "runs/traced/ep-1/key/key.json", "runs/nope/index.html", "runs/traced/nope/index.html"):
        assert site.render(missing) is None, missing


def _get(url: str, headers: dict | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_server_binds_loopback_and_refuses_foreign_host_and_origin(main_run):
    with served(Site(load_runs([main_run]))) as (url, port):
        assert _get(url)[0] == 200
        assert _get(f"http://localhost:{port}/runs/run-main/index.html")[0] == 200
        assert _get(url, {"Host": "evil.example:80"})[0] == 403
        assert _get(url, {"Host": f"evil.example:{port}"})[0] == 403  # DNS rebinding: a foreign name
        assert _get(url, {"Origin": "http://evil.example"})[0] == 403
        assert _get(url, {"Origin": f"http://127.0.0.1:{port}"})[0] == 200
        assert _get(url + "static/view.js")[0] == 200 and _get(url + "../../etc/passwd")[0] == 404
        # bound to the loopback interface only: another local address of this machine gets no answer
        other = _non_loopback_address()
        if other is not None:
            with pytest.raises(OSError):
                socket.create_connection((other, port), timeout=2).close()
    assert allowed_hosts("127.0.0.1", 8765) == {"127.0.0.1:8765", "[127.0.0.1]:8765", "localhost:8765",
                                                "[::1]:8765"}
    assert allowed_hosts("10.1.2.3", 9000) == {"10.1.2.3:9000", "[10.1.2.3]:9000"}


def _non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))  # no packet is sent for UDP connect
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_bundle_leaves_answers_out_unless_asked(main_run, tmp_path):
    runner = CliRunner()
    public, full = tmp_path / "public", tmp_path / "full"
    for folder, extra in ((public, []), (full, ["--with-answers"])):
        result = runner.invoke(cli, ["view", str(main_run), "--bundle", str(folder), *extra], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    def text(folder: Path) -> str:
        return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())

    hidden, shown = text(public), text(full)
    assert "true-label" not in hidden and "answers hidden" in hidden
    # no test_samples in these synthetic workspaces: only the comparison pages (24 batches of 10 samples, from the
    # scored details) show true labels
    assert text(full / "runs").count('class="true-label"') == 0 and shown.count('class="true-label"') == 240
    assert not list(public.rglob("key*")) and not list(public.rglob("score.json"))
    frame = pd.read_parquet(main_run / "results.parquet")
    assert len(list((public / "runs" / "run-main").glob("*/index.html"))) == len(frame)


def test_view_refuses_with_answers_without_bundle(main_run):
    result = CliRunner().invoke(cli, ["view", str(main_run), "--with-answers"])
    assert result.exit_code == 2 and "--with-answers applies to --bundle" in result.output
    result = CliRunner().invoke(cli, ["view", str(main_run.parent)])
    assert result.exit_code != 0


def test_answers_follow_reveal_and_labels_public(main_run):
    """The server reveals; a bundle without --with-answers never does; with it, only rows whose labels are public."""
    from harness.view.pages import Panel, ViewPage

    page = ViewPage("tracebench", metric="accuracy",
                    render=lambda ep: [Panel("answers", "REVEALED" if ep.reveal else "HIDDEN")],
                    labels_public=lambda row: row["seed"] == 0)
    runs = load_runs([main_run])
    frame = runs[0].rows
    for reveal in (True, False):
        site = Site(runs, reveal=reveal, pages={"tracebench": page})
        for slug, seed in zip(runs[0].episode_slugs, frame["seed"]):
            html = site.render(f"runs/run-main/{slug}/index.html")[0].decode()
            expect = "REVEALED" if reveal and seed == 0 else "HIDDEN"
            assert expect in html and ("answers hidden" in html) == (expect == "HIDDEN"), slug


def test_a_malformed_trajectory_still_renders(tmp_path):
    store = RunStore.create(tmp_path / "bad")
    paths = store.episode("ep").create()
    write_json(paths.row, {"run_id": store.run_id, "episode": "ep", "template": "other", "status": "ok"})
    steps = [{"step_id": "one", "source": None, "message": {"not": "content"}, "timestamp": "yesterday",
              "metrics": {"prompt_tokens": "many", "cost_usd": float("nan")},
              "tool_calls": [{"function_name": None, "arguments": "not json"}, "junk"],
              "observation": {"results": ["junk", {"content": 42, "extra": "x"}]}},
             "junk", {"source": "agent", "message": [{"type": "text", "text": "ok 1.5"}], "metrics": None}]
    (paths.root / "trajectory.json").write_text(json.dumps({"steps": steps}))
    store.write_results()
    site = Site(load_runs([store.root]))
    page = site.render("runs/bad/ep/index.html")[0].decode()
    assert page.count('class="step ') == 2 and "#1" in page and "#2" in page
    items = dict(json.loads(site.render("runs/bad/ep/steps-0.js")[0].decode()[len("harnessView.steps(0, "):-3]))
    assert "tool call · ?" in items[0] and "not json" in items[0]
    assert '<pre class="text message">ok 1.5</pre>' in items[1]  # model text: numbers highlighted only in output


def test_index_tasks_cell_says_what_it_cut(tmp_path):
    """A long task list is cut at whole names with "… and N more", the full list in the cell's title;
    a short one is shown whole with no title."""
    tasks = [f"balldrop-high-programmatic-{s}" for s in ("a", "b", "c", "d", "e", "f", "g", "h", "nocontext",
                                                         "noexamples")]
    store = RunStore.create(tmp_path / "long")
    for i, task in enumerate(tasks):
        paths = store.episode(f"ep-{i}").create()
        write_json(paths.row, {"run_id": store.run_id, "episode": f"ep-{i}", "task": task, "template": "other",
                               "status": "ok"})
    store.write_results()
    short = RunStore.create(tmp_path / "short")
    write_json(short.episode("ep-0").create().row, {"run_id": short.run_id, "episode": "ep-0", "task": "only-one",
                                                    "template": "other", "status": "ok"})
    short.write_results()
    html = Site(load_runs([store.root, short.root])).render("index.html")[0].decode()
    full = ", ".join(tasks)
    # 29-32 characters a name: six fit in 200 characters, four are left out and counted
    cell = ", ".join(tasks[:6]) + ", … and 4 more"
    assert f'<td title="{full}">{cell}</td>' in html
    assert "<td>only-one</td>" in html


def test_leaderboard_is_ranked_on_load_and_only_the_best_mean_is_bold(main_run):
    html = Site(load_runs([main_run])).render("index.html")[0].decode()
    board = html.split('<section class="board">')[1]
    cells = re.findall(r'<td class="n metric( best)?" data-sort="([^"]*)"', board)
    means = [float(v) for _, v in cells]
    assert means == sorted(means, reverse=True) and len(means) == len(ACCURACY)  # accuracy: higher first
    assert [bool(b) for b, _ in cells] == [m == means[0] for m in means] and cells[0][0]
    import harness.view

    css = (Path(harness.view.__file__).parent / "static" / "view.css").read_text()
    assert "td.metric { font-weight" not in css and "td.metric.best { font-weight: 600; }" in css

"""Experiments at scale: plan and cost estimate, parallel episodes under one shared rate limiter,
exactly-once resume after SIGKILL, infrastructure retries, the run-level cost cap.

Cheap episodes: Dr-CiK ``naive`` forecasting on the bundled sample (in the harness process) and the
``proxy-probe`` agent (three model requests) against the ``scripted`` backend.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from harness.cli import cli
from harness.config import RateLimit, RunSettings, load_experiment
from harness.errors import EpisodeError, ErrorKind, HarnessError
from harness.experiment import Unit, plan_experiment
from harness.limits import RateLimiter
from harness.plan import plan_costs
from harness.profiles import resolve_profile
from harness.run import execute, load_task
from harness.store import RowError, RunStore, episode_rows, write_json
from tests.support.paths import REPO

SPEC = REPO / "tasks" / "drcik" / "sample-statistical.yaml"
#: Columns that differ between an interrupted-and-resumed run and an uninterrupted one: timing
#: (episode_seconds, seconds: the forecaster's fit time, agent_seconds, total_seconds), attempts
#: (infra_retries).  Nothing else may differ (run_id is the run directory's name, the same here).
VOLATILE = ["episode_seconds", "seconds", "agent_seconds", "total_seconds", "infra_retries"]


def naive_experiment(folder: Path, seeds=(0, 1), forecaster: str = "naive") -> Path:
    path = folder / "naive.yaml"
    path.write_text(yaml.safe_dump({"name": "naive", "tasks": [str(SPEC)], "forecasters": [forecaster],
                                    "grid": {"contexts": [["no-context"], ["supporting-evidence"]],
                                             "seed": list(seeds)}}))
    return path


def harness(*args: str, cwd: Path, site: Path | None = None) -> subprocess.Popen:
    env = dict(os.environ)
    if site is not None:  # a throwaway plugin distribution, found through its entry points
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)


#: A throwaway forecaster plugin: ``naive`` that takes 0.3 s per forecast, so that a run of 18
#: episodes lasts seconds and a kill lands in the middle of it however fast the machine is.
SLOW_NAIVE = """
    import time
    from harness import hookimpl
    from tsagent_plugins.forecasters.statistical import NaiveForecaster

    class SlowNaive(NaiveForecaster):
        name = "slow-naive"

        def forecast(self, request):
            time.sleep(0.3)
            return super().forecast(request)

    @hookimpl
    def register_forecasters(register):
        register(SlowNaive())
"""


def comparable(run: Path) -> pd.DataFrame:
    frame = pd.read_parquet(run / "results.parquet")
    return frame.drop(columns=[c for c in VOLATILE if c in frame.columns]).sort_values("episode_id").reset_index(
        drop=True)


# -- plan -------------------------------------------------------------------------------------------------

def main_units(root: Path):
    file = REPO / "tasks" / "experiments" / "tracebench-main.yaml"
    return plan_experiment(load_experiment(file), file, root, resolve_profile, load_task)


def test_plan_of_the_paper_main_experiment_has_240_episodes_and_costs_beside_section_5_1(tmp_path):
    (stage,) = main_units(tmp_path / "run")
    episodes, profiles = plan_costs(stage.units, stage.root)
    assert len(episodes) == 240 and len({e.key for e in episodes}) == 240
    assert {p: profiles[p].episodes for p in profiles} == {
        "claude-opus-4.6": 60, "gpt-5.5": 60, "gemini-3.1-pro": 60, "minimax-m2.7": 60}
    assert not any(e.done for e in episodes)
    gpt = profiles["gpt-5.5"]
    # Section 5.1: about $1.3-1.8 per gpt-5.5 episode; the estimate comes from Table 2's tokens
    assert gpt.reported_usd == (1.3, 1.8)
    assert 1.3 <= min(gpt.per_episode_usd) and max(gpt.per_episode_usd) <= 1.8
    claude = profiles["claude-opus-4.6"]
    assert claude.reported_usd == (5.2, 8.6)
    assert min(claude.per_episode_usd) == pytest.approx(5.2, abs=0.01)
    assert max(claude.per_episode_usd) == pytest.approx(8.6, abs=0.01)
    # Table 21 prices: gemini's $2/M input is below gpt's, with more tokens (Table 2)
    assert profiles["gemini-3.1-pro"].tokens > gpt.tokens
    assert sum(p.cost_usd for p in profiles.values()) == pytest.approx(
        sum(e.cost_usd for e in episodes))


def test_plan_ablations_has_120_episodes(tmp_path):
    file = REPO / "tasks" / "experiments" / "tracebench-ablations.yaml"
    (stage,) = plan_experiment(load_experiment(file), file, tmp_path, resolve_profile, load_task)
    episodes, profiles = plan_costs(stage.units, stage.root)
    assert len(episodes) == 120 and set(profiles) == {"gpt-5.5", "gemini-3.1-pro"}
    # Table 2: gpt-5.5 without domain context, programmatic submission: 2.219 M tokens per episode
    nocontext = [e for e in episodes if e.profile == "gpt-5.5" and e.task.endswith("programmatic-nocontext")]
    assert {e.tokens for e in nocontext} == {2_219_000}


def test_plan_of_the_baselines_costs_nothing_and_says_no_model(tmp_path):
    """Agents that call no model (needs_model = False) are planned at $0, not as unknown estimates."""
    file = REPO / "tasks" / "experiments" / "baselines.yaml"
    (stage,) = plan_experiment(load_experiment(file), file, tmp_path, resolve_profile, load_task)
    episodes, profiles = plan_costs(stage.units, stage.root)
    assert len(episodes) == 210 and {p: profiles[p].episodes for p in profiles} == {
        name: 30 for name in ("euclidean-1nn", "euclidean-1nn-privileged", "dtw-1nn", "dtw-1nn-privileged",
                              "minirocket-ridge", "minirocket-ridge-privileged", "random")}
    assert {e.source for e in episodes} == {"no model"} and {e.cost_usd for e in episodes} == {0.0}
    assert all(p.unknown == 0 and p.cost_usd == 0.0 for p in profiles.values())


def test_plan_uses_earlier_runs_and_counts_done_episodes(tmp_path):
    (stage,) = main_units(tmp_path / "run")
    episodes, _ = plan_costs(stage.units, stage.root)
    first = next(e for e in episodes if e.profile == "gpt-5.5")
    history = tmp_path / "old"
    row = {"profile": "gpt-5.5", "task": first.task, "status": "ok", "prompt_tokens": 100_000,
           "cached_tokens": 0, "completion_tokens": 10_000}
    for i in range(2):
        (history / "episodes" / f"e{i}").mkdir(parents=True)
        (history / "episodes" / f"e{i}" / "row.json").write_text(
            json.dumps({**row, "prompt_tokens": 100_000 * (i + 1)}))
    done = stage.root / "episodes" / first.key
    done.mkdir(parents=True)
    (done / "row.json").write_text('{"status": "ok"}')
    episodes, profiles = plan_costs(stage.units, stage.root, [history])
    same = [e for e in episodes if e.profile == "gpt-5.5" and e.task == first.task]
    # mean of the two earlier episodes: 150k prompt + 10k completion at $5/M in, $30/M out
    assert {e.tokens for e in same} == {160_000}
    assert {round(e.cost_usd, 9) for e in same} == {round(0.15 * 5 + 0.01 * 30, 9)}
    assert {e.source for e in same} == {"earlier runs"}
    assert profiles["gpt-5.5"].done == 1 and sum(e.done for e in episodes) == 1


def test_plan_cli_prints_the_episodes_and_the_estimate(tmp_path):
    result = CliRunner().invoke(cli, ["plan", "--experiment", str(REPO / "tasks/experiments/tracebench-main.yaml"),
                                      "--out", str(tmp_path / "run")], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "240 episodes" in result.output and "total: 240 episode(s), 0 done, 240 to run" in result.output
    assert "1.3–1.8" in result.output and "5.2–8.6" in result.output


# -- the rate limiter -------------------------------------------------------------------------------------

def windows_ok(times: list[float], tokens: list[int], window: float, max_requests: int, max_tokens: int) -> bool:
    for i, start in enumerate(times):
        inside = [j for j, t in enumerate(times) if start <= t < start + window]
        if len(inside) > max_requests or sum(tokens[j] for j in inside) > max_tokens:
            return False
    return True


def test_rate_limiter_with_a_fake_clock_never_exceeds_the_window():
    now = [0.0]
    limiter = RateLimiter(RateLimit(requests_per_min=5, tokens_per_min=3000, window_s=60), clock=lambda: now[0])
    sent = []
    for i in range(40):
        while (wait := limiter.try_acquire(i)) > 0:
            now[0] += wait
        sent.append(now[0])
        now[0] += 1.0  # each answer takes a second
        limiter.settle(i, 1000)
    assert windows_ok(sent, [1000] * 40, 60, 5, 3000)
    # 3 requests of 1000 tokens per minute: 40 requests need about 13 windows, not more
    assert 12 * 60 <= sent[-1] <= 14 * 60


@pytest.mark.skipif(not Path("/usr/bin/bwrap").exists(), reason="needs bubblewrap")
def test_jobs_8_against_the_scripted_backend_respect_the_shared_limits(tmp_path, monkeypatch):
    from tsagent_plugins.models import scripted

    seen: list[float] = []
    original = scripted.ScriptedUpstream.handle

    async def recording(self, request):
        seen.append(time.monotonic())  # upstream side: when the request reaches the provider
        return await original(self, request)

    monkeypatch.setattr(scripted.ScriptedUpstream, "handle", recording)
    script = tmp_path / "probe.yaml"
    turn = {"text": "ok", "usage": {"prompt_tokens": 1000, "cached_tokens": 0, "completion_tokens": 100}}
    script.write_text(yaml.safe_dump({"turns": [turn] * 3}))
    task = load_task(REPO / "tasks/tracebench/balldrop-low-direct.yaml", {"pool_per_class": 30,
                                                                          "heldout_per_class": 0})
    units = [Unit(task, resolve_profile("proxy-probe"), seed) for seed in range(8)]
    window = 1.5
    limit = RateLimit(requests_per_min=4, tokens_per_min=3300, window_s=window)
    settings = RunSettings(jobs=8, sandbox="bubblewrap", rate_limits={"scripted": limit})
    rows = execute(units, RunStore.create(tmp_path / "run"), settings, model_backend="scripted",
                   model_options={"script": str(script)})
    assert [r["status"] for r in rows] == ["ok"] * 8 and sum(r["n_requests"] for r in rows) == 24
    assert len(seen) == 24
    assert windows_ok(sorted(seen), [1100] * 24, window, 4, 3300)  # at most 3 requests of 1,100 tokens
    assert max(seen) - min(seen) >= (24 / 3 - 1) * window  # the limit did hold them back


# -- resume, retries, cost cap ----------------------------------------------------------------------------

def test_sigkill_at_random_points_then_resume_runs_every_episode_exactly_once(tmp_path, make_distribution):
    site = make_distribution("slow-naive", {"slow-naive": "slow_naive"}, {"slow_naive": SLOW_NAIVE})
    spec = naive_experiment(tmp_path, seeds=(0, 1, 2), forecaster="slow-naive")
    reference = harness("run", "--experiment", str(spec), "--out", "ref/run", "--jobs", "2", cwd=tmp_path, site=site)
    assert reference.wait(timeout=600) == 0, reference.stderr.read()
    rng = random.Random(19)
    kills = 0
    def done() -> int:  # finished episodes; a resume removes the folders of interrupted ones while we count
        episodes = tmp_path / "killed" / "run" / "episodes"
        try:
            names = os.listdir(episodes)
        except FileNotFoundError:
            return 0
        return sum((episodes / name / "row.json").is_file() for name in names)

    for _ in range(4):  # kill at random points: after a random number of further episodes, plus a random delay
        target = done() + rng.randint(1, 3)
        proc = harness("run", "--experiment", str(spec), "--out", "killed/run", "--jobs", "2", cwd=tmp_path,
                       site=site)
        deadline = time.monotonic() + 300
        while proc.poll() is None and done() < target and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 0.05))
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 2 and done() < 18, (kills, done())  # the kills did interrupt the run
    final = harness("run", "--experiment", str(spec), "--out", "killed/run", cwd=tmp_path, site=site)
    assert final.wait(timeout=600) == 0, final.stderr.read()
    run = tmp_path / "killed" / "run"
    rows = list(run.glob("episodes/*/row.json"))
    assert len(rows) == 18  # 3 tasks x 2 contexts x 3 seeds, each folder once
    frame = pd.read_parquet(run / "results.parquet")
    assert len(frame) == 18 and frame["episode_id"].is_unique
    pd.testing.assert_frame_equal(comparable(run), comparable(tmp_path / "ref" / "run"))


def _naive_units(tmp_path, seeds=(0, 1)):
    spec = naive_experiment(tmp_path, seeds)
    (stage,) = plan_experiment(load_experiment(spec), spec, tmp_path / "run", resolve_profile, load_task)
    return stage.units


def _execute_incomplete(units, store, settings, on_event, fails: bool | None = True) -> list[dict]:
    """``execute`` of a run left incomplete (an episode failed, or was not started): Dr-CiK's submission of an
    incomplete cell is invalid, which fails the run once its results are written; the rows are in the store.
    ``fails=None``: whether it fails is decided from the rows (a naive cell holds the 3 sample tasks)."""
    try:
        execute(units, store, settings, on_event=on_event)
        error = None
    except HarnessError as exc:
        error = exc
    assert (store.root / "results.parquet").is_file()
    rows = store.rows()
    if fails is None:
        cells: dict[tuple, int] = {}
        for row in rows:
            cells[(row["context"], row["seed"])] = cells.get((row["context"], row["seed"]), 0) + 1
        fails = any(n < 3 for n in cells.values())
    assert (error is not None) == fails, (error, rows)
    if error is not None:
        assert re.search(r"invalid export\(s\).*/submissions/naive__", str(error)), error
    return rows


def test_an_injected_infrastructure_error_is_retried_and_reported_apart(tmp_path, monkeypatch):
    import harness.run as run_module

    real = run_module.run_harness_episode
    calls: dict[str, int] = {}

    def flaky(plan, paths, attempt=0):
        calls[plan.key] = calls.get(plan.key, 0) + 1
        if "task_42" in plan.key and "no-context" in plan.key and calls[plan.key] == 1:
            (paths.root / "partial.txt").parent.mkdir(parents=True, exist_ok=True)
            (paths.root / "partial.txt").write_text("left by the failed attempt")
            raise EpisodeError(ErrorKind.SANDBOX_START, "injected: engine unavailable")
        if "task_201" in plan.key and "no-context" in plan.key:
            raise EpisodeError(ErrorKind.UPSTREAM, "injected: always down")
        return real(plan, paths, attempt)

    monkeypatch.setattr(run_module, "run_harness_episode", flaky)
    events = []
    units = _naive_units(tmp_path, seeds=(0,))
    settings = RunSettings(jobs=2, infra_retries=2, infra_backoff_s=0)
    store = RunStore.create(tmp_path / "run")
    rows = _execute_incomplete(units, store, settings, lambda e, d: events.append((e, d)))
    by = {r["episode"]: r for r in rows}
    retried = [k for k in by if "task_42" in k and "no-context" in k]
    assert len(retried) == 1 and by[retried[0]]["status"] == "ok" and by[retried[0]]["infra_retries"] == 1
    assert not (store.episode(retried[0]).root / "partial.txt").exists()  # the attempt started afresh
    down = [r for r in rows if r["status"] == "infra_failed"]
    assert len(down) == 1 and down[0]["error_kind"] == ErrorKind.UPSTREAM.value and down[0]["infra_retries"] == 2
    assert sum(e == "retry" for e, _ in events) == 1 + 2
    frame = pd.read_parquet(store.root / "results.parquet")
    assert (frame["status"] == "infra_failed").sum() == 1 and (frame["status"] == "ok").sum() == 5
    # a re-run retries only the infrastructure failure, counting each episode once
    monkeypatch.setattr(run_module, "run_harness_episode", real)
    events.clear()
    rows = execute(units, store, settings, on_event=lambda e, d: events.append((e, d)))
    assert [e for e, _ in events].count("skip") == 5 and [e for e, _ in events].count("done") == 1
    frame = pd.read_parquet(store.root / "results.parquet")
    assert len(frame) == 6 and (frame["status"] == "ok").all() and frame["episode_id"].is_unique


def test_a_run_level_cost_cap_stops_new_episodes_and_lets_running_ones_finish(tmp_path, monkeypatch):
    import harness.run as run_module

    real = run_module.run_harness_episode

    def priced(plan, paths, attempt=0):  # each episode costs $1, in its row.json too (a resumed run reads it)
        row = {**real(plan, paths, attempt), "cost_usd": 1.0}
        write_json(paths.row, row)
        return row

    monkeypatch.setattr(run_module, "run_harness_episode", priced)
    events = []
    units = _naive_units(tmp_path, seeds=(0, 1))  # 12 episodes
    settings = RunSettings(jobs=2, max_run_cost_usd=2.5)
    store = RunStore.create(tmp_path / "run")
    rows = _execute_incomplete(units, store, settings, lambda e, d: events.append((e, d)), fails=None)
    # two run at once; none starts once $2.5 is spent (after the 3rd finished episode): 3 episodes, or 4
    # when the 4th had started before (with $2 spent); every started episode finished
    assert len(rows) in (3, 4) and len(list(store.root.glob("episodes/*/row.json"))) == len(rows)
    started = [d["key"] for e, d in events if e == "episode"]
    assert sorted(started) == sorted(d["key"] for e, d in events if e == "done") == sorted(r["episode"] for r in rows)
    budget = [d for e, d in events if e == "budget"]
    assert len(budget) == 1 and budget[0]["not_started"] == 12 - len(rows) and budget[0]["cap"] == 2.5
    assert budget[0]["spent"] >= 2.5
    # the cap counts finished episodes of earlier runs too: a re-run with the same cap starts nothing
    events.clear()
    assert len(_execute_incomplete(units, store, settings, lambda e, d: events.append((e, d)), fails=None)) == len(
        rows)
    assert [d["not_started"] for e, d in events if e == "budget"] == [12 - len(rows)]
    assert not [e for e, _ in events if e == "episode"]


def test_one_reader_of_episode_rows_names_a_bad_row_or_skips_it(tmp_path):
    store = RunStore.create(tmp_path / "run")
    for key, text in (("a", '{"status": "ok", "cost_usd": 1.5}'), ("b", "{truncated"), ("c", "[1, 2]")):
        store.episode(key).create().row.write_text(text)
    with pytest.raises(RowError, match=r"episodes/b/row.json: not a valid row"):
        store.rows()
    assert episode_rows(store.root, skip_invalid=True) == [{"status": "ok", "cost_usd": 1.5}]
    store.episode("b").row.unlink()
    with pytest.raises(RowError, match=r"episodes/c/row.json: not a valid row: expected a JSON object, got list"):
        store.write_results()
    store.episode("c").row.unlink()
    assert pd.read_parquet(store.write_results()).to_dict("records") == [{"status": "ok", "cost_usd": 1.5}]


def test_runs_list_shows_task_agents_done_total_and_cost(tmp_path):
    units = _naive_units(tmp_path, seeds=(0,))
    execute(units, RunStore.create(tmp_path / "runs" / "naive"), RunSettings(), identity={"experiment": "naive"})
    result = CliRunner().invoke(cli, ["runs", "list", str(tmp_path / "runs"), "--json"])
    assert result.exit_code == 0, result.output
    (line,) = [json.loads(x) for x in result.output.splitlines()]
    assert line["task"] == "naive" and line["done"] == 6 and line["total"] == 6 and line["cost_usd"] == 0.0
    assert line["agents"] == ["naive"]  # a forecasting run has no agent profile: its forecasters are shown
    row = next((tmp_path / "runs" / "naive" / "episodes").glob("*/row.json"))
    row.write_text("{cut")  # a damaged row is not counted, and breaks nothing
    (line,) = [json.loads(x) for x in CliRunner().invoke(cli, ["runs", "list", str(tmp_path / "runs"), "--json"])
               .output.splitlines()]
    assert line["done"] == 5 and line["total"] == 6
    table = CliRunner().invoke(cli, ["runs", "list", str(tmp_path / "runs")], terminal_width=200).output
    cells = [line.strip().split("  ") for line in table.splitlines() if "/ 6" in line]
    assert [c.strip() for c in cells[0] if c.strip()][2] == "naive"  # run directory, task, agents, ...


# -- Dask -------------------------------------------------------------------------------------------------

def test_an_experiment_on_a_dask_local_cluster_with_two_workers_equals_the_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    from harness.dask_executor import DaskExecutor

    units = _naive_units(tmp_path, seeds=(0,))
    local = execute(units, RunStore.create(tmp_path / "local" / "run"), RunSettings(jobs=2))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  local_directory=str(tmp_path / "dask")) as cluster, \
            distributed.Client(cluster) as client:
        remote = execute(units, RunStore.create(tmp_path / "dask" / "run"), RunSettings(jobs=4),
                         executor=DaskExecutor(client=client))
        workers = {w["id"] for w in client.scheduler_info()["workers"].values()}
    assert len(workers) == 2 and len(remote) == len(local) == 6
    run = tmp_path / "dask" / "run"
    # every episode folder was sent back and written in the same layout
    for row in remote:
        folder = run / "episodes" / row["episode"]
        assert (folder / "row.json").is_file() and (folder / "score.json").is_file()
    assert not list((run / "episodes").glob(".incoming-*"))
    pd.testing.assert_frame_equal(comparable(run), comparable(tmp_path / "local" / "run"))


def test_harness_run_executor_dask_with_a_scheduler_address(tmp_path):
    distributed = pytest.importorskip("distributed")
    spec = naive_experiment(tmp_path, seeds=(0,))
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  local_directory=str(tmp_path / "dask")) as cluster:
        result = CliRunner().invoke(cli, ["run", "--experiment", str(spec), "--out", str(tmp_path / "run"),
                                          "--executor", "dask", "--scheduler", cluster.scheduler_address])
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert len(frame) == 6 and (frame["status"] == "ok").all()
    bad = CliRunner().invoke(cli, ["run", "--experiment", str(spec), "--scheduler", "tcp://x:1"])
    assert bad.exit_code != 0 and "--executor dask" in bad.output


def test_sandbox_creation_is_bounded_apart_from_jobs():
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from harness.run import _BoundedBackend

    class Engine:
        name = "fake"
        now = peak = 0
        lock = threading.Lock()

        def create(self, spec):
            with self.lock:
                self.now += 1
                self.peak = max(self.peak, self.now)
            time.sleep(0.05)
            with self.lock:
                self.now -= 1
            return spec

    engine = Engine()
    bounded = _BoundedBackend(engine, threading.Semaphore(RunSettings(jobs=8).sandbox_starts))
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(bounded.create, range(16))) == list(range(16))
    assert engine.peak == 2 and bounded.name == "fake"

"""Throughput of parallel episodes: the ``proxy-probe`` agent against a scripted model that waits per turn.

Usage: ``python benchmarks/scale.py [--episodes 200] [--jobs 1,2,4,8] [--sandbox bubblewrap]
[--turns 2] [--delay 1.0] [--docker-episodes 40] [--docker-jobs 1,4]``.

Each episode is a TraceBench BallDrop episode (small pool) whose agent makes
``--turns`` model requests, each answered after ``--delay`` seconds.  Prints,
per ``--jobs``: wall time, episodes/s, speed-up over the first ``--jobs`` value,
and the harness overhead per episode: the episode's wall time minus the model's
waiting (materialize, sandbox start and stop, scoring, metrics), as mean and
95th percentile, and the CPU time per episode of the harness process and of the
processes it started (the sandboxes: bwrap, the launcher and the agent, whose own
start is part of the overhead measured).  The floor is the overhead at ``--jobs 1`` measured in the same run.  Goals: overhead at
``--jobs 8`` at most 1.5x the floor; episodes/s at ``--jobs 4`` at least 3x ``--jobs 1`` (both judged on
the sandbox of ``--sandbox``; the script exits 1 when one is missed, or when ``--jobs`` lacks 1, 4 or 8).
``--docker-episodes 0`` skips the Docker part.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import click
import numpy as np
import yaml
from rich.console import Console
from rich.table import Table

from harness.config import RunSettings
from harness.experiment import Unit
from harness.profiles import resolve_profile
from harness.run import execute, load_task
from harness.store import RunStore

REPO = Path(__file__).resolve().parent.parent
TASK = REPO / "tasks" / "tracebench" / "balldrop-low-direct.yaml"
OVERHEAD_GOAL = 1.5
SPEEDUP_GOAL = 3.0


def measure(episodes: int, jobs: int, sandbox: str, turns: int, delay: float, folder: Path) -> dict:
    script = folder / "script.yaml"
    turn = {"text": "ok", "delay": delay, "usage": {"prompt_tokens": 1000, "cached_tokens": 0,
                                                    "completion_tokens": 100}}
    script.write_text(yaml.safe_dump({"turns": [turn] * turns}))
    task = load_task(TASK, {"pool_per_class": 30, "heldout_per_class": 0})
    profile = resolve_profile("proxy-probe").model_copy(update={"options": {"turns": turns}})
    units = [Unit(task, profile, seed) for seed in range(episodes)]
    settings = RunSettings(jobs=jobs, sandbox=sandbox, sandbox_starts=max(2, jobs // 2))
    store = RunStore.create(folder / f"{sandbox}-jobs{jobs}")
    before, started = os.times(), time.perf_counter()
    rows = execute(units, store, settings, model_backend="scripted", model_options={"script": str(script)})
    wall, after = time.perf_counter() - started, os.times()
    harness_cpu = (after.user - before.user + after.system - before.system) / max(1, len(rows))
    sandbox_cpu = (after.children_user - before.children_user
                   + after.children_system - before.children_system) / max(1, len(rows))
    overhead = np.array([r["episode_seconds"] - turns * delay for r in rows])
    return {"jobs": jobs, "episodes": len(rows), "ok": sum(r["status"] == "ok" for r in rows), "wall": wall,
            "eps": len(rows) / wall, "overhead": float(overhead.mean()),
            "overhead_p95": float(np.percentile(overhead, 95)), "harness_cpu": harness_cpu,
            "sandbox_cpu": sandbox_cpu}


def report(console: Console, title: str, results: list[dict]) -> None:
    table = Table(title=title)
    for col in ("jobs", "episodes (ok)", "wall (s)", "episodes/s", "speed-up", "overhead/episode (s)",
                "overhead p95 (s)", "overhead vs first", "CPU/episode: harness, sandbox (s)"):
        table.add_column(col, justify="right")
    base = results[0]
    for r in results:
        table.add_row(str(r["jobs"]), f"{r['episodes']} ({r['ok']})", f"{r['wall']:.1f}", f"{r['eps']:.3f}",
                      f"{r['eps'] / base['eps']:.2f}x", f"{r['overhead']:.2f}", f"{r['overhead_p95']:.2f}",
                      f"{r['overhead'] / base['overhead']:.2f}x", f"{r['harness_cpu']:.3f}, {r['sandbox_cpu']:.3f}")
    console.print(table)


@click.command()
@click.option("--episodes", type=int, default=200)
@click.option("--jobs", "jobs_list", default="1,2,4,8")
@click.option("--sandbox", default="bubblewrap")
@click.option("--turns", type=int, default=2, help="model requests per episode")
@click.option("--delay", type=float, default=1.0, help="seconds the scripted model waits per turn")
@click.option("--docker-episodes", type=int, default=40)
@click.option("--docker-jobs", default="1,4")
def main(episodes, jobs_list, sandbox, turns, delay, docker_episodes, docker_jobs) -> None:
    console = Console(width=200)
    task = load_task(TASK, {"pool_per_class": 30, "heldout_per_class": 0})
    task.template.prepare(task.params, lambda done, total, text: None)  # the pool once, outside the timings
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        folder = Path(tmp)
        results = [measure(episodes, int(j), sandbox, turns, delay, folder) for j in jobs_list.split(",")]
        report(console, f"{episodes} episodes on {sandbox}, {turns} x {delay:g} s model turns", results)
        verdict = goals(results)
        console.print(verdict[1], highlight=False)
        if docker_episodes:
            results = [measure(docker_episodes, int(j), "docker", turns, delay, folder)
                       for j in docker_jobs.split(",")]
            report(console, f"{docker_episodes} episodes on docker, {turns} x {delay:g} s model turns", results)
    console.print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", highlight=False)
    raise SystemExit(0 if verdict[0] else 1)


def goals(results: list[dict]) -> tuple[bool, str]:
    """(both goals met, one line each): overhead at jobs 8 vs the jobs-1 floor; the jobs-4 speed-up."""
    by_jobs = {r["jobs"]: r for r in results}
    if not {1, 4, 8} <= set(by_jobs):
        return False, "goals not judged: --jobs must include 1, 4 and 8"
    overhead = by_jobs[8]["overhead"] / by_jobs[1]["overhead"]
    speedup = by_jobs[4]["eps"] / by_jobs[1]["eps"]
    ok = overhead <= OVERHEAD_GOAL and speedup >= SPEEDUP_GOAL
    return ok, (f"overhead per episode: jobs 1 (floor) {by_jobs[1]['overhead']:.3f} s, jobs 8 "
                f"{by_jobs[8]['overhead']:.3f} s: {overhead:.2f}x (goal <= {OVERHEAD_GOAL}x)\n"
                f"speed-up at jobs 4: {speedup:.2f}x (goal >= {SPEEDUP_GOAL}x)\n"
                f"verdict: {'within goals' if ok else 'MISSED'}")


if __name__ == "__main__":
    main()

"""Run and time the classical-baseline experiment (TraceBench Appendix E, Table 22).

Usage: ``python benchmarks/baselines.py [--experiment tasks/experiments/baselines.yaml]
[--out runs/baselines-bench] [--jobs N] [--only-agent NAME ...] [--seeds N] [--sandbox BACKEND]``.

Runs exactly the README's command, ``harness run --experiment
tasks/experiments/baselines.yaml --jobs N`` (N defaults to the number of CPUs),
into a fresh run directory.  The sample pools and numba's compilation cache are
built before the clock starts (not timed; the cache build time is printed).
With ``--only-agent`` or ``--seeds`` a reduced copy of the experiment spec is
written beside the run.  Prints the wall time and where the episodes' time went,
in CPU-slot seconds (wall × jobs):

* ``methods``: the baselines' own work in the sandbox (fit + predict, from the
  ``timings`` line each solver writes to stderr), and of that the numba JIT
  (0 when the read-only cache covers everything);
* ``agent start``: the rest of the agent process (Python and library imports,
  loading aeon);
* ``episode outside the agent``: materialisation, sandbox set-up, scoring,
  metrics and the row, per episode;
* ``harness outside episodes``: start-up, pool loading, the results file and
  idle slots (wall × jobs minus the episodes).

Then prints ``harness report``'s Table 22 for the run, and every Table 22 cell beside the paper's value
(``benchmarks/data/tracebench_table22.csv``), marking those outside the paper's spread (|ours - paper| >
paper SD) and checking the reproduction criteria: at most 7 of the 36 per-simulator cells outside, no method
outside in the same direction on 3 or more of its 6 cells, both Aggregate columns within the paper's SD.
``--compare RUN_DIR`` prints only that comparison for an existing run.

``--jit EPISODE_WORKSPACE`` instead measures what numba's cache saves: it runs
the dtw and minirocket solvers on a copy of that workspace once with an empty
numba cache (cold JIT) and once with the built cache, and prints both.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "benchmarks" / "data" / "tracebench_table22.csv"


def grid(experiment: Path) -> tuple[dict, list[Path]]:
    spec = yaml.safe_load(experiment.read_text())
    for field in ("name", "tasks", "agents", "seeds"):
        if field not in spec:
            raise SystemExit(f"{experiment}: missing field {field!r}")
    tasks: list[Path] = []
    for pattern in spec["tasks"]:  # relative to the experiment file, as `harness run --experiment` reads them
        found = sorted(glob.glob(str(experiment.resolve().parent / pattern)))
        if not found:
            raise SystemExit(f"{experiment}: field 'tasks': {pattern!r} matches no file")
        tasks += [Path(p) for p in found if Path(p) not in tasks]
    return spec, tasks


def derived(task: Path, overrides: dict, folder: Path) -> Path:
    data = yaml.safe_load(task.read_text())
    data["params"] = {**data.get("params", {}), **(overrides or {})}
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / task.name
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def prepare(tasks: list[Path], agents: list[str]) -> None:
    """Build the sample pools and the numba cache before timing."""
    from harness.run import load_task

    for task in tasks:
        loaded = load_task(task)
        loaded.template.prepare(loaded.params, lambda done, total, text: None)
    if any(a.startswith(("dtw", "minirocket")) for a in agents):
        from tsagent_plugins.agents.classical.numba_cache import STAMP, ensure_cache

        cache = ensure_cache()
        print(f"numba cache: {cache} (built once in {json.loads((cache / STAMP).read_text())['seconds']} s)")


def stage_seconds(run_dir: Path) -> dict[str, float]:
    """Seconds per solver stage (import, fit, predict, jit) summed over the run's episodes (``timings`` lines)."""
    total = {"import": 0.0, "fit": 0.0, "predict": 0.0, "jit": 0.0, "jit_max": 0.0, "solvers": 0}
    for path in run_dir.glob("episodes/*/agent.stderr"):
        for line in path.read_text().splitlines():
            if line.startswith("timings "):
                stages = json.loads(line[len("timings "):])
                for key, value in stages.items():
                    total[key] = total.get(key, 0.0) + value
                total["jit_max"] = max(total["jit_max"], stages.get("jit", 0.0))
                total["solvers"] += 1
    return total


def jit(workspace: Path) -> None:
    """Cold-JIT vs cached solver time (s) on a copy of ``workspace``, for dtw and minirocket."""
    import shutil
    import tempfile

    from tsagent_plugins.agents.classical.numba_cache import ensure_cache

    cache = ensure_cache()
    info = json.dumps({"submission": "direct", "labels": json.loads((workspace.parent / "key" / "key.json")
                                                                    .read_text())["labels"],
                       "columns": ["col1", "col2", "col3", "col4"], "impulse_columns": ["col3"]})
    for method in ("minirocket", "dtw"):
        for mode in ("cold", "cached"):
            with tempfile.TemporaryDirectory() as tmp:
                ws = Path(tmp) / "ws"
                shutil.copytree(workspace, ws)
                env = {**os.environ, "HOME": tmp, "PYTHONPATH": str(ROOT), "NUMBA_NUM_THREADS": "1"}
                env.pop("HARNESS_NUMBA_CACHE", None)
                if mode == "cold":
                    env["NUMBA_CACHE_DIR"] = str(Path(tmp) / "empty")
                else:
                    env["HARNESS_NUMBA_CACHE"] = str(cache)
                t0 = time.perf_counter()
                done = subprocess.run([sys.executable, "-m", "tsagent_plugins.agents.classical.solve", "--task-info",
                                       info, "--method", method], cwd=ws, env=env, capture_output=True, text=True)
                line = next((x for x in done.stderr.splitlines() if x.startswith("timings ")), "timings {}")
                print(f"{method:10s} {mode:6s} {time.perf_counter() - t0:6.1f} s  {line}")


def print_comparison(frame: pd.DataFrame, paper_file: Path = PAPER) -> bool:
    """Print every paper cell beside ours, the cells outside the paper's spread and the criteria; True when met."""
    from tsagent_plugins.tasks.tracebench.table22 import (BASELINES, MAX_OUTSIDE, MAX_SAME_SIDE, compare, criteria,
                                                          read_paper)

    cmp = compare(frame, read_paper(paper_file))
    print(f"\nTable 22, ours vs the paper ({paper_file.relative_to(ROOT)}); * = outside the paper's spread "
          "(|ours - paper| > paper SD), + above / - below")
    columns = list(dict.fromkeys(zip(cmp["simulator"], cmp["noise"])))
    print(f"{'method':32s}" + "".join(f"{sim[:10] + ' ' + noise:>24s}" for sim, noise in columns))
    for agent, group in cmp.groupby("agent", sort=False):
        cells = []
        for r in group.itertuples():
            if r.ours is None or pd.isna(r.ours):
                cells.append(f"{'-':>9s} / {r.mean:.3f}±{r.sd:.3f}")
            else:
                mark = ("*+" if r.side == 1 else "*-") if r.outside else "  "
                cells.append(f"{r.ours:.3f}{mark} / {r.mean:.3f}±{r.sd:.3f}")
        print(f"{BASELINES.get(agent, agent):32s}" + "".join(f"{c:>24s}" for c in cells))
    c = criteria(cmp)
    print(f"per-simulator cells outside the paper's spread: {c['outside']} of {c['cells']} "
          f"(criterion <= {MAX_OUTSIDE}; about 4 expected by chance)")
    worst = {a: n for a, n in c["same_side"].items() if n}
    print(f"most cells outside on one side, per method (criterion < {MAX_SAME_SIDE}): "
          + (", ".join(f"{BASELINES.get(a, a)} {n}" for a, n in worst.items()) or "none"))
    print(f"aggregate cells outside the paper's SD: {c['aggregate_outside']} (criterion 0)")
    print(f"criteria {'MET' if c['met'] else 'NOT MET'}" + ("" if c["complete"] else " (some cells were not run)"))
    return bool(c["met"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", type=Path, default=ROOT / "tasks/experiments/baselines.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "runs/baselines-bench")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only-agent", action="append", default=[])
    parser.add_argument("--seeds", type=int, default=None, help="use only the first N seeds")
    parser.add_argument("--jit", type=Path, default=None, metavar="EPISODE_WORKSPACE",
                        help="only measure cold-JIT vs cached solver time on this workspace")
    parser.add_argument("--sandbox", default=None, help="sandbox backend passed to harness run (default: its own)")
    parser.add_argument("--compare", type=Path, default=None, metavar="RUN_DIR",
                        help="only print the comparison with the paper's Table 22 for this run's results.parquet")
    args = parser.parse_args(argv)
    if args.compare:
        print_comparison(pd.read_parquet(args.compare / "results.parquet"))
        return 0
    if args.jit:
        jit(args.jit)
        return 0
    spec, tasks = grid(args.experiment)
    agents = [a for a in spec["agents"] if not args.only_agent or a in args.only_agent]
    seeds = spec["seeds"][: args.seeds] if args.seeds else spec["seeds"]
    experiment = args.experiment.resolve()
    if agents != spec["agents"] or seeds != spec["seeds"]:  # a reduced copy beside the original (same task globs)
        experiment = experiment.with_name(f".{experiment.stem}-bench.yaml")
        experiment.write_text(yaml.safe_dump({**spec, "agents": agents, "seeds": seeds}, sort_keys=False))
    prepare([derived(t, spec.get("set", {}), args.out.with_name(args.out.name + "-specs")) for t in tasks], agents)
    if args.out.exists():
        import shutil

        shutil.rmtree(args.out)

    started = time.perf_counter()
    sandbox = ["--sandbox", args.sandbox] if args.sandbox else []
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--experiment", str(experiment), "--jobs",
                           str(args.jobs), "--out", str(args.out), *sandbox], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if experiment != args.experiment.resolve():
        experiment.unlink()
    if done.returncode != 0:
        print(f"harness run failed ({done.returncode}): {done.stderr[-2000:]}", file=sys.stderr)
        return 1

    frame = pd.read_parquet(args.out / "results.parquet")
    slots = wall * args.jobs
    episode_s = float(frame["episode_seconds"].sum())
    agent_s = float(frame["agent_seconds"].sum())
    t = stage_seconds(args.out)
    method_s = t["fit"] + t["predict"]
    n = len(frame)
    print(f"\n{len(tasks)} task(s) × {len(agents)} agent(s) × {len(seeds)} seed(s) = {n} episodes "
          f"({(frame['status'] == 'ok').sum()} ok) in {wall:.1f} s wall with {args.jobs} job(s) "
          f"({slots / max(n, 1):.2f} slot-seconds per episode)")
    rows = [("methods (fit + predict in the sandbox)", method_s),
            (f"  of which numba JIT (at most {t['jit_max']:.2f} s in one episode)", t["jit"]),
            ("agent start (Python, imports, aeon)", agent_s - method_s),
            ("episode outside the agent (materialise, sandbox, score)", episode_s - agent_s),
            ("harness outside episodes (start-up, pools, idle slots)", slots - episode_s)]
    for label, seconds in rows:
        print(f"  {label:58s} {seconds:7.1f} s  ({seconds / slots:6.1%} of {slots:.0f} slot-seconds)")
    print(f"  share outside the methods: {1 - method_s / slots:.1%}")
    for agent in agents:
        sub = frame[frame["profile"] == agent]
        print(f"    {agent:28s} {sub['episode_seconds'].mean():6.2f} s per episode "
              f"({sub['agent_seconds'].mean():.2f} s in the agent)")

    report = subprocess.run([sys.executable, "-m", "harness", "report", str(args.out), "--format", "markdown",
                             "--out", str(args.out / "report")], cwd=ROOT, capture_output=True, text=True)
    text = (args.out / "report" / "report.md").read_text() if report.returncode == 0 else ""
    start = text.find("## Table 22")
    end = text.find("\n\n", text.find("\n|", start) if start >= 0 else 0)
    print("\n" + text[start:text.find("\n\n", end + 2)] if start >= 0 else
          f"no Table 22 in the report: {report.stderr[-800:]}")
    print_comparison(frame)
    return 0


if __name__ == "__main__":
    sys.exit(main())

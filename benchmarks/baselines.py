"""Run and time the classical-baseline experiment (TraceBench Appendix E, Table 22).

Usage: ``python benchmarks/baselines.py [--experiment tasks/experiments/baselines.yaml]
[--out runs/baselines] [--only-agent NAME ...] [--seeds N]``.

Expands the experiment's grid -- task spec globs × agent profiles × seeds, with
``set`` merged into each task's ``params`` (written as a derived spec
under ``--out/specs/``) -- and runs ``harness run --task ... --agent ...
--seed ...`` once per task × agent.  The sample pools and numba's compilation
cache are built before the clock starts (not timed; the cache build time is
printed).  Prints the wall time of the whole grid and its split:

* ``methods``: the baselines' own work in the sandbox (fit + predict, from the
  ``timings`` line each solver writes to stderr);
* ``agent start``: the rest of the agent process (Python and library imports,
  including loading numba's cached code -- the JIT an episode pays);
* ``outside``: everything else (harness start, materialisation, sandbox, scoring,
  metrics, results), i.e. wall minus the agent processes.

Then prints ``harness report``'s Table 22 for the runs.

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


def stage_seconds(run_dir: Path) -> tuple[float, float]:
    """(fit + predict, import) seconds summed over the run's episodes, from the solvers' timings lines."""
    method = imports = 0.0
    for path in run_dir.glob("episodes/*/agent.stderr"):
        for line in path.read_text().splitlines():
            if line.startswith("timings "):
                t = json.loads(line[len("timings "):])
                method += t["fit"] + t["predict"]
                imports += t["import"]
    return method, imports


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
                done = subprocess.run([sys.executable, "-m", "tsagent_plugins.agents.classical.solve", "--task-info", info,
                                       "--method", method], cwd=ws, env=env, capture_output=True, text=True)
                line = next((x for x in done.stderr.splitlines() if x.startswith("timings ")), "timings {}")
                print(f"{method:10s} {mode:6s} {time.perf_counter() - t0:6.1f} s  {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", type=Path, default=ROOT / "tasks/experiments/baselines.yaml")
    parser.add_argument("--out", type=Path, default=ROOT / "runs/baselines")
    parser.add_argument("--only-agent", action="append", default=[])
    parser.add_argument("--seeds", type=int, default=None, help="use only the first N seeds")
    parser.add_argument("--jit", type=Path, default=None, metavar="EPISODE_WORKSPACE",
                        help="only measure cold-JIT vs cached solver time on this workspace")
    args = parser.parse_args(argv)
    if args.jit:
        jit(args.jit)
        return 0
    spec, tasks = grid(args.experiment)
    agents = [a for a in spec["agents"] if not args.only_agent or a in args.only_agent]
    seeds = spec["seeds"][: args.seeds] if args.seeds else spec["seeds"]
    specs = [derived(t, spec.get("set", {}), args.out / "specs") for t in tasks]
    prepare(specs, agents)

    runs, per_agent = [], {}
    started = time.perf_counter()
    for task in specs:
        for agent in agents:
            out = args.out / f"{task.stem}--{agent}"
            t0 = time.perf_counter()
            argv_run = [sys.executable, "-m", "harness", "run", "--task", str(task), "--agent", agent,
                        "--out", str(out)] + [x for s in seeds for x in ("--seed", str(s))]
            done = subprocess.run(argv_run, cwd=ROOT, capture_output=True, text=True)
            if done.returncode != 0:
                print(f"FAILED {task.name} {agent}: {done.stderr[-1500:]}", file=sys.stderr)
                continue
            per_agent[agent] = per_agent.get(agent, 0.0) + time.perf_counter() - t0
            runs.append(out)
    wall = time.perf_counter() - started

    frame = pd.concat([pd.read_parquet(r / "results.parquet") for r in runs], ignore_index=True)
    agent_s = float(frame["agent_seconds"].sum())
    method_s = imports_s = 0.0
    for r in runs:
        m, i = stage_seconds(r)
        method_s += m
        imports_s += i
    n = len(frame)
    print(f"\n{len(specs)} task(s) × {len(agents)} agent(s) × {len(seeds)} seed(s) = {n} episodes "
          f"({(frame['status'] == 'ok').sum()} ok) in {wall:.1f} s wall ({wall / max(n, 1):.2f} s per episode)")
    print(f"  methods (fit + predict in the sandbox): {method_s:7.1f} s  ({method_s / wall:6.1%})")
    print(f"  agent start (Python, imports, cached numba code): {agent_s - method_s:7.1f} s  "
          f"({(agent_s - method_s) / wall:6.1%}; library imports alone {imports_s:.1f} s)")
    print(f"  outside the agents (harness, materialisation, sandbox, scoring): {wall - agent_s:7.1f} s  "
          f"({(wall - agent_s) / wall:6.1%})")
    for agent, seconds in per_agent.items():
        rows = frame[frame["profile"] == agent]
        print(f"    {agent:28s} {seconds:7.1f} s wall, {rows['agent_seconds'].mean():6.2f} s agent per episode")

    report = subprocess.run([sys.executable, "-m", "harness", "report", *map(str, runs), "--format", "markdown",
                             "--out", str(args.out / "report")], cwd=ROOT, capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    text = report.stdout
    start = text.find("## Table 22")
    print(text[start:text.find("\n\n", text.find("|", start) if start >= 0 else 0) + 1] if start >= 0 else
          f"no Table 22 in the report: {report.stderr[-800:]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

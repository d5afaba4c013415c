"""Run and time the classical-baseline experiment (TraceBench Appendix E, Table 22).

Usage: ``python benchmarks/baselines.py [--experiment tasks/experiments/baselines.yaml]
[--out runs/baselines-bench] [--jobs N] [--only-agent NAME ...] [--simulator NAME ...] [--seeds N]
[--sandbox BACKEND] [--reading NAME=VALUE | --ambiguities] [--compare RUN_DIR]``.

Runs the README's command, ``harness run --experiment
tasks/experiments/baselines.yaml --jobs N`` (N defaults to the number of CPUs),
into a fresh run directory.  The sample pools and numba's compilation cache are
built before the clock starts (not timed; the cache build time is printed).
The experiment spec actually run (reduced by ``--only-agent``, ``--simulator``, ``--seeds``, or a
reading) is written to ``<out>-specs/``.  Prints the wall time and where the episodes' time went,
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

Documented ambiguities (:data:`READINGS`): where the paper leaves a choice open, the pool and the
baselines follow one reading, written down once with its evidence where it is made; ``--reading
NAME=VALUE`` runs the other reading instead (only the simulators and methods it affects, into
``<out>-NAME-VALUE`` unless ``--out`` is given), and ``--ambiguities`` runs the kept reading and then
every other reading in turn, printing each one's cells beside the paper's and, for every cell of the
kept reading outside the paper's spread, whether the other reading puts it inside (a miss so explained
counts only because both readings were run and printed).  ``--compare RUN_DIR --ambiguities`` prints
the same from runs already made (``RUN_DIR`` and its ``RUN_DIR-NAME-VALUE`` siblings), running nothing.
``--simulator NAME`` keeps only that simulator's task specs (run one simulator at a time on a busy
machine; ``--compare`` over several ``--out`` folders is not merged).

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
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAPER = ROOT / "benchmarks" / "data" / "tracebench_table22.csv"
PRIVILEGED = ["euclidean-1nn-privileged", "dtw-1nn-privileged", "minirocket-ridge-privileged"]
LEARNED = ["euclidean-1nn", "euclidean-1nn-privileged", "dtw-1nn", "dtw-1nn-privileged", "minirocket-ridge",
           "minirocket-ridge-privileged"]


@dataclass(frozen=True)
class Reading:
    """One choice the paper leaves open: the ``kept`` reading (the pool's and the baselines') and the
    ``other``; ``where`` the choice is written down with its evidence; the simulators and agents whose cells
    the other reading can change; how it is applied: task ``params`` overrides, an agent profile option,
    and the simulator the other reading runs under (its rows are compared as ``simulators[0]``)."""

    kept: str
    other: str
    where: str
    simulators: tuple[str, ...]
    agents: tuple[str, ...]
    params: dict = field(default_factory=dict)
    profile_options: dict = field(default_factory=dict)
    simulator: str | None = None


#: The documented ambiguities of Appendices A and E that touch Table 22.
READINGS = {
    # Appendix E: "divide ... by that trajectory's maximum absolute impulse force": the residual's or the
    # observed trajectory's peak (only privileged inputs differ; MassSlide has no impulse channel)
    "impulse-peak": Reading("residual", "observed", "plugins/agents/classical/nn.py", ("balldrop", "bounceball"),
                            tuple(PRIVILEGED), profile_options={"impulse_peak": "observed"}),
    # Table 10 gives the inclination range -0.67...0.95 without a unit: degrees or radians
    "inclination": Reading("deg", "rad", "plugins/simulators/bounceball/sampling.py", ("bounceball",),
                           tuple(LEARNED), simulator="bounceball-radians"),
    # one observation-noise seed per episode (the question's seed) or one per sample
    "noise-seeds": Reading("episode", "sample", "plugins/tasks/tracebench/files.py (noise_seed)",
                           ("balldrop", "bounceball", "massslide"), tuple(LEARNED),
                           params={"noise_seeds": "sample"}),
}


def parse_reading(text: str) -> tuple[str, Reading]:
    """``NAME=VALUE`` naming the other reading of one of :data:`READINGS` (SystemExit otherwise)."""
    name, _, value = text.partition("=")
    reading = READINGS.get(name)
    if reading is None or value not in (reading.kept, reading.other):
        known = ", ".join(f"{n}={r.other}" for n, r in READINGS.items())
        raise SystemExit(f"--reading {text!r}: expected one of {known} (the kept readings need no option)")
    if value == reading.kept:
        raise SystemExit(f"--reading {text!r} is the kept reading; run without --reading")
    return name, reading


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


def comparison(frame: pd.DataFrame, reading: Reading | None = None, paper_file: Path = PAPER) -> pd.DataFrame:
    """:func:`table22.compare` of a run's rows; for another reading only the cells it affects, its
    simulator's rows compared as the simulator it reads differently."""
    from tsagent_plugins.tasks.tracebench.table22 import compare, read_paper

    paper = read_paper(paper_file)
    failed = frame[frame["status"] != "ok"] if "status" in frame.columns else frame.iloc[0:0]
    if len(failed):
        print(f"WARNING: {len(failed)} of {len(frame)} episodes did not finish ok (scored 0); first error: "
              f"{failed.iloc[0].get('error')}")
    if reading is not None:
        if reading.simulator:
            frame = frame.assign(simulator=frame["simulator"].replace(reading.simulator, reading.simulators[0]))
        paper = paper[paper["simulator"].isin(reading.simulators) & paper["agent"].isin(reading.agents)]
    return compare(frame, paper)


def print_table(cmp: pd.DataFrame, title: str) -> None:
    """Every compared cell as ``ours / paper ± SD``, ``*+``/``*-`` outside the paper's spread."""
    from tsagent_plugins.tasks.tracebench.table22 import BASELINES

    print(f"\n{title}; * = outside the paper's spread (|ours - paper| > paper SD), + above / - below")
    columns = list(dict.fromkeys(zip(cmp["simulator"], cmp["noise"])))
    print(f"{'method':32s}" + "".join(f"{sim[:10] + ' ' + noise:>24s}" for sim, noise in columns))
    for agent, group in cmp.groupby("agent", sort=False):
        by_cell = {(r.simulator, r.noise): r for r in group.itertuples()}
        cells = []
        for key in columns:
            r = by_cell.get(key)
            if r is None:
                cells.append(f"{'·':>24s}")
            elif r.ours is None or pd.isna(r.ours):
                cells.append(f"{'-':>9s} / {r.mean:.3f}±{r.sd:.3f}")
            else:
                mark = ("*+" if r.side == 1 else "*-") if r.outside else "  "
                cells.append(f"{r.ours:.3f}{mark} / {r.mean:.3f}±{r.sd:.3f}")
        print(f"{BASELINES.get(agent, agent):32s}" + "".join(f"{c:>24s}" for c in cells))


def print_criteria(cmp: pd.DataFrame, label: str = "", partial: bool = False) -> dict:
    """The reproduction criteria of ``cmp`` (per-method above/below counts included); returns them.
    ``partial``: ``cmp`` holds only the cells one other reading affects: counts only, no verdict."""
    from tsagent_plugins.tasks.tracebench.table22 import BASELINES, MAX_OUTSIDE, MAX_SAME_SIDE, criteria

    c = criteria(cmp)
    print(f"{label}per-simulator cells outside the paper's spread: {c['outside']} of {c['cells']} "
          f"(criterion <= {MAX_OUTSIDE}; about 4 expected by chance)")
    per_sim = cmp[cmp["simulator"] != "aggregate"]
    counts = [f"{BASELINES.get(a, a)} {int((g['side'] == 1).sum())}+/{int((g['side'] == -1).sum())}-"
              for a, g in per_sim.groupby("agent", sort=False)]
    print(f"{label}cells outside per method, above+/below- (criterion: fewer than {MAX_SAME_SIDE} on one side): "
          + ", ".join(counts))
    if (cmp["simulator"] == "aggregate").any():
        print(f"{label}aggregate cells outside the paper's SD: {c['aggregate_outside']} (criterion 0; "
              "the aggregate columns above)")
    if not partial and not c["complete"]:
        print(f"{label}criteria not judged: {c['cells']} of {len(per_sim)} per-simulator cells were run (the "
              "aggregate columns above average only the simulators that were)")
    elif not partial:
        print(f"{label}criteria {'MET' if c['met'] else 'NOT MET'}")
    return c


def print_comparison(frame: pd.DataFrame, paper_file: Path = PAPER) -> bool:
    """Print every paper cell beside ours, the cells outside the paper's spread and the criteria; True when met."""
    cmp = comparison(frame, None, paper_file)
    print_table(cmp, f"Table 22, ours vs the paper ({paper_file.relative_to(ROOT)})")
    return bool(print_criteria(cmp)["met"])


def print_ambiguities(kept: pd.DataFrame, others: dict[str, pd.DataFrame | None], paper_file: Path = PAPER) -> dict:
    """Each other reading's cells beside the paper's (``others``: reading name -> its run's rows, None when not
    run), then every miss of the kept readings (``kept``: :func:`comparison` rows) with the other readings'
    values of that cell, and the criteria with the misses an other reading, run and printed, puts inside the
    spread counted inside (:func:`table22.explain`).  Returns those criteria."""
    from tsagent_plugins.tasks.tracebench.table22 import explain

    alternatives: dict[str, pd.DataFrame] = {}
    for name, frame in others.items():
        reading = READINGS[name]
        title = f"Other reading {name}={reading.other} (kept: {reading.kept}, {reading.where})"
        if frame is None:
            print(f"\n{title}: not run")
            continue
        alternatives[name] = comparison(frame, reading, paper_file)
        print_table(alternatives[name], title)
        print_criteria(alternatives[name][alternatives[name]["ours"].notna()], label="  ", partial=True)
    print("\nCells of the kept readings outside the paper's spread, and the other readings' values there:")
    for r in kept[(kept["outside"] == True) & (kept["simulator"] != "aggregate")].itertuples():  # noqa: E712
        alts = []
        for name, cmp in alternatives.items():
            hit = cmp[(cmp["agent"] == r.agent) & (cmp["simulator"] == r.simulator) & (cmp["noise"] == r.noise)
                      & cmp["ours"].notna()]
            if len(hit):
                alts.append(f"{name}={READINGS[name].other} {hit.iloc[0]['ours']:.3f}"
                            + ("" if hit.iloc[0]["outside"] else " (inside)"))
        print(f"  {r.agent:28s} {r.simulator:10s} {r.noise:4s} {r.ours:.3f} vs {r.mean:.3f} ± {r.sd:.3f}: "
              + ("; ".join(alts) or "no other reading run for this cell"))
    excused, explained = explain(kept, alternatives)
    print(f"misses explained by a documented ambiguity (both readings run and printed): {len(explained)}"
          + "".join(f"\n  {' '.join(k)}: {', '.join(v)}" for k, v in explained.items()))
    return print_criteria(excused, label="with those misses explained: ")


def run(experiment: Path, spec: dict, tasks: list[Path], agents: list, seeds: list, out: Path, jobs: int,
        sandbox: str | None, reading: Reading | None = None) -> pd.DataFrame | None:
    """Run the (reduced) experiment into ``out`` with ``reading`` applied; print the time split; the rows."""
    overrides = {**spec.get("set", {}), **(reading.params if reading else {})}
    if reading and reading.simulator:
        overrides["simulator"] = reading.simulator
    names = [a if isinstance(a, str) else Path(a).stem for a in agents]
    folder = out.with_name(out.name + "-specs")
    prepare([derived(t, overrides, folder) for t in tasks], names)
    if reading and reading.profile_options:  # the same profile names, with the reading's option
        profiles = out.with_name(out.name + "-profiles")
        profiles.mkdir(parents=True, exist_ok=True)
        for name in names:
            if name in reading.agents:
                (profiles / f"{name}.yaml").write_text(yaml.safe_dump(
                    {"agent": name, "image_support": False, "options": dict(reading.profile_options)}))
        agents = [str(profiles / f"{a}.yaml") if a in reading.agents else a for a in names]
    copy = {**spec, "agents": agents, "seeds": seeds, "set": overrides,
            "tasks": [os.path.relpath(t.resolve(), folder.resolve()) for t in tasks]}
    experiment = folder / f"{experiment.stem}.yaml"  # beside the derived specs, out of the repository's files
    experiment.write_text(yaml.safe_dump(copy, sort_keys=False))
    if out.exists():
        import shutil

        shutil.rmtree(out)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "harness", "run", "--experiment", str(experiment), "--jobs",
                           str(jobs), "--out", str(out), *(["--sandbox", sandbox] if sandbox else [])],
                          cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        print(f"harness run failed ({done.returncode}): {done.stderr[-2000:]}", file=sys.stderr)
        return None
    frame = pd.read_parquet(out / "results.parquet")
    time_split(frame, out, wall, jobs, len(tasks), names, seeds)
    return frame


def time_split(frame: pd.DataFrame, out: Path, wall: float, jobs: int, n_tasks: int, agents: list[str],
               seeds: list) -> None:
    """Print where the episodes' time went (module docstring)."""
    slots = wall * jobs
    episode_s = float(frame["episode_seconds"].sum())
    agent_s = float(frame["agent_seconds"].sum())
    t = stage_seconds(out)
    method_s = t["fit"] + t["predict"]
    n = len(frame)
    print(f"\n{n_tasks} task(s) × {len(agents)} agent(s) × {len(seeds)} seed(s) = {n} episodes "
          f"({(frame['status'] == 'ok').sum()} ok) in {wall:.1f} s wall with {jobs} job(s) "
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


def print_report_table(out: Path) -> None:
    """``harness report``'s Table 22 for the run in ``out``."""
    report = subprocess.run([sys.executable, "-m", "harness", "report", str(out), "--format", "markdown",
                             "--out", str(out / "report")], cwd=ROOT, capture_output=True, text=True)
    text = (out / "report" / "report.md").read_text() if report.returncode == 0 else ""
    start = text.find("## Table 22")
    end = text.find("\n\n", text.find("\n|", start) if start >= 0 else 0)
    print("\n" + text[start:text.find("\n\n", end + 2)] if start >= 0 else
          f"no Table 22 in the report: {report.stderr[-800:]}")


def other_dir(out: Path, name: str) -> Path:
    """Where the other reading ``name`` of a run in ``out`` goes."""
    return out.with_name(f"{out.name}-{name}-{READINGS[name].other}")


def select(tasks: list[Path], agents: list[str], simulators: tuple[str, ...] | None, wanted: tuple[str, ...] | None):
    """The task specs of ``simulators`` and the agents in ``wanted`` (None: all)."""
    if simulators:
        tasks = [t for t in tasks if yaml.safe_load(t.read_text()).get("params", {}).get("simulator") in simulators]
    if wanted:
        agents = [a for a in agents if a in wanted]
    return tasks, agents


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", type=Path, default=ROOT / "tasks/experiments/baselines.yaml")
    parser.add_argument("--out", type=Path, default=None, help="run folder (default runs/baselines-bench)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only-agent", action="append", default=[])
    parser.add_argument("--simulator", action="append", default=[], help="only this simulator's task specs")
    parser.add_argument("--seeds", type=int, default=None, help="use only the first N seeds")
    parser.add_argument("--jit", type=Path, default=None, metavar="EPISODE_WORKSPACE",
                        help="only measure cold-JIT vs cached solver time on this workspace")
    parser.add_argument("--sandbox", default=None, help="sandbox backend passed to harness run (default: its own)")
    parser.add_argument("--compare", type=Path, default=None, metavar="RUN_DIR",
                        help="only print the comparison with the paper's Table 22 for this run's results.parquet")
    parser.add_argument("--reading", default=None, metavar="NAME=VALUE",
                        help="run the other reading of a documented ambiguity: "
                             + ", ".join(f"{n}={r.other}" for n, r in READINGS.items()))
    parser.add_argument("--ambiguities", action="store_true",
                        help="also run (with --compare: read) every other reading and print its cells")
    args = parser.parse_args(argv)
    if args.jit:
        jit(args.jit)
        return 0
    named = parse_reading(args.reading) if args.reading else None
    out = args.out or ROOT / "runs/baselines-bench"
    if named and args.out is None:
        out = other_dir(out, named[0])
    if args.compare:
        if not (args.compare / "results.parquet").is_file():
            print(f"baselines: {args.compare / 'results.parquet'} does not exist: run `python benchmarks/baselines.py"
                  f" --out {args.compare}` first", file=sys.stderr)
            return 2
        frame = pd.read_parquet(args.compare / "results.parquet")
        if named:
            cmp = comparison(frame, named[1])
            print_table(cmp, f"Table 22 under {named[0]}={named[1].other}, ours vs the paper")
            print_criteria(cmp[cmp["ours"].notna()], partial=True)
            return 0
        print_comparison(frame)
        if args.ambiguities:
            others = {name: (pd.read_parquet(other_dir(args.compare, name) / "results.parquet")
                             if (other_dir(args.compare, name) / "results.parquet").exists() else None)
                      for name in READINGS}
            print_ambiguities(comparison(frame), others)
        return 0
    spec, tasks = grid(args.experiment)
    seeds = spec["seeds"][: args.seeds] if args.seeds else spec["seeds"]
    tasks, agents = select(tasks, spec["agents"], tuple(args.simulator) or None, tuple(args.only_agent) or None)
    if named:
        tasks, agents = select(tasks, agents, named[1].simulators, named[1].agents)
    frame = run(args.experiment, spec, tasks, agents, seeds, out, args.jobs, args.sandbox, named[1] if named else None)
    if frame is None:
        return 1
    if named:
        cmp = comparison(frame, named[1])
        print_table(cmp, f"Table 22 under {named[0]}={named[1].other}, ours vs the paper")
        print_criteria(cmp[cmp["ours"].notna()], partial=True)
        return 0
    print_report_table(out)
    print_comparison(frame)
    if args.ambiguities:
        others = {}
        for name, reading in READINGS.items():
            sub_tasks, sub_agents = select(tasks, agents, reading.simulators, reading.agents)
            others[name] = run(args.experiment, spec, sub_tasks, sub_agents, seeds, other_dir(out, name), args.jobs,
                               args.sandbox, reading) if sub_tasks and sub_agents else None
        print_ambiguities(comparison(frame), others)
    return 0


if __name__ == "__main__":
    sys.exit(main())

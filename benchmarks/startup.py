"""Start-up cost of the ``harness`` command.

Usage: ``python benchmarks/startup.py [--repeat N]``.

Runs each command N times (default 9) in a fresh interpreter and prints, in seconds, the minimum and the
median wall time, the median CPU time (user + system, of the child process: less sensitive than wall time
to other processes sharing the cores) and both medians' ratio to ``python -c pass`` (the floor any Python
command pays), measured in the same run.  The runs are interleaved, one of each command per round, so that
a change of load in the middle of the run weighs on the floor and the commands alike; the load average
before and after is printed beside (on a busy machine wall times are those of a loaded machine).  Goal:
``harness plugins list`` within 8x ``python -c pass``, judged on the median CPU time (wall time under load
mostly measures waiting for a core); the script exits 1 when it misses.

Each command runs once before the timed rounds, and the children run without ``PYTHONDONTWRITEBYTECODE``:
the harness's bytecode cache (``__pycache__``) is written then, as an installed harness has it, so the figures
are those of the steady state rather than of compiling every module on every run.  Their output is piped
and ``$COLUMNS`` unset: ``plugins list`` draws its table for 160 columns (a narrower terminal has rich fold it).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "harness --version": [sys.executable, "-m", "harness", "--version"],
    "harness --help": [sys.executable, "-m", "harness", "--help"],
    "harness plugins list": [sys.executable, "-m", "harness", "plugins", "list"],
    "harness tasks list": [sys.executable, "-m", "harness", "tasks", "list"],
}
FLOOR = "python -c pass"
GOAL = ("harness plugins list", 8.0)
#: the children's environment: the bytecode cache is read and written, as in an installed harness, and the
#: console is that of piped output (160 columns: no ``$COLUMNS`` of the calling terminal)
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "COLUMNS")}


def child_cpu() -> float:
    """User + system CPU seconds of every waited-for child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (output discarded; a failing command raises)."""
    cpu, start = child_cpu(), time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start, child_cpu() - cpu


def timings(repeat: int) -> dict[str, tuple[list[float], list[float]]]:
    """label -> (wall seconds, CPU seconds) of ``repeat`` rounds, each round running every command once, after
    one untimed run of each (which writes the bytecode cache)."""
    for argv in COMMANDS.values():
        run(argv)
    out: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in COMMANDS}
    for _ in range(repeat):
        for label, argv in COMMANDS.items():
            wall, cpu = run(argv)
            out[label][0].append(wall)
            out[label][1].append(cpu)
    return out


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def main(repeat: int = 9) -> int:
    if sys.flags.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set here; the commands run without it (bytecode cache written)")
    print(f"before: {load()}")
    measured = timings(repeat)
    print(f"after:  {load()}")
    floor_wall, floor_cpu = (statistics.median(values) for values in measured[FLOOR])
    print(f"{'command':<24} {'min s':>7} {'median s':>9} {'cpu s':>7} {'x python':>9} {'cpu x python':>13}")
    judged = None
    for label, (walls, cpus) in measured.items():
        median, cpu = statistics.median(walls), statistics.median(cpus)
        print(f"{label:<24} {min(walls):>7.3f} {median:>9.3f} {cpu:>7.3f} {median / floor_wall:>9.1f} "
              f"{cpu / floor_cpu:>13.1f}")
        if label == GOAL[0]:
            judged = cpu / floor_cpu
    ok = judged is not None and judged <= GOAL[1]
    print(f"{GOAL[0]}: {judged:.1f}x the floor's CPU time (median of {repeat} rounds; goal <= {GOAL[1]:g}x): "
          f"{'within goal' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(int(args[args.index("--repeat") + 1]) if "--repeat" in args else 9))

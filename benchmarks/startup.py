"""Start-up cost of the ``harness`` command.

Usage: ``python benchmarks/startup.py [--repeat N]``.

Runs each command N times (default 7) in a fresh interpreter and prints, in seconds, the minimum and the
median wall time, the median CPU time (user + system, of the child process: less sensitive than wall time
to other processes sharing the cores) and the median wall time's ratio to ``python -c pass`` (the floor
any Python command pays).  The load average before and after is printed beside: on a busy machine wall
times are those of a loaded machine.  Goal: ``harness plugins list`` within 8x ``python -c pass``, judged
on the median CPU time (the same-run floor; wall time under load mostly measures waiting for a core); the
script exits 1 when it misses.  With ``PYTHONDONTWRITEBYTECODE`` set no bytecode cache is written: modules
without an up-to-date ``__pycache__`` are compiled on every run and the plugin-loading commands are slower;
the script says so when it is set.
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


def child_cpu() -> float:
    """User + system CPU seconds of every waited-for child so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timings(argv: list[str], repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``repeat`` runs of ``argv`` (output discarded; a failing command raises)."""
    walls, cpus = [], []
    for _ in range(repeat):
        cpu, start = child_cpu(), time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        cpus.append(child_cpu() - cpu)
    return walls, cpus


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


GOAL = ("harness plugins list", 8.0)


def main(repeat: int = 7) -> int:
    floor = None
    cpu_floor = None
    judged = None
    if sys.flags.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set: modules without an up-to-date __pycache__ are compiled "
              "on every run")
    print(f"before: {load()}")
    print(f"{'command':<24} {'min s':>7} {'median s':>9} {'cpu s':>7} {'x python':>9} {'cpu x python':>13}")
    for label, argv in COMMANDS.items():
        walls, cpus = timings(argv, repeat)
        median, cpu = statistics.median(walls), statistics.median(cpus)
        floor = floor or median
        cpu_floor = cpu_floor or cpu
        print(f"{label:<24} {min(walls):>7.3f} {median:>9.3f} {cpu:>7.3f} {median / floor:>9.1f} "
              f"{cpu / cpu_floor:>13.1f}")
        if label == GOAL[0]:
            judged = cpu / cpu_floor
    print(f"after:  {load()}")
    ok = judged is not None and judged <= GOAL[1]
    print(f"{GOAL[0]}: {judged:.1f}x the floor's CPU time (goal <= {GOAL[1]:g}x): {'within goal' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(int(args[args.index("--repeat") + 1]) if "--repeat" in args else 7))

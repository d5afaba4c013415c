"""Start-up cost of the ``harness`` command.

Usage: ``python benchmarks/startup.py [--repeat N]``.

Runs each command N times (default 7) in a fresh interpreter and prints the
median wall time in seconds and its ratio to ``python -c pass`` (the floor any
Python command pays).  Targets: ``--version`` and ``--help`` under 0.3 s,
``plugins list`` and ``tasks list`` under 1.5 s.  With ``PYTHONDONTWRITEBYTECODE`` set no
bytecode cache is written: modules without an up-to-date ``__pycache__`` are compiled on every
run and the plugin-loading commands are slower; the script says so when it is set.
"""

from __future__ import annotations

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


def median_seconds(argv: list[str], repeat: int) -> float:
    """Median wall time of ``repeat`` runs of ``argv`` (output discarded; a failing command raises)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(repeat: int = 7) -> None:
    floor = None
    if sys.flags.dont_write_bytecode:
        print("note: PYTHONDONTWRITEBYTECODE is set: modules without an up-to-date __pycache__ are compiled "
              "on every run")
    print(f"{'command':<24} {'median s':>9} {'x python':>9}")
    for label, argv in COMMANDS.items():
        seconds = median_seconds(argv, repeat)
        floor = floor or seconds
        print(f"{label:<24} {seconds:>9.3f} {seconds / floor:>9.1f}")


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[args.index("--repeat") + 1]) if "--repeat" in args else 7)

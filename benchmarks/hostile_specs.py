"""Time and peak memory of refusing hostile spec files (``harness run --task FILE``).

Usage: ``python benchmarks/hostile_specs.py``.  Writes, in a temporary folder, a task spec whose unknown keys
hold a YAML alias bomb (9 levels x 9 aliases), one with a 30 MB ``seed:`` string and one that is not UTF-8,
runs ``python -m harness run --task`` on each and prints its exit code, wall time, the child's peak resident
memory (``wait4``) and the length of the error line.  Target: < 1 s (beyond interpreter start-up), < 200 MB,
error line <= 200 characters, exit 2.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def bomb(levels: int = 9, width: int = 9) -> str:
    lines = ["name: bomb", "template: tracebench", "l0: &l0 [lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def measure(spec: Path) -> tuple[int, float, float, int]:
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "--task", spec.name], cwd=spec.parent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    line = max(err.decode(errors="replace").splitlines() or [""], key=len)
    return os.waitstatus_to_exitcode(status), seconds, usage.ru_maxrss / 1024, len(line)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        files = {"bomb.yaml": bomb().encode(),
                 "seed.yaml": b"name: s\ntemplate: tracebench\nparams:\n  seed: '" + b"9" * 30_000_000 + b"'\n",
                 "nonutf.yaml": b"template: tracebench\nname: nonutf\xff\n",
                 "empty.yaml": b"name: e\ntemplate: tracebench\n"}
        print(f"{'spec':<14}{'exit':>5}{'seconds':>9}{'peak MB':>9}{'line':>6}")
        for name, data in files.items():
            (folder / name).write_bytes(data)
            code, seconds, peak, line = measure(folder / name)
            print(f"{name:<14}{code:>5}{seconds:>9.2f}{peak:>9.0f}{line:>6}")
        print("(empty.yaml: a small invalid spec, the start-up cost every refusal includes)")


if __name__ == "__main__":
    main()

"""Benchmark: harness overhead of one sandboxed episode per sandbox backend.

Usage: ``python benchmarks/sandbox.py [--runs 20] [--backend bubblewrap --backend unshare ...]``

For each backend (default: every registered backend whose ``available()`` is
true, ``none`` included) one episode is: ``create`` (with a model-proxy
socket, so the bridge comes up inside), ``exec(["true"])``, ``copy_out`` of
one workspace file, ``destroy``.  Prints the median and interquartile range of
``--runs`` episodes (wall clock) next to a bare ``bwrap --ro-bind / / true``
baseline, and the machine load (on a busy machine every process start in the
chain waits for a CPU, so compare with the baseline).  Target: bubblewrap
episode overhead < 0.1 s.
"""

from __future__ import annotations

import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from harness.contracts.sandbox import SandboxBackend, SandboxSpec
from harness.plugins import plugins

TARGETS = {"bubblewrap": 0.1}


def _free_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as s:
        return s.getsockname()[1]


def episode(backend: SandboxBackend, workspace: Path, proxy_socket: Path, out: Path) -> float:
    """Wall-clock seconds for create -> bridge up -> exec true -> copy-out -> destroy."""
    port = _free_port() if backend.name == "none" else 8765
    started = time.perf_counter()
    sandbox = backend.create(SandboxSpec(workspace=workspace, proxy_socket=proxy_socket, proxy_port=port))
    try:
        result = sandbox.exec(["true"], timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"`true` exited {result.returncode}: {result.stderr.strip()[-200:]}")
        sandbox.copy_out("/workspace/answer.json", out)
    finally:
        sandbox.destroy()
    return time.perf_counter() - started


def measure(fn: Callable[[], float], runs: int) -> list[float]:
    fn()  # warm-up: probes, page cache
    return [fn() for _ in range(runs)]


def _bare_bwrap() -> float:
    started = time.perf_counter()
    subprocess.run(["bwrap", "--ro-bind", "/", "/", "true"], check=True)
    return time.perf_counter() - started


def _row(table: Table, name: str, times: list[float], target: float | None) -> None:
    q = statistics.quantiles(times, n=4) if len(times) > 1 else [times[0]] * 3
    verdict = "" if target is None else ("ok" if statistics.median(times) < target else "over target")
    table.add_row(name, f"{statistics.median(times) * 1000:.1f}", f"{q[0] * 1000:.1f}-{q[2] * 1000:.1f}",
                  "" if target is None else f"< {target * 1000:.0f}", verdict)


@click.command()
@click.option("--runs", default=20, show_default=True, type=click.IntRange(1))
@click.option("--backend", "names", multiple=True, help="backend to measure (repeatable; default: all available)")
def main(runs: int, names: tuple[str, ...]) -> None:
    console = Console()
    registry = plugins().registry("sandbox_backend")
    backends = [registry[n].obj for n in names] if names else sorted(
        (r.obj for r in registry.values()), key=lambda b: -b.priority)
    table = Table(title=f"Sandbox episode overhead, median of {runs} runs (ms)")
    for col in ("backend", "median", "IQR", "target", ""):
        table.add_column(col)
    with tempfile.TemporaryDirectory(prefix="hbench-") as tmp:
        ws, out = Path(tmp) / "ws", Path(tmp) / "out" / "answer.json"
        ws.mkdir()
        (ws / "answer.json").write_text('{"sample_000": "mass"}')
        proxy_socket = Path(tmp) / "proxy.sock"
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(proxy_socket))
        server.listen()
        try:
            if shutil.which("bwrap"):
                _row(table, "bare bwrap --ro-bind / / true", measure(_bare_bwrap, runs), None)
            for backend in backends:
                ok, why = backend.available()
                if not ok:
                    table.add_row(backend.name, "-", "-", "", f"unavailable: {why}")
                    continue
                try:
                    times = measure(lambda b=backend: episode(b, ws, proxy_socket, out), runs)
                except Exception as exc:  # noqa: BLE001 - one broken backend must not hide the others
                    table.add_row(backend.name, "-", "-", "", f"failed: {type(exc).__name__}: {exc}"[:120])
                    continue
                _row(table, backend.name, times, TARGETS.get(backend.name))
        finally:
            server.close()
    console.print(table)
    console.print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

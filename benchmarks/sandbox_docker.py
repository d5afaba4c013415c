"""Docker sandbox episode, as a ratio to the same steps done by hand with the Docker CLI in the same run.

Episode: create (container start + proxy bridge up) -> exec ``true`` -> copy-out
-> destroy, through :class:`harness.sandbox.docker.DockerBackend`.
Floor: the Docker CLI doing what an episode needs and nothing more, on the same
image: ``docker create --network none``, ``docker start``, one ``docker exec``,
one ``docker cp`` out, ``docker rm -f``.  Rounds alternate (episode, floor) so
both see the same load.  Prints the median (and min/max) of ``--repeat`` rounds
per phase, and the ratio of the medians.  Goal: within 1.3x; exits 1 otherwise.

    python benchmarks/sandbox_docker.py [--repeat 10] [--image IMAGE]

Without ``--image`` it uses the bootstrapped base image (built if missing).
"""

from __future__ import annotations

import argparse
import os
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from harness.contracts.sandbox import SandboxSpec
from harness.sandbox.docker import DockerBackend, connect

GOAL_RATIO = 1.3


class _Proxy(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _Ok(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def address_string(self):
        return "unix"

    def log_message(self, *args):
        pass


def _episode(backend: DockerBackend, root: Path, sock: Path, i: int) -> dict[str, float]:
    ws, home, out = root / f"ws{i}", root / f"home{i}", root / f"out{i}"
    ws.mkdir()
    home.mkdir()
    times = {}
    t0 = time.perf_counter()
    box = backend.create(SandboxSpec(workspace=ws, home=home, proxy_socket=sock,
                                     labels={"harness.run": "bench", "harness.episode": str(i)}))
    t1 = time.perf_counter()
    try:
        result = box.exec(["true"], timeout=30)
        assert result.returncode == 0, result
        t2 = time.perf_counter()
        box.copy_out("/etc/hostname", out)
        t3 = time.perf_counter()
    finally:
        box.destroy()
    t4 = time.perf_counter()
    times.update(create_and_bridge=t1 - t0, exec_true=t2 - t1, copy_out=t3 - t2, destroy=t4 - t3, episode=t4 - t0)
    return times


def _floor(image: str, out: Path) -> float:
    """Seconds of the same steps by hand with the Docker CLI."""
    def docker(*args: str) -> str:
        return subprocess.run(["docker", *args], check=True, capture_output=True, text=True).stdout.strip()

    t0 = time.perf_counter()
    cid = docker("create", "--network", "none", "--init", "--label", "harness.managed=1", "--label",
                 "harness.run=bench", image, "sleep", "infinity")
    try:
        docker("start", cid)
        docker("exec", cid, "true")
        docker("cp", f"{cid}:/etc/hostname", str(out))
    finally:
        docker("rm", "-f", cid)
    return time.perf_counter() - t0


def _fmt(values: list[float]) -> str:
    return f"{statistics.median(values):7.3f} s  (min {min(values):.3f}, max {max(values):.3f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--image", default=None)
    args = parser.parse_args(argv)
    client = connect()
    image = args.image
    if image is None:
        from harness.image.bootstrap import ensure_base_image

        image = ensure_base_image(client)
    backend = DockerBackend(image=image)
    with tempfile.TemporaryDirectory(prefix="bench-docker-") as tmp:
        root = Path(tmp)
        sock = root / "proxy.sock"
        proxy = _Proxy(str(sock), _Ok)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            _episode(backend, root, sock, -1)  # warm-up
            _floor(image, root / "floor-warm")
            rounds, base = [], []
            for i in range(args.repeat):
                rounds.append(_episode(backend, root, sock, i))
                base.append(_floor(image, root / f"floor{i}"))
        finally:
            proxy.shutdown()
            proxy.server_close()
    print(f"docker sandbox episode, image {image}, median of {args.repeat}:")
    for phase in ("create_and_bridge", "exec_true", "copy_out", "destroy", "episode"):
        print(f"  {phase:<18} {_fmt([r[phase] for r in rounds])}")
    print(f"  {'floor (docker CLI)':<18} {_fmt(base)}  (create --network none, start, exec, cp, rm -f)")
    episode, floor = statistics.median(r["episode"] for r in rounds), statistics.median(base)
    ratio = episode / floor
    print(f"episode {episode:.3f} s vs floor {floor:.3f} s: {ratio:.2f}x (goal <= {GOAL_RATIO}x): "
          f"{'within goal' if ratio <= GOAL_RATIO else 'MISSED'}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    return 0 if ratio <= GOAL_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())

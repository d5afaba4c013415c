"""Docker sandbox overhead of one episode, next to the engine's own baseline.

Episode: create (container start + proxy bridge up) -> exec ``true`` -> copy-out
-> destroy, through :class:`harness.sandbox.docker.DockerBackend`.
Baseline: the engine alone (docker SDK): create + start + exec ``true`` + remove.
Prints the median (and min/max) of ``--repeat`` rounds per phase.  Target: the
episode overhead below 1.0 s.

    python benchmarks/sandbox_docker.py [--repeat 10] [--image IMAGE]

Without ``--image`` it uses the bootstrapped base image (built if missing).
"""

from __future__ import annotations

import argparse
import socketserver
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from harness.contracts.sandbox import SandboxSpec
from harness.sandbox.docker import DockerBackend, connect

TARGET_SECONDS = 1.0


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


def _baseline(client, image: str) -> float:
    t0 = time.perf_counter()
    c = client.containers.create(image, ["sleep", "infinity"], network_mode="none", init=True,
                                 labels={"harness.managed": "1", "harness.run": "bench"})
    try:
        c.start()
        code, _ = c.exec_run(["true"])
        assert code == 0
    finally:
        c.remove(force=True)
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
            _baseline(client, image)
            rounds = [_episode(backend, root, sock, i) for i in range(args.repeat)]
            base = [_baseline(client, image) for _ in range(args.repeat)]
        finally:
            proxy.shutdown()
            proxy.server_close()
    print(f"docker sandbox overhead, image {image}, median of {args.repeat}:")
    for phase in ("create_and_bridge", "exec_true", "copy_out", "destroy", "episode"):
        print(f"  {phase:<18} {_fmt([r[phase] for r in rounds])}")
    print(f"  {'engine baseline':<18} {_fmt(base)}  (create + start + exec true + remove)")
    episode = statistics.median(r["episode"] for r in rounds)
    verdict = "within" if episode < TARGET_SECONDS else "OVER"
    print(f"episode overhead {episode:.3f} s: {verdict} the {TARGET_SECONDS:.1f} s target; "
          f"{episode - statistics.median(base):+.3f} s over the engine baseline")
    return 0 if episode < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())

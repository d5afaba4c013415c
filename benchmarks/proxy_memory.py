"""Resident memory of the model proxy under large request bodies, and the size of its log.

Usage: ``python benchmarks/proxy_memory.py [--mib 200] [--at-once 1 4] [--inflight-mib 1024] [--log-mib 256]``.

Starts one :class:`harness.proxy.ModelProxy` in this process, forwarding with an
:class:`~harness.proxy.HttpUpstream` to an upstream HTTP server in its own process that reads every body
(and answers with its size and SHA-256, checked here), then for each ``--at-once`` N sends N requests of
``--mib`` MiB each at the same time from child processes (so neither the senders' nor the upstream's
copies are counted), and prints this process's resident-memory growth (peak ``VmHWM`` minus the start),
that growth as a multiple of the spool threshold (bodies over it go to disk, :mod:`harness.proxy.spool`),
the peak bytes held under the in-flight bound, and the growth of ``proxy.jsonl``.  Bounds:
``RunSettings.proxy_inflight_mb`` and ``proxy_log_mb``; the spool threshold is ``SPOOL_BYTES``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.config import Budget, Prices
from harness.limits import InflightBytes
from harness.proxy import HttpUpstream, ModelProxy
from harness.proxy.spool import SPOOL_BYTES

SENDER = """
import sys
from harness.proxy.client import request
size = int(sys.argv[2])
body = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * size + b'"}]}'
reply = request(sys.argv[1], "POST", "/v1/chat/completions", body, {"content-type": "application/json"},
                timeout=600)
print(reply.status, reply.body.decode())
"""

UPSTREAM = """
import hashlib, sys
from aiohttp import web

async def handle(req):
    digest, size = hashlib.sha256(), 0
    async for chunk in req.content.iter_chunked(1 << 20):  # reads every byte of the body
        digest.update(chunk)
        size += len(chunk)
    return web.json_response({"object": "chat.completion", "choices": [], "size": size,
                              "sha256": digest.hexdigest(), "usage": {"prompt_tokens": 1, "completion_tokens": 1}})

app = web.Application(client_max_size=1 << 31)
app.router.add_route("*", "/{tail:.*}", handle)
web.run_app(app, host="127.0.0.1", port=int(sys.argv[1]), print=lambda *a: print("ready", flush=True),
            access_log=None)
"""


def rss_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def expected(mib: int) -> tuple[int, str]:
    """Length and SHA-256 of the body a sender sends, computed a MiB at a time (this process's peak RSS is
    the measure: it must never hold a body)."""
    head, tail = b'{"model": "m", "messages": [{"role": "user", "content": "', b'"}]}'
    digest = hashlib.sha256(head)
    for _ in range(mib):
        digest.update(b"x" * (1 << 20))
    digest.update(tail)
    return len(head) + (mib << 20) + len(tail), digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=200)
    parser.add_argument("--at-once", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--inflight-mib", type=int, default=1024)
    parser.add_argument("--log-mib", type=int, default=256)
    args = parser.parse_args()
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", UPSTREAM, str(port)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "ready", "upstream did not start"
        inflight = InflightBytes(args.inflight_mib << 20)
        upstream = HttpUpstream(f"http://127.0.0.1:{port}", auth="none")
        size, digest = expected(args.mib)
        with tempfile.TemporaryDirectory() as tmp, ModelProxy(upstream, inflight=inflight,
                                                              log_budget=args.log_mib << 20) as proxy:
            folder = Path(tmp)
            print(f"spool threshold {SPOOL_BYTES / 2**20:.0f} MiB; upstream in its own process (pid {server.pid}) "
                  "reads every body")
            print(f"{'at once':>8}{'body MiB':>10}{'RSS growth MiB':>16}{'x threshold':>13}{'held peak MiB':>15}"
                  f"{'log MiB':>9}{'s':>7}  upstream got every byte")
            for n in args.at_once:
                sock, log = folder / f"{n}.sock", folder / f"{n}" / "proxy.jsonl"
                proxy.open_episode(f"e{n}", sock, log, Prices(), Budget())
                inflight.peak = 0
                base = rss_mib("VmRSS")
                started = time.monotonic()
                senders = [subprocess.Popen([sys.executable, "-c", SENDER, str(sock), str(args.mib << 20)],
                                            stdout=subprocess.PIPE, text=True) for _ in range(n)]
                answers = [p.communicate()[0].strip().split(" ", 1) for p in senders]
                proxy.close_episode(f"e{n}")
                whole = all(status == "200" and json.loads(body)["size"] == size and
                            json.loads(body)["sha256"] == digest for status, body in answers)
                growth = rss_mib("VmHWM") - base
                print(f"{n:>8}{args.mib:>10}{growth:>16.0f}{growth / (SPOOL_BYTES / 2**20):>13.2f}"
                      f"{inflight.peak / 2**20:>15.0f}{log.stat().st_size / 2**20:>9.1f}"
                      f"{time.monotonic() - started:>7.1f}  {'yes' if whole else 'NO: ' + str(answers)[:200]}")
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()

"""Resident memory of the model proxy under large request bodies, and the size of its log.

Usage: ``python benchmarks/proxy_memory.py [--mib 200] [--at-once 1 4] [--inflight-mib 1024] [--log-mib 256]``.

Starts one :class:`harness.proxy.ModelProxy` in this process (an upstream that answers without reading the
body, as a forwarding upstream holds it once), then for each ``--at-once`` N sends N requests of ``--mib``
MiB each at the same time from child processes (so the senders' copies are not counted), and prints this
process's resident-memory growth (peak ``VmHWM`` minus the start), the peak bytes held under the in-flight
bound, and the growth of ``proxy.jsonl``.  Bounds: ``RunSettings.proxy_inflight_mb`` and ``proxy_log_mb``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.config import Budget, Prices
from harness.limits import InflightBytes
from harness.proxy import ModelProxy, Upstream, UpstreamResponse

SENDER = """
import sys
from harness.proxy.client import request
size = int(sys.argv[2])
body = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"x" * size + b'"}]}'
print(request(sys.argv[1], "POST", "/v1/chat/completions", body, {"content-type": "application/json"},
              timeout=600).status)
"""


class Answer(Upstream):
    async def handle(self, req):
        return UpstreamResponse.json(200, {"object": "chat.completion", "choices": [],
                                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}})


def rss_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=200)
    parser.add_argument("--at-once", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--inflight-mib", type=int, default=1024)
    parser.add_argument("--log-mib", type=int, default=256)
    args = parser.parse_args()
    inflight = InflightBytes(args.inflight_mib << 20)
    with tempfile.TemporaryDirectory() as tmp, ModelProxy(Answer(), inflight=inflight,
                                                          log_budget=args.log_mib << 20) as proxy:
        folder = Path(tmp)
        print(f"{'at once':>8}{'body MiB':>10}{'RSS growth MiB':>16}{'held peak MiB':>15}{'log MiB':>9}{'s':>7}")
        for n in args.at_once:
            sock, log = folder / f"{n}.sock", folder / f"{n}.jsonl"
            proxy.open_episode(f"e{n}", sock, log, Prices(), Budget())
            inflight.peak = 0
            base = rss_mib("VmRSS")
            started = time.monotonic()
            senders = [subprocess.Popen([sys.executable, "-c", SENDER, str(sock), str(args.mib << 20)],
                                        stdout=subprocess.PIPE, text=True) for _ in range(n)]
            statuses = [p.communicate()[0].strip() for p in senders]
            proxy.close_episode(f"e{n}")
            print(f"{n:>8}{args.mib:>10}{rss_mib('VmHWM') - base:>16.0f}{inflight.peak / 2**20:>15.0f}"
                  f"{log.stat().st_size / 2**20:>9.1f}{time.monotonic() - started:>7.1f}  statuses {statuses}")


if __name__ == "__main__":
    main()

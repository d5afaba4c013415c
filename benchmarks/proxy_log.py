"""The 200k-token stress episode's proxy log, plain and compressed as the proxy writes it: size, cost, metrics.

Builds the episode of ``benchmarks/metrics.py`` (its trajectory and a plain ``proxy.jsonl`` of about 70 MB:
every request carries the whole conversation), writes the same records through the proxy's log writer
(:class:`harness.proxy.log.ProxyLogWriter`: zstd level 3, a block flushed after every record) to
``proxy.jsonl.zst`` and, for comparison, plain as the proxy wrote its log before (the plain reference below),
and prints:

- sizes: the plain log, the compressed one and their ratio (goal: at most 0.5 MB), beside ``zstd -3`` of the
  whole file in one go and gzip level 6, for reference;
- CPU seconds to write each log (what the proxy's event loop spends) and a compression context's memory;
- the metric-extractor set on the compressed log against its floor measured in the same run -- tiktoken
  encoding every trajectory text, plus decompressing the log and ``json.loads`` of every line (goal: 1.5x,
  as for ``benchmarks/metrics.py``; CPU s, best of ``--repeat``), and the set on the plain log beside it;
- that every extractor's values, the proxy records and the viewer's calls are the same from either log;
- the viewer's cost: indexing the calls, and the last call's detail (decompressed from the start).

    python benchmarks/proxy_log.py [--tokens 200000] [--repeat 3]

Exits 1 when a goal is missed or a value differs.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import gzip
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import zstandard

from harness import logfile
from harness.proxy.log import ProxyLogWriter
from harness.proxy_records import load_log
from harness.view.calls import call_detail, call_index
from tsagent_plugins.metrics import all_extractors
from tsagent_plugins.metrics.shell import _bashlex_pipelines

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metrics import build_episode, floor_cpu  # noqa: E402 - the stress episode of benchmarks/metrics.py

GOAL_BYTES = 500_000
GOAL_RATIO = 1.5


def extract(artifacts, trajectory: dict) -> tuple[float, dict]:
    """CPU s of the whole extractor set on a fresh copy of the episode, and its row."""
    episode = dataclasses.replace(artifacts, trajectory=trajectory)  # fresh: the log parsed anew
    _bashlex_pipelines.cache_clear()
    start = time.process_time()
    row: dict = {}
    for extractor in all_extractors():
        row.update(extractor.extract(episode))
    return time.process_time() - start, row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        artifacts = build_episode(folder, args.tokens)
        records = [json.loads(line) for line in (folder / "proxy.jsonl").read_text().splitlines()]
        timings = {}
        for name in ("proxy.jsonl.zst", "proxy.jsonl"):
            writer = ProxyLogWriter(folder / "written" / name)
            start = time.process_time()
            for record in records:
                writer.write(record)
            writer.close()
            timings[name] = time.process_time() - start
        n_records = len(records)
        del records  # the timings below run without them (a collector walking them costs every round)
        gc.collect()
        plain, compressed = folder / "written" / "proxy.jsonl", folder / "written" / "proxy.jsonl.zst"
        artifacts = dataclasses.replace(artifacts, proxy_log=plain)
        raw, size = plain.stat().st_size, compressed.stat().st_size
        whole = len(zstandard.ZstdCompressor(level=3).compress(plain.read_bytes()))
        gz = len(gzip.compress(plain.read_bytes(), compresslevel=6))
        print(f"log: {n_records} records, plain {raw / 1e6:.1f} MB (benchmarks/metrics.py's file, non-ASCII escaped: "
              f"{(folder / 'proxy.jsonl').stat().st_size / 1e6:.1f} MB); as the proxy writes it "
              f"(zstd {logfile.LEVEL}, a block flushed per record) {size / 1e3:.0f} kB, {raw / size:.0f}x smaller "
              f"(goal <= {GOAL_BYTES / 1e3:.0f} kB)")
        print(f"  for reference: zstd -3 in one go {whole / 1e3:.0f} kB; gzip -6 {gz / 1e6:.1f} MB")
        print(f"  writing: {timings['proxy.jsonl.zst']:.2f} s CPU compressed, {timings['proxy.jsonl']:.2f} s "
              f"plain ({timings['proxy.jsonl.zst'] / (raw / 1e6) * 1e3:.1f} ms per MB of records); a writer's "
              f"compression context {logfile.writer_memory() / 2**20:.1f} MiB (zstd's estimate) and its window")
        failed |= size > GOAL_BYTES

        # -- the same records, the same values -------------------------------------------------------------------
        same_records = load_log(plain) == load_log(compressed)
        zst_artifacts = dataclasses.replace(artifacts, proxy_log=compressed)
        _, plain_row = extract(artifacts, json.loads((folder / "trajectory.json").read_text()))
        _, zst_row = extract(zst_artifacts, json.loads((folder / "trajectory.json").read_text()))
        no_trajectory = [extract(a, None)[1] for a in (artifacts, zst_artifacts)]
        (folder / "calls" / "a").mkdir(parents=True)
        (folder / "calls" / "b").mkdir()
        os.link(plain, folder / "calls" / "a" / "proxy.jsonl")
        os.link(compressed, folder / "calls" / "b" / "proxy.jsonl.zst")
        start = time.perf_counter()
        calls_plain = call_index(folder / "calls" / "a")
        index_plain = time.perf_counter() - start
        start = time.perf_counter()
        calls_zst = call_index(folder / "calls" / "b")
        index_zst = time.perf_counter() - start
        start = time.perf_counter()
        last_plain = call_detail(calls_plain[-1])
        detail_plain = time.perf_counter() - start
        start = time.perf_counter()
        last_zst = call_detail(calls_zst[-1])
        detail_zst = time.perf_counter() - start
        same_calls = [dataclasses.replace(c, log=None) for c in calls_plain] == \
            [dataclasses.replace(c, log=None) for c in calls_zst] and last_plain == last_zst
        same = same_records and plain_row == zst_row and no_trajectory[0] == no_trajectory[1] and same_calls
        print(f"values: records {'identical' if same_records else 'DIFFER'}; extractor rows (with and without a "
              f"trajectory) {'identical' if plain_row == zst_row and no_trajectory[0] == no_trajectory[1] else 'DIFFER'}; "
              f"viewer calls {'identical' if same_calls else 'DIFFER'}")
        print(f"viewer: call index {index_zst:.2f} s (plain {index_plain:.2f} s); the last call's detail "
              f"{detail_zst * 1e3:.0f} ms (plain {detail_plain * 1e3:.0f} ms)")
        failed |= not same

        # -- the extractor set on the compressed log against its floor ---------------------------------------------
        del last_plain, last_zst, calls_plain, calls_zst, plain_row, zst_row, no_trajectory
        gc.collect()
        floors, ours, plain_cpu = [], [], []
        for _ in range(args.repeat):
            trajectory = json.loads((folder / "trajectory.json").read_text())
            floors.append(floor_cpu(compressed, trajectory))
            ours.append(extract(zst_artifacts, trajectory)[0])
            plain_cpu.append(extract(artifacts, json.loads((folder / "trajectory.json").read_text()))[0])
    floor, best = min(floors), min(ours)
    ratio = best / floor
    print(f"floor (tiktoken encode + decompress + json.loads of every line): {floor:.3f} s CPU")
    print(f"extractor set on the compressed log: {best:.3f} s CPU (on the plain log: {min(plain_cpu):.3f} s)")
    print(f"ratio {ratio:.2f}x (goal <= {GOAL_RATIO}x; best of {args.repeat}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    failed |= ratio > GOAL_RATIO
    print("verdict:", "MISSED" if failed else "within goal")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

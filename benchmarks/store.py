"""What a run folder keeps on disk, against what is new in each episode, with every cache deleted.

Runs four kinds of episode offline, each in its own run, with ``HARNESS_CACHE_DIR`` in a fresh folder:

- ``direct``: a TraceBench baseline episode with direct answers (``tasks/tracebench/balldrop-low-direct.yaml``,
  Euclidean 1-NN); new in it: its row, score and ``results.json``; goal: the episode folder ≤ 0.2 MB;
- ``programmatic``: the same baseline writing ``rule.py`` (``balldrop-low-programmatic.yaml``); new: ``rule.py``
  and ``score.json``; goal: the folder ≤ those + 0.2 MB;
- ``stress``: a model-calling episode (the ``proxy-probe`` agent, scripted) whose proxy log is replaced by the
  200k-token stress episode of ``benchmarks/metrics.py`` written as the proxy writes it (every request carries the
  conversation so far; every reply a streamed ``text/event-stream`` body, as real replies are); goal: the log
  ≤ 0.5 MB;
- ``research``: a Dr-CiK research episode (``tasks/drcik/research-sample.yaml``, the retrieval agent, scripted);
  new: what the agent wrote (``workspace/`` outputs, ``home/``, the trajectory and the proxy log); goal: the
  folder ≤ that + 0.5 MB.

Each run is made once in the old format (``--keep-inputs``, proxy logs written out plain, as runs were before
inputs were kept by reference and logs compressed) and converted with ``harness runs compact`` (which must give
the same report tables); then every cache is deleted and the script prints, per episode, the bytes the
compacted folder needs beside what is new in it, and the peak memory (max RSS of the child) of
``harness view --bundle`` and ``harness report`` on the compacted runs against the old ones (goal ≤ 1.1×; the
compacted views rebuild the inputs they show, one sample at a time).

    python benchmarks/store.py [--keep DIR]

Exits 1 when a goal is missed or a compacted run's report differs from the old one's.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

MB = 1_000_000
GOAL_DIRECT = 0.2 * MB
GOAL_PROGRAMMATIC_EXTRA = 0.2 * MB
GOAL_STRESS_LOG = 0.5 * MB
GOAL_RESEARCH_EXTRA = 0.5 * MB
GOAL_MEMORY = 1.1


def harness(args: list[str], env: dict[str, str], quiet: bool = True) -> tuple[int, float]:
    """Run ``harness ARGS`` in a child; returns (exit code, the child's peak RSS in MB)."""
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL if quiet else None, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else ""
    if proc.returncode not in (0,):
        print(f"harness {' '.join(args)} exited {proc.returncode}:\n{err[-2000:]}", file=sys.stderr)
    return proc.returncode, usage.ru_maxrss / 1024


def size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (hard links counted once per file, as a copy would carry)."""
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink())


def episode_dir(run: Path) -> Path:
    folders = sorted((run / "episodes").iterdir())
    if len(folders) != 1:
        raise SystemExit(f"{run}: expected one episode folder, found {len(folders)}")
    return folders[0]


def old_format(run: Path) -> None:
    """Write ``run`` back as runs were written before inputs were kept by reference and logs compressed: every
    compressed file (proxy logs, the agents' logs under ``home/``) plain, no inputs record, and a direct
    TraceBench episode's test samples copied into ``key/test_samples`` again."""
    import zstandard

    from harness.inputs import INPUTS_FILE

    for path in list(run.rglob("*.zst")):
        if path.name == INPUTS_FILE:
            path.unlink()
            continue
        with path.open("rb") as src, path.with_suffix("").open("wb") as dst:
            reader = zstandard.ZstdDecompressor().stream_reader(src, read_across_frames=True)
            shutil.copyfileobj(reader, dst)
        path.unlink()
    for episode in (run / "episodes").iterdir():
        key, test = episode / "key", episode / "workspace" / "test_samples"
        if (key / "key.json").is_file() and test.is_dir() and not (key / "test_samples").exists():
            shutil.copytree(test, key / "test_samples")


def stress_log(episode: Path, tokens: int) -> None:
    """Replace the episode's proxy log and trajectory by the stress episode's, replies streamed."""
    from harness.proxy.log import ProxyLogWriter
    from metrics import build_episode

    with tempfile.TemporaryDirectory() as tmp:
        artifacts = build_episode(Path(tmp), tokens)
        records = [json.loads(line) for line in (Path(tmp) / "proxy.jsonl").read_text().splitlines()]
        requests = {r["seq"]: r for r in records if r["type"] == "request"}
        for old in episode.glob("proxy.jsonl*"):
            old.unlink()
        writer = ProxyLogWriter(episode / "proxy.jsonl.zst")
        try:
            for record in records:
                if record["type"] == "response":
                    record.update(stream=True, content_type="text/event-stream",
                                  body=sse_body(requests.get(record["seq"] + 1)), body_encoding="text")
                writer.write(record)
        finally:
            writer.close()
        (episode / "trajectory.json").write_text(json.dumps(artifacts.trajectory))


def sse_body(following: dict | None) -> str:
    """The Anthropic event stream of the assistant turn that the next request repeats (one text delta per word)."""
    content = []
    if following is not None:
        content = following["body"]["messages"][-2]["content"]
    events = [("message_start", {"type": "message_start", "message": {"id": "msg", "type": "message",
                                                                        "role": "assistant", "content": [],
                                                                        "model": "m"}})]
    for index, block in enumerate(content):
        if block.get("type") == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            for word in block["text"].split(" "):
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": word + " "}}))
        elif block.get("type") == "tool_use":
            events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": {
                "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)


CASES = {
    "direct": ["--task", "tasks/tracebench/balldrop-low-direct.yaml"],
    "programmatic": ["--task", "tasks/tracebench/balldrop-low-programmatic.yaml"],
    "stress": ["--task", "tasks/tracebench/balldrop-low-direct.yaml", "--agent", "proxy-probe",
               "--set", "n_test=2", "--set", "examples_per_class=1",
               "--model-backend", "scripted", "--script", "{script}"],
    "research": ["--task", "tasks/drcik/research-sample.yaml", "--agent", "retrieval-gemini-3-flash",
                 "--set", "episodes=[task_42]",
                 "--model-backend", "scripted", "--script", "examples/scripts/retrieval-drcik.yaml"],
}


def new_bytes(case: str, episode: Path) -> int:
    """What is new in the episode: what no rebuild can give back."""
    ws = episode / "workspace"
    if case == "direct":
        return sum(size(p) for p in (episode / "row.json", episode / "score.json", ws / "results.json") if p.exists())
    if case == "programmatic":
        return size(ws / "rule.py") + size(episode / "score.json")
    if case == "stress":
        return max(size(p) for p in episode.glob("proxy.jsonl*"))
    written = [ws / name for name in ("report.md", "evidence.json", "notes.md")]
    written += [episode / "home", episode / "trajectory.json", *episode.glob("proxy.jsonl*")]
    return sum(size(p) for p in written if p.exists())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="keep the runs in this folder (default: a temporary one)")
    parser.add_argument("--tokens", type=int, default=200_000, help="the stress episode's tokens")
    parser.add_argument("--write-stress", type=Path, help=argparse.SUPPRESS)  # the child that writes the log
    args = parser.parse_args(argv)
    if args.write_stress:
        stress_log(args.write_stress, args.tokens)
        return 0
    base = args.keep or Path(tempfile.mkdtemp(prefix="harness-store-"))
    base.mkdir(parents=True, exist_ok=True)
    cache = base / "cache"
    env = {**os.environ, "HARNESS_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    print(f"load average {os.getloadavg()[0]:.2f}; runs under {base}", flush=True)
    failed: list[str] = []
    rows = []
    for case, spec in CASES.items():
        old, new = base / f"{case}-old", base / f"{case}-new"
        for folder in (old, new):
            shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        script = base / "probe-script.yaml"
        script.write_text(json.dumps({"turns": [{"text": "ok", "usage": {"prompt_tokens": 1000, "cached_tokens": 0,
                                                                         "completion_tokens": 100}}] * 3}))
        spec = [arg.replace("{script}", str(script)) for arg in spec]
        code, _ = harness(["run", *spec, "--out", str(old), "--keep-inputs"], env)
        if code not in (0, 3) or not (old / "results.parquet").exists():
            failed.append(f"{case}: the run failed (exit {code})")
            continue
        if case == "stress":  # in a child: this process stays small, so the children it forks measure their own
            subprocess.run([sys.executable, __file__, "--write-stress", str(episode_dir(old)), "--tokens",
                            str(args.tokens)], check=True, stdout=subprocess.DEVNULL)
        old_format(old)
        shutil.copytree(old, new, symlinks=True)
        code, _ = harness(["runs", "compact", str(new)], env)
        if code != 0:
            failed.append(f"{case}: harness runs compact exited {code}")
            continue
        shutil.rmtree(cache, ignore_errors=True)  # every cache deleted from here on
        reports = {}
        memory = {}
        for fmt, run in (("old", old), ("new", new)):
            out = base / f"{case}-{fmt}-report"
            shutil.rmtree(out, ignore_errors=True)
            code, rss = harness(["report", str(run), "--out", str(out), "--no-figures", "--format", "json"], env)
            memory[("report", fmt)] = rss
            reports[fmt] = {p.name: p.read_text() for p in sorted((out / "tables").glob("*.csv"))} \
                if (out / "tables").is_dir() else {}
            bundle = base / f"{case}-{fmt}-bundle"
            shutil.rmtree(bundle, ignore_errors=True)
            code_view, rss = harness(["view", str(run), "--bundle", str(bundle)], env)
            memory[("view", fmt)] = rss
            if code or code_view:
                failed.append(f"{case}: report/view of the {fmt} run exited {code}/{code_view}")
        if reports["old"] != reports["new"]:
            failed.append(f"{case}: the compacted run's report tables differ from the old run's")
        episode = episode_dir(new)
        kept, fresh = size(episode), new_bytes(case, episode)
        if case == "direct":
            goal, ok = f"≤ {GOAL_DIRECT / MB:.1f} MB", kept <= GOAL_DIRECT
        elif case == "programmatic":
            goal, ok = "≤ new + 0.2 MB", kept <= fresh + GOAL_PROGRAMMATIC_EXTRA
        elif case == "stress":
            goal, ok = f"log ≤ {GOAL_STRESS_LOG / MB:.1f} MB", fresh <= GOAL_STRESS_LOG
        else:
            goal, ok = "≤ new + 0.5 MB", kept <= fresh + GOAL_RESEARCH_EXTRA
        ratios = {what: memory[(what, "new")] / memory[(what, "old")] for what in ("view", "report")}
        for what, ratio in ratios.items():
            if ratio > GOAL_MEMORY:
                failed.append(f"{case}: {what} peak memory {ratio:.2f}x the old format's (goal {GOAL_MEMORY}x)")
        if not ok:
            failed.append(f"{case}: {kept / MB:.3f} MB kept, goal {goal}")
        rows.append((case, size(episode_dir(old)), kept, fresh, goal, ok, memory, ratios,
                     time.perf_counter() - started))
    print(f"\n{'episode':<13} {'old MB':>8} {'kept MB':>8} {'new MB':>8} {'kept/new':>8}  goal")
    for case, old_bytes, kept, fresh, goal, ok, _, _, _ in rows:
        print(f"{case:<13} {old_bytes / MB:>8.3f} {kept / MB:>8.3f} {fresh / MB:>8.3f} "
              f"{kept / max(fresh, 1):>8.2f}  {goal} {'met' if ok else 'MISSED'}")
    print(f"\n{'episode':<13} {'view old':>9} {'view new':>9} {'ratio':>6} {'report old':>11} {'report new':>11} "
          f"{'ratio':>6}  (peak RSS, MB; goal ≤ {GOAL_MEMORY}x)")
    for case, _, _, _, _, _, memory, ratios, seconds in rows:
        print(f"{case:<13} {memory[('view', 'old')]:>9.0f} {memory[('view', 'new')]:>9.0f} {ratios['view']:>6.2f} "
              f"{memory[('report', 'old')]:>11.0f} {memory[('report', 'new')]:>11.0f} {ratios['report']:>6.2f}"
              f"  ({seconds:.0f} s)")
    print(f"\nload average {os.getloadavg()[0]:.2f}")
    for line in failed:
        print("MISSED: " + line)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""``harness dr-generate`` end to end on the scripted model: the sample spec's output is a release the drcik
loader reads, with the pipeline's rules kept (five distractors per subtype, off-window dates outside the
window, overlapping supporting documents, the window shift); a SIGKILLed generation resumed gives the same
output as an uninterrupted one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from harness.cli import cli
from harness.wire import read_log
from tests.support.paths import REPO
from tsagent_plugins.tasks.drcik.generation import caf, checks, window
from tsagent_plugins.tasks.drcik.generation.pipeline import STAGES
from tsagent_plugins.tasks.drcik.dataset.loader import SAMPLE_DIR, load_tasks

SPEC = REPO / "tasks" / "drcik" / "generate-sample.yaml"
SCRIPT = REPO / "tests" / "fixtures" / "scripts" / "dr_generate" / "sample.yaml"


def generate(out: Path, *extra: str):
    return CliRunner().invoke(cli, ["dr-generate", str(SPEC), "--out", str(out), "--model-backend", "scripted",
                                    *extra])


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "out"
    result = generate(out, "--jobs", "3")
    assert result.exit_code == 0, result.output + str(result.exception)
    assert "wrote 4 task(s)" in result.output and "0 unit(s) flagged" in result.output
    (out.parent / "cli_output.txt").write_text(result.output)
    return out


def tasks_json(out):
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "tasks").glob("*.json"))}


def test_every_step_and_judge_has_accepted_attempts(generated):
    summary = json.loads((generated / "generation" / "summary.json").read_text())
    assert list(summary["stages"]) == list(STAGES.values())
    for name, stage in summary["stages"].items():
        assert stage["accepted"] >= 1 and stage["first_pass_rate"] == 1.0 and stage["flagged"] == [], name
        assert stage["tokens"]["generator"] > 0 and stage["cost_usd"]["generator"] > 0
    assert sorted(summary["judges"]) == ["judge_chain", "judge_distractor", "judge_entity", "judge_evidence",
                                         "judge_supporting"]
    assert all(set(j["verdicts"]) == {"correct"} for j in summary["judges"].values())
    assert summary["judges"]["judge_entity"]["calls"] == 4        # one verdict per task's slice
    assert summary["judges"]["judge_distractor"]["calls"] == 4 * 5  # per task x subtype
    assert summary["judges"]["judge_evidence"]["model"] == "openai/gpt-5.4-nano"
    assert summary["output"] == {"written": ["caf_pump_flow", "caf_pump_power", "caf_solar_ghi", "caf_store_sales"],
                                 "incomplete": {}, "held_back": {}}


def test_the_scripted_cost_is_marked_in_the_last_line_and_the_summary(generated):
    summary = json.loads((generated / "generation" / "summary.json").read_text())
    totals = summary["totals"]
    assert totals["cost_usd"] > 0 and totals["offline_backends"] == ["scripted"]
    assert set(totals["model_backends"].values()) == {"scripted"}
    assert totals["cost_note"] == ("cost_usd is the profiles' prices for the tokens an offline model backend "
                                   "answered with; no money was spent (scripted)")
    last = (generated.parent / "cli_output.txt").read_text().strip().splitlines()[-1]
    assert f"; ${totals['cost_usd']:.4f} (scripted): no money spent (" in last, last


def test_every_attempt_records_prompt_hash_model_verdict_tokens_and_cost(generated):
    line = (generated / "generation" / STAGES[4] / "caf_solar_ghi" / "attempts.jsonl").read_text().splitlines()[0]
    attempt = json.loads(line)
    gen, judge = attempt["generator"][0], attempt["judge"][0]
    assert gen["prompt"] == "evidence_decomposition" and len(gen["prompt_sha256"]) == 64
    assert gen["model"] == "google/gemini-3-flash-preview" and json.loads(gen["response"])["extracted_events"]
    assert judge["verdict"] == "correct" and judge["model"] == "openai/gpt-5.4-nano" and judge["tokens"] > 0
    assert attempt["cost_usd"] == pytest.approx(gen["cost_usd"] + judge["cost_usd"]) and attempt["status"] == "accepted"
    logs = sorted((generated / "generation" / "proxy" / "dr-generator-gemini-3-flash").glob("*/proxy.jsonl.zst"))
    request = read_log(logs[0])[0]
    assert request["type"] == "request" and request["body"]["seed"] == 0  # the spec's seed on every request
    assert request["body"]["model"] == "google/gemini-3-flash-preview"


def test_the_output_loads_like_the_release(generated):
    sample_keys = set(json.loads(next((SAMPLE_DIR / "tasks").glob("*.json")).read_text()))
    for tid, task in tasks_json(generated).items():
        assert sample_keys <= set(task), tid
        assert {d["role"] for d in task["documents"]} == {"supporting", "distractor"}
        assert all((generated / d["path"]).read_text().rstrip() == d["content"].rstrip() for d in task["documents"])
        assert {e["role"] for e in task["annotations"]["gt_evidence"]} == {"retrospective", "prospective"}
    loaded = load_tasks(generated)
    assert [t.benchmark_id for t in loaded] == ["caf_pump_flow", "caf_pump_power", "caf_solar_ghi", "caf_store_sales"]
    manifest = json.loads((generated / "benchmark_manifest.json").read_text())
    assert manifest["distractor_count"] == 5 and manifest["reasoning_hops"] == 4 and len(manifest["tasks"]) == 4


def test_five_distractors_per_subtype(generated):
    for tid, task in tasks_json(generated).items():
        subtypes = [d["subtype"] for d in task["documents"] if d["role"] == "distractor"]
        assert {s: subtypes.count(s) for s in set(subtypes)} == {
            "confounder": 5, "noisy": 5, "timeseries": 5, "profile": 5, "temporal": 5}, tid


def test_off_window_distractors_name_dates_outside_the_window(generated):
    for tid, task in tasks_json(generated).items():
        stamps = task["series"]["history_timestamps"] + task["series"]["future_timestamps"]
        start, end = (datetime.strptime(s, "%Y-%m-%d %H:%M:%S") for s in (stamps[0], stamps[-1]))
        for doc in (d for d in task["documents"] if d["subtype"] == "temporal"):
            dates = window.dates_in(doc["content"])
            assert dates and all(not start.date() <= d.date() <= end.date() for d in dates), (tid, dates)


def test_consecutive_supporting_documents_share_exactly_one_chain_node(generated):
    for tid in ("caf_pump_flow", "caf_store_sales"):
        chain = json.loads((generated / "generation" / STAGES[5] / tid / "result.json").read_text())["output"]
        nodes = {c["context_id"]: c["context"] for c in chain["contexts"]}
        order = [c["context_id"] for c in chain["contexts"]]
        covered = []
        for k in range(1, len(order)):   # bundle 0 is the background; then one per adjacent pair
            unit = generated / "generation" / STAGES[6] / f"{tid}__{k:02d}" / "result.json"
            text = " ".join(json.loads(unit.read_text())["output"]["provides"])
            covered.append({r for r, body in nodes.items() if body in text})
        assert len(covered) == len(order) - 1 == len(checks.overlapping_assignment(order))
        assert all(len(a & b) == 1 for a, b in zip(covered, covered[1:])), covered


def test_the_window_shift_moves_series_and_context_by_one_offset_and_keeps_values(generated):
    originals = {t.task_id: t for t in caf.read_folder(REPO / "tasks" / "drcik" / "caf-sample")}
    for tid, task in tasks_json(generated).items():
        before = originals[tid]
        assert task["series"]["history_values"] == before.series.history_values
        assert task["series"]["future_values"] == before.series.future_values
        offset = timedelta(weeks=156) if before.origin == "real" else timedelta(0)
        got = [datetime.strptime(s, "%Y-%m-%d %H:%M:%S") for s in task["series"]["history_timestamps"]]
        assert [g - b for g, b in zip(got, before.series.datetimes())] == [offset] * len(got)
        old, new = window.dates_in(before.context.text()), window.dates_in(task["generation"]["rewritten_context"])
        assert len(old) == len(new) >= 1 and [n - o for o, n in zip(sorted(old), sorted(new))] == [offset] * len(old)
        kept = json.loads((generated / "generation" / "anonymisation" / f"{tid}.json").read_text())
        assert kept["original_context"] == before.context.model_dump(mode="json")
        assert "original_context" not in task["generation"]  # the real names stay out of the export


def test_the_drcik_template_runs_the_output(generated, tmp_path):
    result = CliRunner().invoke(cli, ["run", "--task", str(REPO / "tasks" / "drcik" / "sample-statistical.yaml"),
                                      "--set", f"tasks={generated}", "--set", "forecasters=[naive]",
                                      "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output + str(result.exception)
    rows = [json.loads(p.read_text()) for p in (tmp_path / "run" / "episodes").glob("*/row.json")]
    assert len(rows) == 8 and {r["status"] for r in rows} == {"ok"}
    assert {r["benchmark_id"] for r in rows} == {"caf_pump_flow", "caf_pump_power", "caf_solar_ghi", "caf_store_sales"}


def test_dry_run_prints_calls_and_cost_and_writes_nothing(tmp_path, generated):
    """The first-pass estimate: 261 calls for the four sample tasks, within 5% of what the run made."""
    from tsagent_plugins.tasks.drcik.generation.estimate import expected_calls
    from tsagent_plugins.tasks.drcik.generation.spec import load_spec

    result = generate(tmp_path / "dry", "--dry-run")
    assert result.exit_code == 0, result.output + str(result.exception)
    assert not (tmp_path / "dry").exists()
    expected = sum(c for *_, c in expected_calls(load_spec(SPEC), 4))
    assert expected == 261 and "261" in result.output and "0.9297" in result.output
    made = sum(len(json.loads(x)["generator"]) + len(json.loads(x)["judge"])
               for f in (generated / "generation").glob("step*/*/attempts.jsonl") for x in f.read_text().splitlines())
    assert made == 259 and abs(expected - made) / made < 0.05  # step 3 asks twice a task: context, objective


def test_an_existing_output_needs_resume(generated):
    result = generate(generated)
    assert result.exit_code != 0 and "pass --resume" in result.output


def slow_script(tmp_path: Path) -> Path:
    data = yaml.safe_load(SCRIPT.read_text())
    for rule in data["match"]:
        rule["reply"]["delay"] = 0.02
    path = tmp_path / "slow.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def comparable(out: Path) -> dict[str, object]:
    """``generation/`` without timestamps and durations (and without the proxy logs, which are timed)."""
    files = {}
    for path in sorted((out / "generation").rglob("*")):
        if path.is_dir() or "proxy" in path.relative_to(out).parts:
            continue
        rel = str(path.relative_to(out))
        if path.suffix == ".jsonl":
            files[rel] = [{k: v for k, v in json.loads(x).items() if k not in ("started_at", "duration_s")}
                          for x in path.read_text().splitlines()]
        else:
            files[rel] = json.loads(path.read_text())
    return files


def release_bytes(out: Path) -> dict[str, bytes]:
    paths = [*sorted((out / "tasks").glob("*")), *sorted((out / "documents").glob("*")),
             out / "benchmark_manifest.json"]
    return {str(p.relative_to(out)): p.read_bytes() for p in paths}


@pytest.mark.slow
def test_a_sigkilled_generation_resumed_equals_an_uninterrupted_one(tmp_path, generated):
    script = slow_script(tmp_path)
    args = [sys.executable, "-m", "harness", "dr-generate", str(SPEC), "--model-backend", "scripted",
            "--script", str(script), "--jobs", "2"]
    out = tmp_path / "killed"
    proc = subprocess.Popen([*args, "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=REPO)
    stage6 = out / "generation" / STAGES[6]
    deadline = time.time() + 600  # generous: a loaded machine runs the first five stages slowly
    while time.time() < deadline and len(list(stage6.glob("*/result.json"))) < 5 and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert len(list(stage6.glob("*/result.json"))) >= 5, "the kill came before stage 6 had five results"
    assert not (out / "tasks").exists(), "killed before the output was written"
    kept = {p: p.read_bytes() for p in (out / "generation").glob("step[1-5]*/*/result.json")}
    assert len(kept) == 1 + 4 + 4 + 4 + 4
    done = subprocess.run([*args, "--out", str(out), "--resume"], capture_output=True, text=True, cwd=REPO,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert all(p.read_bytes() == b for p, b in kept.items()), "an accepted unit was redone"
    assert release_bytes(out) == release_bytes(generated)
    assert comparable(out) == comparable(generated)


def _local_sandbox() -> str | None:
    from harness.sandbox import choose_backend

    try:
        return choose_backend("auto", needs_image=False).name
    except Exception:  # noqa: BLE001
        return None


@pytest.mark.slow
@pytest.mark.skipif(_local_sandbox() in (None, "none"), reason="no local sandbox backend here")
def test_a_research_episode_runs_on_the_output(generated, tmp_path):
    """The retrieval DR agent (scripted) searches the generated corpus and cites its documents."""
    result = CliRunner().invoke(cli, [
        "run", "--task", str(REPO / "tasks" / "drcik" / "research-sample.yaml"), "--set", f"tasks={generated}",
        "--set", "metadata={method: gen, type: agentic, base_model: scripted}",
        "--agent", "retrieval-gemini-3-flash", "--model-backend", "scripted",
        "--script", str(REPO / "examples" / "scripts" / "retrieval-drcik.yaml"), "--out", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output + str(result.exception)
    rows = [json.loads(p.read_text()) for p in (tmp_path / "run" / "episodes").glob("*/row.json")]
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}, [r.get("error") for r in rows]
    assert {r["benchmark_id"] for r in rows} == {"caf_pump_flow", "caf_pump_power", "caf_solar_ghi", "caf_store_sales"}


def test_max_cost_stops_the_generation_and_resume_finishes_it_through_the_shared_limiter(tmp_path, monkeypatch):
    """--max-cost is shared by the generator and judge clients: the generation stops once it is spent (no
    release written) and --resume finishes it; every request waited on the one limiter of the scripted
    backend that --settings gives (shared by the three profiles' proxies)."""
    from harness.limits import RateLimiter

    limiters = []
    original = RateLimiter.try_acquire

    def counting(self, key):
        wait = original(self, key)
        if wait == 0:
            limiters.append(id(self))
        return wait

    monkeypatch.setattr(RateLimiter, "try_acquire", counting)
    (tmp_path / "settings.yaml").write_text("rate_limits: {scripted: {requests_per_min: 100000}}\n")
    out = tmp_path / "out"
    stopped = generate(out, "--settings", str(tmp_path / "settings.yaml"), "--max-cost", "0.02", "--jobs", "1")
    # a HarnessError: `harness` prints it as one "error:" line, exit 2 (CliRunner hands the exception back)
    assert stopped.exit_code == 1 and "max cost $0.02 reached" in str(stopped.exception)
    assert not (out / "tasks").exists() and list((out / "generation").glob("step1*/*/result.json"))
    first = list(limiters)
    limiters.clear()
    finished = generate(out, "--settings", str(tmp_path / "settings.yaml"), "--resume")
    assert finished.exit_code == 0, finished.output + str(finished.exception)
    assert len(list((out / "tasks").glob("*.json"))) == 4
    made = sum(len(json.loads(x)["generator"]) + len(json.loads(x)["judge"])
               for f in (out / "generation").glob("step*/*/attempts.jsonl") for x in f.read_text().splitlines())
    assert made == 259 and len(first) + len(limiters) >= made
    assert len(set(first)) == 1 and len(set(limiters)) == 1  # one limiter per generation, shared by its clients

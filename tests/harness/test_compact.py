"""``harness runs compact`` (harness.compact) on run folders in an older harness's storage: a direct TraceBench
run (Codex's recorded episode played back through the proxy, an agent that edits one input and deletes
another, beside the euclidean-1nn baseline and its privileged variant), a programmatic one (a rule.py run on
held-out samples) and a Dr-CiK run of an LLM forecaster (a proxy log per model call under ``proxy/``), all
made by today's harness with every input kept, then written back as an older harness left them
(:func:`tests.support.old_runs.to_old_format`: plain logs, no inputs record, test samples copied into key/).
Compacted, each reads exactly as before in every command: report tables, every bundle page, the live
viewer's model-call pages, the Inspect export, the trajectories converted again from the home logs and the
metric values rescoring computes again.  A
compaction stopped mid-way leaves a run that reads the same, and a second one finishes it; compacting
refuses while another process holds the run's lock; a compact run has nothing to do."""

from __future__ import annotations

import errno
import os

import pytest
import yaml

from harness import inputs, runlock
from harness.compact import CompactError, compact, proxy_logs, tree_bytes
from harness.store import finished_episodes
from harness.wire import proxy_log, read_log
from tests.support.old_runs import copy_run, readings, rescored_rows, to_old_format
from tests.support.paths import REPO
from tests.support.shell_run import harness_cli, profile, replay_agent

pytestmark = pytest.mark.slow

SCRIPT = REPO / "examples" / "scripts" / "codex-balldrop.yaml"
LLM_DP = REPO / "tasks" / "drcik" / "sample-llm-dp-scripted.yaml"
(ROLLOUT,) = (REPO / "tests" / "fixtures" / "native_logs" / "codex" / "direct" / "home").glob("**/rollout-*.jsonl")
SPEC = {"name": "balldrop-small", "template": "tracebench",
        "params": {"simulator": "balldrop", "noise": "low", "context": True, "examples_per_class": 1,
                   "submission": "direct", "n_test": 4, "seed": 0, "pool_seed": 0, "pool_per_class": 25,
                   "heldout_per_class": 2}}


def _run(*args, env):
    proc = harness_cli("run", *args, env=env)
    out, err = proc.communicate(timeout=900)
    assert proc.returncode == 0, (out + err)[-3000:]


@pytest.fixture(scope="module")
def old_runs(tmp_path_factory):
    """{"tracebench": run, "drcik": run}, made once by today's harness and written back in the old storage."""
    root = tmp_path_factory.mktemp("compact")
    env = {"HARNESS_CACHE_DIR": str(root / "cache")}
    (root / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    (root / "mix.yaml").write_text(yaml.safe_dump({
        "name": "compact-mix", "tasks": ["spec.yaml"], "seeds": [0],
        "agents": [str(profile(root, "codex-replay")), "euclidean-1nn-privileged", "euclidean-1nn"]}))
    _run("--experiment", root / "mix.yaml", "--sandbox", "none", "--model-backend", "scripted", "--script", SCRIPT,
         "--keep-inputs", "--out", root / "old" / "tracebench", env=env)
    (root / "rule.yaml").write_text(yaml.safe_dump({**SPEC, "name": "balldrop-small-rule",
                                                    "params": {**SPEC["params"], "submission": "programmatic"}}))
    _run("--task", root / "rule.yaml", "--agent", "euclidean-1nn", "--sandbox", "none", "--keep-inputs",
         "--out", root / "old" / "programmatic", env=env)
    _run("--task", LLM_DP, "--agent", REPO / "agent_profiles" / "dp-qwen3.5-4b.yaml", "--set", "forecasters=[llm-dp]",
         "--set", "contexts=[no-context]", "--set", "tasks=sample", "--out", root / "old" / "drcik", env=env)
    runs = {name: root / "old" / name for name in ("tracebench", "programmatic", "drcik")}
    written = {name: to_old_format(run) for name, run in runs.items()}
    # what an older harness left: plain proxy logs (the agent's, and one per model call of the forecaster), the
    # Codex rollout plain in the agent's home, every input in full (direct episodes: test samples in key/ too)
    assert sorted(p.name for p in written["tracebench"]) == ["proxy.jsonl", ROLLOUT.name]
    assert [p.name for p in written["drcik"]] == ["proxy.jsonl"] * 3 and written["programmatic"] == []
    assert all(p.parent.parent.name == "proxy" for p in written["drcik"])
    assert len(list(runs["tracebench"].glob("episodes/*/key/test_samples/*.parquet"))) == 3 * 4 - 1  # one edited
    assert not list(runs["tracebench"].parent.rglob("inputs.json*"))
    return runs


@pytest.fixture
def agents():
    from tsagent_plugins.agents.terminal.codex import Codex

    return {"codex-replay": replay_agent(Codex, "codex")}


@pytest.fixture(autouse=True)
def cache(old_runs, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE_DIR", str(old_runs["tracebench"].parent.parent / "cache"))


#: kind -> files (for inputs: episodes) each run's compaction converts
CONVERTED = {"tracebench": {"proxy logs": 1, "home logs": 1, "inputs": 3}, "programmatic": {"inputs": 1},
             "drcik": {"proxy logs": 3}}


@pytest.mark.parametrize("name", ["tracebench", "programmatic", "drcik"])
def test_a_compacted_run_reads_as_the_original_in_every_command(old_runs, agents, tmp_path, name):
    original, compacted = copy_run(old_runs[name], tmp_path / "a"), copy_run(old_runs[name], tmp_path / "b")
    logs = proxy_logs(compacted)
    outcome = compact(compacted)
    kinds = outcome.by_kind()
    assert {kind: files for kind, (files, _, _) in kinds.items()} == CONVERTED[name]
    assert len(logs) == CONVERTED[name].get("proxy logs", 0)
    if name == "tracebench":  # the rollout (the other home files are small or binary)
        (rollout,) = compacted.glob("episodes/*/home/.codex/sessions/**/rollout-*.jsonl.zst")
        states = {}
        for folder, row in finished_episodes(compacted):
            for rel, entry in inputs.read(folder)["files"].items():
                states[row["agent"], entry["state"]] = states.get((row["agent"], entry["state"]), 0) + 1
        # the test sample the agent overwrote with another's bytes is kept (a fresh rebuild does not give
        # them, though the inputs cache holds a file of those values); every other input is dropped, the
        # test samples' copies in key/ included (the example the agent deleted was not there to record)
        # (4 test samples, their 4 copies in key/, 5 examples; the privileged baseline's 4 + 5 clean pairs)
        assert states == {("codex-replay", "edited"): 1, ("codex-replay", "by_reference"): 3 + 3 + 4,
                          ("euclidean-1nn", "by_reference"): 4 + 4 + 5,
                          ("euclidean-1nn-privileged", "by_reference"): 4 + 4 + 5 + 4 + 5}
        assert not list(compacted.glob("episodes/*/key/test_samples"))
        assert len(list(compacted.glob("episodes/*/workspace/test_samples/*"))) == 1
    for _, before, after in kinds.values():
        assert after < before / 2
    assert outcome.total_after == tree_bytes(compacted) < outcome.total_before == tree_bytes(original)
    assert proxy_logs(compacted) == [] and not list(compacted.rglob("*.tmp"))
    for log in logs:  # each log now compressed, the same records
        assert proxy_log(log.parent).name == "proxy.jsonl.zst"
        assert read_log(proxy_log(log.parent)) == read_log(original / log.relative_to(compacted))

    before = readings(original, tmp_path / "read-a", agents)
    after = readings(compacted, tmp_path / "read-b", agents)
    assert before["report"] and before["bundle"] and before["calls"] and before["export"]
    for what in before:
        assert after[what] == before[what], what
    if name == "tracebench":
        (trajectory,) = before["trajectories"].values()
        home = next(p for p in rollout.parents if p.name == "home")
        assert len(trajectory["steps"]) == 3
        assert trajectory["extra"]["native_logs"] == [rollout.relative_to(home).as_posix()[:-len(".zst")]]
    assert rescored_rows(compacted) == rescored_rows(original)


def test_a_compaction_stopped_mid_way_leaves_a_readable_run_and_a_second_one_finishes_it(old_runs, agents, tmp_path,
                                                                                         monkeypatch):
    original = copy_run(old_runs["drcik"], tmp_path / "a")
    run = copy_run(old_runs["drcik"], tmp_path / "b")
    logs = proxy_logs(run)
    replace, calls = os.replace, []

    def crash_after_the_first(src, dst):
        calls.append(dst)
        if len(calls) > 1:
            raise OSError(errno.EIO, "simulated crash")
        replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_after_the_first)
    with pytest.raises(CompactError) as stopped:
        compact(run)
    monkeypatch.setattr(os, "replace", replace)
    assert str(logs[1]) in str(stopped.value) and "simulated crash" in str(stopped.value)
    assert "run `harness runs compact" in str(stopped.value) and "1 file(s) converted before it" in str(stopped.value)
    assert proxy_logs(run) == logs[1:] and (logs[0].parent / "proxy.jsonl.zst").is_file()
    assert not list(run.rglob("*.tmp")) and runlock.holder(run) is None  # the lock was given back
    before = readings(original, tmp_path / "read-a", agents)
    assert readings(run, tmp_path / "read-mid", agents) == before

    # stopped once more, between the compressed file's rename and the plain one's removal: both are there
    unlink = os.unlink

    def crash_on_the_plain_log(path, *args, **kwargs):
        if str(path) == str(logs[1]):
            raise OSError(errno.EIO, "simulated crash")
        unlink(path, *args, **kwargs)

    monkeypatch.setattr(os, "unlink", crash_on_the_plain_log)
    with pytest.raises(CompactError, match="simulated crash"):
        compact(run)
    monkeypatch.setattr(os, "unlink", unlink)
    assert logs[1].is_file() and (logs[1].parent / "proxy.jsonl.zst").is_file()
    assert proxy_log(logs[1].parent).name == "proxy.jsonl.zst"  # readers take the compressed one: the same bytes
    assert readings(run, tmp_path / "read-both", agents) == before

    outcome = compact(run)
    assert [s.path for s in outcome.steps] == logs[1:] and proxy_logs(run) == []
    assert readings(run, tmp_path / "read-b", agents) == before


def test_compact_refuses_while_another_process_holds_the_runs_lock(old_runs, tmp_path):
    run = copy_run(old_runs["drcik"], tmp_path)
    logs = proxy_logs(run)
    with runlock.hold(run):
        with pytest.raises(runlock.RunLocked) as refused:
            compact(run)
        with pytest.raises(runlock.RunLocked):
            compact(run, dry_run=True)
    message = str(refused.value)
    assert message.startswith(f"{run}: cannot compact it while another process writes it (pid {os.getpid()}")
    assert "pass --wait" in message
    assert proxy_logs(run) == logs  # nothing was touched


def test_a_second_compaction_and_a_dry_run_change_nothing(old_runs, tmp_path):
    run = copy_run(old_runs["tracebench"], tmp_path)
    untouched = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()}
    planned = compact(run, dry_run=True)
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()} == untouched
    assert planned.total_after is None and {s.kind for s in planned.steps} == {"proxy logs", "home logs", "inputs"}
    assert len(proxy_logs(run)) == 1  # nothing changed
    done = compact(run)
    assert [(s.kind, s.path, s.before) for s in done.steps] == [(s.kind, s.path, s.before) for s in planned.steps]
    # the dry run's sizes after are what the logs take; the inputs' are known only once each file is checked
    assert [s.after for s in planned.steps] == [None if s.kind == "inputs" else s.after for s in done.steps]
    state = {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()}
    again = compact(run)
    assert again.nothing_to_do and again.steps == [] and again.total_after == again.total_before == done.total_after
    assert {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in run.rglob("*") if p.is_file()} == state
    assert compact(run, dry_run=True).nothing_to_do
    rows = {folder.name: row for folder, row in finished_episodes(run)}
    assert len(rows) == 3

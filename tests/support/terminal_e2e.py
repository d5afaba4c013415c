"""Shared pieces of the terminal-agent end-to-end tests: real pinned CLIs in the Docker sandbox, offline.

Each test runs a whole episode through :func:`harness.run.execute` (task ->
sandbox -> CLI -> score -> trajectory) with the ``scripted`` model backend and
one of the scripts in ``examples/scripts/``.  The script asserts every request
(dummy key, wire, model, reasoning effort, the previous tool result), so a CLI
that never really ran its shell command fails the episode.

Set ``HARNESS_CAPTURE_NATIVE_LOGS=<folder>`` to copy each episode's native logs,
stdout/stderr and proxy log there (``<folder>/<agent>/<case>/``): that is how
``tests/fixtures/native_logs/`` was made.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from harness import plugins as registry
from harness.config import RunSettings
from harness.sandbox.docker_engine import DockerSandboxError, connect, no_engine_reason
from harness.trajectory import load_trajectory, to_dict
from harness.atif import copy_native_file, native_file_size
from harness.wire import proxy_log, read_log
from tsagent_plugins.models.script_format import Script, load_script
from tests.support.paths import REPO

SCRIPTS = REPO / "examples" / "scripts"
CAPTURE_ENV = "HARNESS_CAPTURE_NATIVE_LOGS"

#: profile -> (agent, script prefix, wire, shell tool name)
CLIS = {
    "claude-opus-4.6": ("claude-code", "claude", "anthropic", "Bash"),
    "gpt-5.5": ("codex", "codex", "openai-responses", "exec_command"),
    "gemini-3.1-pro": ("gemini-cli", "gemini", "gemini", "run_shell_command"),
    "minimax-m2.7": ("opencode", "opencode", "openai-chat", "bash"),
}


def _agent_image() -> tuple[str | None, str]:
    """(the agent runtime image to use, or None; why not)."""
    try:
        client = connect(timeout=10)
    except DockerSandboxError:
        return None, no_engine_reason()
    try:
        image = os.environ.get("HARNESS_DOCKER_IMAGE")
        if image:
            try:
                client.images.get(image)
                return image, ""
            except Exception:  # noqa: BLE001
                return None, f"HARNESS_DOCKER_IMAGE={image} is not present in the Docker engine"
        from harness.image.build import find_agent_image

        found, expected = find_agent_image(client)
        if found:
            return found, ""
        return None, f"the agent runtime image {expected} is not built (run `harness image build --bootstrap`)"
    finally:
        client.close()


AGENT_IMAGE, NO_IMAGE_REASON = _agent_image()

#: Marks for every test here: ``docker``, skipped (with the reason) without an engine or the agent image.
e2e_marks = [pytest.mark.docker, pytest.mark.skipif(AGENT_IMAGE is None, reason=NO_IMAGE_REASON)]


def task_file(folder: Path, submission: str, n_test: int = 4, heldout_per_class: int = 2) -> Path:
    """A small TraceBench BallDrop spec (low noise, context on, one example per class)."""
    path = folder / f"balldrop-{submission}.yaml"
    path.write_text(yaml.safe_dump({
        "name": f"balldrop-{submission}", "template": "tracebench",
        "params": {"simulator": "balldrop", "noise": "low", "context": True, "examples_per_class": 1,
                   "submission": submission, "n_test": n_test, "seed": 3, "pool_seed": 0,
                   "heldout_per_class": heldout_per_class},
    }))
    return path


@dataclass
class Episode:
    """What one end-to-end episode left behind."""

    root: Path
    row: dict[str, Any]
    trajectory: dict[str, Any] | None
    script: Script

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def home(self) -> Path:
        return self.root / "home"

    def read(self, name: str) -> str:
        path = self.root / name
        return path.read_text() if path.exists() else ""

    def key(self) -> dict:
        return json.loads((self.root / "key" / "key.json").read_text())


def run_episode(profile_name: str, script: Path, tmp: Path, submission: str = "direct", timeout: float = 240,
                case: str | None = None, profile_options: dict | None = None, **task_kw) -> Episode:
    """Run one episode of ``profile_name`` against ``script`` in Docker and load what it wrote."""
    from harness.experiment import Unit
    from harness.profiles import resolve_profile
    from harness.run import execute, load_task
    from harness.store import RunStore

    task = load_task(task_file(tmp, submission, **task_kw))
    profile = resolve_profile(profile_name)
    if profile_options is not None:
        profile = profile.model_copy(update={"options": profile_options})
    settings = RunSettings(sandbox="docker", episode_timeout=timeout, infra_retries=0, rule_call_timeout=30)
    store = RunStore.create(tmp / f"run-{uuid.uuid4().hex[:10]}")  # the run id labels its containers
    rows = execute([Unit(task, profile, None)], store, settings, model_backend="scripted",
                   model_options={"script": str(script)})
    assert len(rows) == 1
    root = store.episode(rows[0]["episode"]).root
    path = root / "trajectory.json"
    trajectory = to_dict(load_trajectory(path)) if path.exists() else None
    episode = Episode(root, rows[0], trajectory, load_script(script))
    capture(episode, CLIS[profile_name][0], case or submission)
    return episode


def capture(episode: Episode, agent_name: str, case: str) -> None:
    """Copy the native logs, outputs and proxy log to ``$HARNESS_CAPTURE_NATIVE_LOGS`` when it is set."""
    folder = os.environ.get(CAPTURE_ENV)
    if not folder:
        return
    dest = Path(folder) / agent_name / case
    shutil.rmtree(dest, ignore_errors=True)
    (dest / "home").mkdir(parents=True)
    agent = registry.get("agent", agent_name)
    for path in agent.native_logs(episode.home):  # fixtures keep them plain (the episode stored them compressed)
        target = dest / "home" / path.relative_to(episode.home)
        target.parent.mkdir(parents=True, exist_ok=True)
        assert copy_native_file(path, target) is None
    for name in ("agent.stdout", "agent.stderr", "prompt.txt"):
        if (episode.root / name).exists():
            shutil.copyfile(episode.root / name, dest / name)
    log = proxy_log(episode.root)
    if log is not None:  # fixtures keep the proxy's log plain, to be read and diffed as text
        (dest / "proxy.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in read_log(log)))
    (dest / "outcome.json").write_text(json.dumps({k: episode.row.get(k) for k in (
        "status", "error_kind", "exit_code", "agent", "model", "profile")}, indent=1) + "\n")


def expected_metrics(script: Script, wire: str, turn: int) -> dict[str, int]:
    """The per-step token counts the scripted turn reports, as the proxy normalises them for ``wire``."""
    usage = script.turns[turn].usage
    reasoning = usage.reasoning_tokens or 0
    return {"prompt_tokens": usage.prompt_tokens, "cached_tokens": usage.cached_tokens,
            "completion_tokens": usage.completion_tokens,
            # Anthropic does not break reasoning ("thinking") tokens out of output_tokens
            "reasoning_tokens": 0 if wire == "anthropic" else reasoning}


def side_usage(script: Script) -> tuple[int, int]:
    """(prompt, completion) tokens the script's match rules report (side calls such as titles)."""
    prompt = sum((rule.reply.usage.prompt_tokens or 0) for rule in script.match if rule.reply.usage)
    completion = sum((rule.reply.usage.completion_tokens or 0) for rule in script.match if rule.reply.usage)
    return prompt, completion


def check_success(episode: Episode, profile_name: str, submission: str) -> None:
    """Everything an episode of a well-behaved scripted run must show (see the e2e test modules)."""
    agent_name, _, wire, shell_tool = CLIS[profile_name]
    row, script, traj = episode.row, episode.script, episode.trajectory
    assert row["status"] == "ok", (row.get("error"), episode.read("agent.stderr")[-2000:])
    # a row read back from results.parquet has a null of its declared type (NaN in pandas' str dtype)
    assert (row["error_kind"] is None or pd.isna(row["error_kind"])) and row["exit_code"] == 0
    assert json.loads(row["assertion_failures"]) == []
    assert json.loads(row["proxy_errors"]) == []
    # the CLI ran the shell command for real: the file it wrote is in the workspace
    written = "results.json" if submission == "direct" else "rule.py"
    assert (episode.workspace / written).is_file()

    # --- trajectory: user prompt, agent step with the shell call and its output, final answer
    assert traj is not None and traj["schema_version"] == "ATIF-v1.6"
    assert traj["agent"]["name"] == agent_name
    assert traj["agent"]["version"] == registry.get("agent", agent_name).version
    steps = traj["steps"]
    assert [s["source"] for s in steps] == ["user", "agent", "agent"]
    assert steps[0]["message"].strip() == episode.read("prompt.txt").strip()
    first, last = steps[1], steps[2]
    calls = first["tool_calls"]
    assert len(calls) == 1 and calls[0]["function_name"] == shell_tool
    command = calls[0]["arguments"].get("command") or calls[0]["arguments"].get("cmd")
    assert command.strip() == script.turns[0].tool_calls[0].shell.strip()
    results = first["observation"]["results"]
    assert [r["source_call_id"] for r in results] == [calls[0]["tool_call_id"]]
    check = script.turns[1].expect.last_tool_result_contains
    assert check in results[0]["content"]
    if submission == "direct":
        predictions = json.loads((episode.workspace / "results.json").read_text())
        assert f"wrote results.json with {len(predictions)} predictions" in results[0]["content"]
    assert last["message"] == script.turns[1].text
    assert not last.get("tool_calls")
    if agent_name != "opencode":  # OpenCode does not surface a non-reasoning model's reasoning
        assert first["reasoning_content"] == script.turns[0].reasoning

    # --- tokens: per step as scripted, totals equal the proxy's
    for step, turn in ((first, 0), (last, 1)):
        want = expected_metrics(script, wire, turn)
        got = step["metrics"]
        assert {k: got[k] for k in ("prompt_tokens", "cached_tokens", "completion_tokens")} == \
            {k: want[k] for k in ("prompt_tokens", "cached_tokens", "completion_tokens")}
        assert got["extra"]["reasoning_tokens"] == want["reasoning_tokens"]
        assert got["cost_usd"] > 0
    final = traj["final_metrics"]
    side_prompt, side_completion = side_usage(script)
    assert final["total_prompt_tokens"] == row["prompt_tokens"] == \
        sum(t.usage.prompt_tokens for t in script.turns) + side_prompt
    assert final["total_completion_tokens"] == row["completion_tokens"] == \
        sum(t.usage.completion_tokens for t in script.turns) + side_completion
    assert final["total_cached_tokens"] == row["cached_tokens"] == sum(t.usage.cached_tokens for t in script.turns)
    assert abs(final["total_cost_usd"] - row["cost_usd"]) < 1e-9
    extra = final["extra"]
    if side_prompt:  # the CLI does not count its side calls: the totals come from the proxy
        assert extra["token_source"] == "proxy"
        assert extra["disagreement"]["prompt_tokens"] == {"cli": row["prompt_tokens"] - side_prompt,
                                                          "proxy": row["prompt_tokens"]}
    else:
        assert extra["token_source"] == "cli" and "disagreement" not in extra

    # --- native logs kept beside the trajectory
    logs = registry.get("agent", agent_name).native_logs(episode.home)
    assert logs and all(native_file_size(p) is not None for p in logs)  # each plain or stored compressed
    assert traj["extra"]["native_logs"] == [str(p.relative_to(episode.home)) for p in logs]

    # --- scoring
    key = episode.key()
    if submission == "direct":
        predictions = json.loads((episode.workspace / "results.json").read_text())
        assert sorted(predictions) == sorted(key["test"])
        truth = [key["test"][f]["label"] == predictions[f][0] for f in sorted(key["test"])]
        assert row["n_invalid"] == 0 and row["n_test"] == len(key["test"])
        assert row["accuracy"] == pytest.approx(sum(truth) / len(truth))
    else:
        assert row["n_test"] == len(key["test"]) and row["heldout_n"] == len(key["heldout"]) > 0
        # rule.py imports ruptures, which only the agent image has: every call ran there
        assert row["n_invalid"] == 0 and row["heldout_n_invalid"] == 0
        assert row["accuracy"] is not None and row["heldout_accuracy"] is not None

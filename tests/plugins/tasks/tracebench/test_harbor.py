"""``harness export TASKSPEC --format harbor``, checked by Harbor's own code (Harbor 0.25 in its own Python >= 3.12
environment, made by ``.ci/run``: ``$HARNESS_HARBOR_VENV``, default ``.venv-harbor`` in the repository).

* every exported task loads in Harbor's task model (``harbor.models.task.task.Task``), its instruction is the
  harness's prompt byte for byte and its environment's workspace is the harness's;
* no ``environment/`` file and no instruction holds the answer key or a held-out sample;
* ``harbor run`` (the real command, its Docker environment driving Compose v2 on an engine without a bridge
  network) gives the oracle reward 1.0 and an agent that writes nothing (Harbor's ``nop``) reward 0, on a
  direct and a programmatic task; the harness's scorer gives the oracle's answer the same score.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.paths import REPO
from tests.support.terminal_e2e import e2e_marks

SPECS = {"direct": REPO / "tasks/tracebench/balldrop-low-direct.yaml",
         "programmatic": REPO / "tasks/tracebench/balldrop-high-programmatic.yaml"}
SMALL = {"n_test": 5, "heldout_per_class": 2, "pool_per_class": 25}
HARBOR_VENV = Path(os.environ.get("HARNESS_HARBOR_VENV", REPO / ".venv-harbor"))
HARBOR_PY = HARBOR_VENV / "bin" / "python"
#: where .ci/run links the Compose v2 binary as a Docker CLI plugin (DOCKER_CONFIG for Harbor's `docker compose`)
DOCKER_CONFIG = HARBOR_VENV / "docker-config"


def need_harbor() -> None:
    assert HARBOR_PY.exists(), (f"Harbor's environment is missing: {HARBOR_PY} (.ci/run makes it: "
                                f"bash .ci/harbor-venv.sh)")


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, Path]:
    """submission mode -> its exported Harbor task directory (and the harness's own materialization beside)."""
    root = tmp_path_factory.mktemp("harbor-export")
    found = {}
    env = {**os.environ, "HARNESS_CACHE_DIR": str(root / "cache")}
    for mode, spec_file in SPECS.items():
        spec = yaml.safe_load(spec_file.read_text())
        spec["params"].update(SMALL)
        small = root / spec_file.name
        small.write_text(yaml.safe_dump(spec))
        done = subprocess.run([sys.executable, "-m", "harness", "export", str(small), "--format", "harbor",
                               "--out", str(root / "tasks")], capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        [folder] = [Path(line) for line in done.stdout.splitlines() if line.startswith(str(root))]
        found[mode] = folder
    return found


def materialized(folder: Path) -> tuple[str, Path]:
    """The prompt and workspace ``harness run`` gives the exported task's episode (its spec from task.toml)."""
    from harness.run import load_task

    meta = harbor_load([folder])[0]["metadata"]
    spec = folder.parent.parent / f"{meta['task_spec']}.yaml"
    task = load_task(spec)
    workspace = folder.parent.parent / "harness-workspaces" / folder.name
    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    result = task.template.materialize(task.params, meta["episode"], workspace / "ws", workspace / "key")
    return result.prompt, workspace / "ws"


def harbor_load(folders: list[Path]) -> list[dict]:
    """Each task directory loaded by Harbor's ``Task`` model (in Harbor's environment): config and instruction."""
    need_harbor()
    code = ("import json, sys\nfrom harbor.models.task.task import Task\nout = []\n"
            "for path in sys.argv[1:]:\n    t = Task(path)\n"
            "    out.append({'name': t.name, 'metadata': t.config.metadata, 'instruction': t.instruction,\n"
            "                'verifier_timeout': t.config.verifier.timeout_sec})\nprint(json.dumps(out))\n")
    done = subprocess.run([str(HARBOR_PY), "-c", code, *map(str, folders)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def digests(folder: Path) -> dict[str, Path]:
    return {hashlib.sha256(p.read_bytes()).hexdigest(): p for p in folder.rglob("*") if p.is_file()}


def test_every_exported_task_loads_in_harbors_task_model(exported):
    loaded = harbor_load(list(exported.values()))
    for (mode, folder), task in zip(exported.items(), loaded):
        assert task["metadata"]["submission"] == mode and task["metadata"]["benchmark"] == "tracebench"
        assert task["verifier_timeout"] == 1200.0
        prompt, workspace = materialized(folder)
        assert (folder / "instruction.md").read_bytes() == prompt.encode("utf-8")  # byte for byte
        assert task["instruction"].strip() == prompt.strip()
        shown = {p.relative_to(folder / "environment" / "workspace"): p.read_bytes()
                 for p in (folder / "environment" / "workspace").rglob("*") if p.is_file()}
        assert shown == {p.relative_to(workspace): p.read_bytes() for p in workspace.rglob("*") if p.is_file()}
        assert (folder / "environment" / "Dockerfile").read_text().startswith("FROM harness-agent:")
        assert "network_mode: none" in (folder / "environment" / "docker-compose.yaml").read_text()


def test_no_environment_or_instruction_holds_the_answer_key(exported):
    for mode, folder in exported.items():
        key_dir = folder / "tests" / "key"
        key = json.loads((key_dir / "key.json").read_text())
        env_files = [p for p in (folder / "environment").rglob("*") if p.is_file()]
        texts = [(folder / "instruction.md").read_bytes()] + [p.read_bytes() for p in env_files]
        secrets = {truth["sample_id"] for split in ("test", "heldout") for truth in key[split].values()}
        assert secrets and not any(s.encode() in t for s in secrets for t in texts)
        assert not any(p.name in ("key.json", "recipes.json") or "heldout" in p.as_posix() for p in env_files)
        env_digests = digests(folder / "environment")
        if mode == "programmatic":
            heldout = digests(key_dir / "heldout_samples")
            assert len(heldout) == len(key["heldout"]) > 0 and not set(heldout) & set(env_digests)
        # the test samples the agent sees are the key's copies, without their labels
        assert set(digests(key_dir / "test_samples")) <= set(env_digests)
        labels = json.dumps({name: truth["label"] for name, truth in key["test"].items()}).encode()
        assert not any(labels in t for t in texts)


def test_the_oracle_answer_scores_one_with_the_harness_scorer(exported, tmp_path):
    """The oracle's answer, scored by the harness itself (what ``harbor run`` must reproduce in its container)."""
    from harness.run import load_task
    from harness.sandbox.none import NoneBackend
    from harness.submission import make_runner

    for mode, folder in exported.items():
        meta = harbor_load([folder])[0]["metadata"]
        task = load_task(folder.parent.parent / f"{meta['task_spec']}.yaml")
        workspace = tmp_path / mode / "workspace"
        shutil.copytree(folder / "environment" / "workspace", workspace)
        script = (folder / "solution" / "solve.sh").read_text().replace("/workspace/", f"{workspace}/")
        subprocess.run(["sh", "-c", script], check=True)
        score = task.template.score(task.params, meta["episode"], workspace, folder / "tests" / "key",
                                    make_runner(NoneBackend(), call_timeout=30, memory_mb=1024, budget=120))
        assert score.metrics["accuracy"] == 1.0 and score.metrics["shortlist"] == 1.0
        if mode == "programmatic":
            assert score.metrics["heldout_accuracy"] == 1.0 and score.metrics["heldout_n"] > 0


def harbor_run(tasks: Path, agent: str, jobs: Path) -> dict[str, dict]:
    """``harbor run`` of every task under ``tasks`` with Harbor's ``agent``: task name -> its rewards."""
    need_harbor()
    env = {**os.environ, "DOCKER_CONFIG": str(DOCKER_CONFIG), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([str(HARBOR_VENV / "bin" / "harbor"), "run", "-p", str(tasks), "-a", agent, "-o", str(jobs),
                           "--job-name", agent, "-n", "2", "-y"], capture_output=True, text=True, env=env,
                          timeout=1200)
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    results = {}
    for path in (jobs / agent).glob("*/result.json"):
        result = json.loads(path.read_text())
        assert result.get("exception_info") is None, result["exception_info"]
        results[result["task_name"]] = result["verifier_result"]["rewards"]
    return results


@pytest.mark.slow
@pytest.mark.parametrize("agent, reward", [("oracle", 1.0), ("nop", 0.0)])
@e2e_marks[1]
@e2e_marks[0]
def test_harbor_run_gives_the_oracle_one_and_an_empty_agent_zero(exported, tmp_path, agent, reward):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for folder in exported.values():
        shutil.copytree(folder, tasks / folder.name)
    rewards = harbor_run(tasks, agent, tmp_path / "jobs")
    assert set(rewards) == {f.name for f in exported.values()}
    for name, got in rewards.items():
        assert got["reward"] == got["accuracy"] == got["shortlist"] == reward, name
        if "programmatic" in name:
            assert got["heldout_accuracy"] == got["heldout_shortlist"] == reward

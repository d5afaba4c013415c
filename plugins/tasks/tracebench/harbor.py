"""TraceBench task specs as Harbor tasks: ``harness export TASKSPEC --format harbor --out DIR``.

One Harbor task directory per episode of the spec (Harbor 0.25's layout, ``harbor.models.task``)::

    <episode label>/
      task.toml              metadata (simulator, noise, submission, seed, ...), agent/verifier timeouts
      instruction.md         the episode's prompt (Appendix H), byte for byte as ``harness run`` gives it
      environment/
        Dockerfile           FROM the harness's agent image; the workspace copied to /workspace
        docker-compose.yaml  the ``main`` service and its build without any network (``network_mode: none``)
        workspace/           what the agent sees: test_samples/, train_samples/, train_labels.json
      tests/                 Harbor copies it to /tests after the agent finished
        test.sh              puts scoring/ on the image Python's path, runs verify.py
        verify.py            scores /workspace with the harness's scorer, writes /logs/verifier/reward.json
        scoring/             the harness modules that scorer imports (found by importing it, copied as is)
        rule_limits.json     rule.py's per-call timeout, total budget and memory (the harness's defaults)
        key/                 the answer key: key.json and, programmatic, test_samples/ and heldout_samples/
      solution/
        solve.sh             the oracle: writes results.json (direct) or a rule.py (programmatic) that
                             answers every test and held-out sample with its true label

The answer key and the held-out samples are only under ``tests/`` (and, as label tables, in the oracle
under ``solution/``, which Harbor gives only to its oracle agent): never in ``environment/`` or the
instruction.  The reward is the top-1 accuracy on the test batch, as ``harness run`` scores it; the
reward file also carries the shortlist score and the held-out scores (``verify.py``).

Choices left open by Harbor, written down once: the environment has no network at all (the harness's
sandboxes have none; ``docker-compose.yaml`` also builds without one, so the task runs on an engine with no
bridge network); rule.py runs in the task's container through the harness's rule worker without a second
sandbox (Harbor's container is the sandbox); the oracle's rule recognises a sample by the SHA-256 of its
values (float64, row-major), so it is right exactly on the samples of this episode.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import HarnessError
from harness.sandboxing import agent_image_tag

#: Verifier and agent time limits written into task.toml (seconds).
VERIFIER_TIMEOUT, AGENT_TIMEOUT = 1200.0, 3600.0
#: The modules ``verify.py`` imports: ``scoring/`` holds these and every harness module they load.
SCORING_IMPORTS = ("tsagent_plugins.tasks.tracebench.scoring", "harness.submission", "harness.sandbox.none",
                   "harness.sandbox.rule_worker")
_PROBE = """
import json, sys
for name in sys.argv[1:]:
    __import__(name)
from harness.config import RunSettings
settings = RunSettings()
files = {}
for name, module in sorted(sys.modules.items()):
    if name.split(".")[0] in ("harness", "tsagent_plugins") and getattr(module, "__file__", None):
        path = name.replace(".", "/") + ("/__init__.py" if module.__file__.endswith("__init__.py") else ".py")
        files[path] = module.__file__
print(json.dumps({"files": files, "rule": {"call_timeout": settings.rule_call_timeout,
                  "budget": settings.rule_budget, "memory_mb": settings.rule_memory_mb}}))
"""
_COMPOSE = """\
# The harness's sandboxes have no network; neither has this task (nor its build), so it also runs on a
# Docker engine without a bridge network (dockerd --bridge=none).
services:
  main:
    build:
      network: none
    network_mode: none
"""
_TEST_SH = """\
#!/bin/sh
# Harbor's verifier: score /workspace with the harness's own scorer (verify.py; modules in scoring/).
set -eu
PY=/opt/venv/bin/python3
[ -x "$PY" ] || PY=python3
site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo /tests/scoring > "$site/tsagent-harness-scoring.pth"
mkdir -p /logs/verifier
exec "$PY" /tests/verify.py
"""


def scoring_bundle(dest: Path) -> dict[str, Any]:
    """Copy the harness modules :data:`SCORING_IMPORTS` load (found by importing them in a fresh interpreter)
    into the folder ``dest`` as a package tree; return the rule limits of the harness's default run settings."""
    probe = subprocess.run([sys.executable, "-c", _PROBE, *SCORING_IMPORTS], capture_output=True, text=True,
                           timeout=120)
    if probe.returncode != 0:
        raise HarnessError(f"could not collect the scoring modules: {probe.stderr.strip().splitlines()[-1:]}")
    found = json.loads(probe.stdout)
    for relative, source in sorted(found["files"].items()):
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest / relative)
    return found["rule"]


def sample_digest(path: Path) -> str:
    """SHA-256 of a sample file's values as float64, row-major: how the oracle's rule.py knows a sample."""
    import numpy as np
    import pandas as pd

    return hashlib.sha256(np.ascontiguousarray(pd.read_parquet(path).to_numpy(dtype="float64")).tobytes()).hexdigest()


def oracle_script(key: dict, key_dir: Path) -> str:
    """``solution/solve.sh``: writes the correct answers into /workspace (see the module docstring)."""
    if key["submission"] == "direct":
        answers = {name: [truth["label"]] for name, truth in sorted(key["test"].items())}
        return ("#!/bin/sh\n# Harbor oracle: the true label of every test sample as a one-label ranked list.\n"
                "set -eu\ncat > /workspace/results.json <<'JSON'\n" + json.dumps(answers, indent=1) + "\nJSON\n")
    table = {sample_digest(key_dir / folder / name): truth["label"]
             for split, folder in (("test", "test_samples"), ("heldout", "heldout_samples"))
             for name, truth in sorted(key[split].items())}
    rule = (
        '"""Harbor oracle: the true label of each of this episode\'s samples, known by the SHA-256 of its values."""\n'
        "import hashlib\n\nimport numpy as np\n\n"
        f"LABELS = {json.dumps(table, indent=1)}\n\n\n"
        "def predict(df):\n"
        "    digest = hashlib.sha256(np.ascontiguousarray(df.to_numpy(dtype='float64')).tobytes()).hexdigest()\n"
        "    return [LABELS[digest]]\n")
    return ("#!/bin/sh\n# Harbor oracle: a rule.py that knows every test and held-out sample of this episode.\n"
            "set -eu\ncat > /workspace/rule.py <<'PY'\n" + rule + "PY\n")


def _toml_value(value: Any) -> str:
    return json.dumps(value)  # TOML basic strings, numbers and booleans are written as JSON writes them


def task_toml(metadata: dict[str, Any], image: str) -> str:
    """``task.toml`` (Harbor's ``TaskConfig``) of one episode: ``metadata`` (strings, numbers, booleans), the
    timeouts, the resources the harness gives a sandbox by default."""
    lines = ['version = "1.0"', "", "[metadata]"]
    lines += [f"{key} = {_toml_value(value)}" for key, value in metadata.items()]
    lines += ["", "[verifier]", f"timeout_sec = {VERIFIER_TIMEOUT}", "", "[agent]", f"timeout_sec = {AGENT_TIMEOUT}",
              "", "[environment]", "build_timeout_sec = 600.0", "cpus = 2", "memory_mb = 4096",
              f"# built FROM {image} (environment/Dockerfile)", ""]
    return "\n".join(lines)


def export_episode(task: Any, episode: str, out: Path, image: str, bundle: Path, rule: dict[str, Any]) -> Path:
    """Write the Harbor task directory of one ``episode`` of the loaded ``task`` under ``out``."""
    template, params = task.template, task.params
    folder = out / template.episode_label(task.spec.name, params, episode)
    if folder.exists():
        shutil.rmtree(folder)
    env, tests, solution = folder / "environment", folder / "tests", folder / "solution"
    workspace, key_dir = env / "workspace", tests / "key"
    workspace.mkdir(parents=True)
    materialized = template.materialize(params, episode, workspace, key_dir)
    for extra in ("recipes.json",):  # the generation recipes are not needed to score
        (key_dir / extra).unlink(missing_ok=True)
    (folder / "instruction.md").write_bytes(materialized.prompt.encode("utf-8"))
    (env / "Dockerfile").write_text(f"FROM {image}\nCOPY workspace/ /workspace/\nWORKDIR /workspace\n")
    (env / "docker-compose.yaml").write_text(_COMPOSE)
    shutil.copytree(bundle, tests / "scoring")
    (tests / "rule_limits.json").write_text(json.dumps(rule))
    (tests / "verify.py").write_text((Path(__file__).parent / "harbor_verify.py.txt").read_text())
    (tests / "test.sh").write_text(_TEST_SH)
    from tsagent_plugins.tasks.tracebench.template import read_key

    key = read_key(key_dir)
    solution.mkdir()
    (solution / "solve.sh").write_text(oracle_script(key, key_dir))
    for script in (tests / "test.sh", solution / "solve.sh"):
        script.chmod(0o755)
    metadata = {"benchmark": "tracebench", "task_spec": task.spec.name, "episode": episode,
                **{k: v for k, v in params.model_dump(mode="json").items() if isinstance(v, (str, int, float, bool))}}
    (folder / "task.toml").write_text(task_toml(metadata, image))
    return folder


def export_harbor(task: Any, out: Path | str) -> list[Path]:
    """Every episode of the loaded TraceBench ``task`` as a Harbor task directory under ``out``; returns them.
    Raises :class:`harness.HarnessError` for a spec of another template."""
    if task.template.name != "tracebench":
        raise HarnessError(f"{task.path}: --format harbor exports tracebench task specs (template: "
                           f"{task.template.name!r})")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="harbor-export-") as tmp:
        bundle = Path(tmp) / "scoring"
        rule = scoring_bundle(bundle)
        image = agent_image_tag()
        return [export_episode(task, episode, out, image, bundle, rule) for episode in task.template.episodes(task.params)]

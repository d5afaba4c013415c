"""``harness run`` in a child process with a toy task whose agent is a shell script (no model, no image); and
``codex-replay``, Codex's recorded episode played back without the CLI (:func:`replay_agent`).

The task template ``shell-toy`` writes nothing but the prompt; its agent ``shell`` runs the task's
``params.script`` with ``sh -c`` in the workspace, the episode (``0``, ``1``, ... up to ``params.episodes``)
in ``$EPISODE``.  The episode scores ``accuracy`` 1.0 when the workspace's
``results.json`` holds ``{"answer": 42}``, else 0.0.  :func:`harness_cli` runs
``python -m tests.support.shell_run ARGS`` (these plugins registered, then ``harness.cli.main``), so two runs
can be real concurrent processes::

    spec = shell_task(tmp_path, "echo '{\\"answer\\": 42}' > results.json")
    proc = harness_cli("run", "--task", spec, "--agent", profile(tmp_path), "--sandbox", "none", "--out", out)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import yaml
from pydantic import BaseModel

from harness import hookimpl
from harness.contracts import Agent, AgentInvocation, AgentTaskTemplate, EpisodeScore, Materialized
from tests.support.paths import REPO


class ShellParams(BaseModel):
    script: str = "true"
    files: dict[str, str] = {}  # written into the workspace
    episodes: int = 1
    seed: int | None = None


class ShellToy(AgentTaskTemplate):
    name = "shell-toy"
    params_model = ShellParams
    result_columns = {"accuracy": ("float", "1 when results.json answers 42")}

    def episodes(self, params):
        return [str(i) for i in range(params.episodes)]

    def materialize(self, params, episode, workspace, key_dir):
        for name, text in params.files.items():
            (workspace / name).write_text(text)
        return Materialized(prompt="write results.json", task_info={"script": params.script,
                                                                        "episode": episode})

    def score(self, params, episode, workspace, key_dir, run_submission):
        try:
            answer = json.loads((workspace / "results.json").read_text()).get("answer")
        except (OSError, ValueError, AttributeError):
            answer = None
        return EpisodeScore(metrics={"accuracy": 1.0 if answer == 42 else 0.0})


class ShellAgent(Agent):
    name = "shell"
    version = "1"
    needs_model = False
    image_capable = True  # sh runs in the agent image as on the host

    def command(self, ctx):
        return AgentInvocation(argv=["sh", "-c", ctx.task_info["script"]], env={"EPISODE": ctx.task_info["episode"]})

    def trajectory(self, home, stdout, proxy_log):
        return None


class ShellModelAgent(ShellAgent):
    """``shell`` with a model: the proxy's URL in ``$MODEL_BASE_URL`` (and its socket in the sandbox at
    ``harness.sandbox.mounts.PROXY_SOCKET_PATH``)."""

    name = "shell-model"
    needs_model = True

    def command(self, ctx):
        invocation = super().command(ctx)
        invocation.env["MODEL_BASE_URL"] = ctx.model_base_url or ""
        return invocation


def replay_agent(base: type, name: str) -> Agent:
    """A terminal agent ``<name>-replay`` that plays back the CLI's recorded episode
    (``tests/fixtures/native_logs/<name>/direct``: :mod:`tests.support.replay_cli`) instead of running the CLI,
    on the host; its trajectory is ``base``'s, from the native logs the recording left in the home."""

    class Replay(base):  # type: ignore[misc, valid-type]
        needs_image = False
        image_capable = False

        def command(self, ctx):
            fixture = REPO / "tests" / "fixtures" / "native_logs" / name / "direct"
            return AgentInvocation(argv=[sys.executable, str(REPO / "tests" / "support" / "replay_cli.py"),
                                         str(fixture), self.dummy_key()],
                                   env={"MODEL_BASE_URL": ctx.model_base_url or ""})

    Replay.name = f"{name}-replay"
    Replay.__name__ = Replay.__qualname__ = f"Replay{base.__name__}"
    return Replay()


@hookimpl
def register_task_templates(register):
    register(ShellToy())


@hookimpl
def register_agents(register):
    from tsagent_plugins.agents.terminal.codex import Codex

    register(ShellAgent())
    register(ShellModelAgent())
    register(replay_agent(Codex, "codex"))


def shell_task(folder: Path, script: str, name: str = "shell", **params) -> Path:
    """A task spec of ``shell-toy`` running ``script``; returns its path."""
    path = Path(folder) / f"{name}-task.yaml"
    path.write_text(yaml.safe_dump({"name": name, "template": "shell-toy", "params": {"script": script, **params}}))
    return path


def profile(folder: Path, agent: str = "shell") -> Path:
    """An agent profile of the ``shell`` (or ``shell-model``, model ``m`` of provider ``openai``; or
    ``codex-replay``, as the recorded Codex episode's profile ``gpt-5.5``) agent; returns its path."""
    path = Path(folder) / f"{agent}.yaml"
    model = {"model": "m", "provider": "openai"} if agent == "shell-model" else {}
    if agent == "codex-replay":
        model = {"model": "gpt-5.5", "provider": "openai", "reasoning_effort": "high",
                 "prices": {"input": 5, "cached": 0.5, "output": 30}}
    path.write_text(yaml.safe_dump({"name": agent, "agent": agent, "image_support": False, **model}))
    return path


def harness_cli(*args: object, env: dict[str, str] | None = None, preexec_fn=None,
                **popen: object) -> subprocess.Popen:
    """``harness ARGS`` with these plugins, as a child process (text stdout/stderr pipes)."""
    return subprocess.Popen([sys.executable, "-m", "tests.support.shell_run", *map(str, args)], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=preexec_fn, **popen)


def main(argv: list[str]) -> None:
    from harness import plugins as registry
    from harness.cli import main as cli_main

    registry.plugins().add(sys.modules[__name__], "shell-toy", "tests")
    cli_main(argv)


if __name__ == "__main__":
    sys.modules.setdefault("tests.support.shell_run", sys.modules["__main__"])
    main(sys.argv[1:])

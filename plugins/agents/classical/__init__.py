"""Classical (no-LLM) baseline agents that run inside the sandbox like any other agent."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.contracts import Agent, AgentContext, AgentInvocation
from harness.hookspecs import hookimpl


class EuclideanNN(Agent):
    """Euclidean 1-NN on the support batch (TraceBench Appendix E), writing results.json or rule.py."""

    name = "euclidean-1nn"
    version = "1"
    needs_model = False
    image_capable = False  # runs the host's Python with the harness's own packages

    def command(self, ctx: AgentContext) -> AgentInvocation:
        info = {k: ctx.task_info.get(k) for k in ("submission", "labels", "columns", "impulse_columns")}
        return AgentInvocation(
            argv=[sys.executable, "-m", "plugins.agents.classical.solve", "--task-info", json.dumps(info)],
            env={"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1"},
            ro_binds=runtime_files(),
        )


class ProxyProbe(Agent):
    """A minimal agent that calls the model proxy ``options.turns`` times (default 3) and submits the last
    label: for testing and measuring the harness (rate limits, parallel episodes), not a baseline."""

    name = "proxy-probe"
    version = "1"
    needs_model = True
    image_capable = True  # one standard-library script: any python3 (host or image)

    def command(self, ctx: AgentContext) -> AgentInvocation:
        info = {k: ctx.task_info.get(k) for k in ("submission", "labels")}
        turns = int((ctx.profile.options if ctx.profile else {}).get("turns", 3))
        script = Path(__file__).resolve().parent / "probe.py"
        return AgentInvocation(
            argv=["python3", str(script), "--task-info", json.dumps(info),
                  "--base-url", ctx.model_base_url or "", "--model", (ctx.profile.model if ctx.profile else None)
                  or "probe", "--turns", str(turns)],
            env={"PYTHONDONTWRITEBYTECODE": "1"},
            ro_binds=[script],
        )


def runtime_files() -> list[Path]:
    """What the agent runs inside the sandbox: this package and its parents' ``__init__`` files only
    (never the simulators or pool generators)."""
    here = Path(__file__).resolve().parent
    return [here.parent.parent / "__init__.py", here.parent / "__init__.py", here]


@hookimpl
def register_agents(register):
    register(EuclideanNN())
    register(ProxyProbe())

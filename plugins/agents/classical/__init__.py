"""Classical (no-LLM) baseline agents of TraceBench Appendix E, run inside the sandbox like any agent.

Seven agents: ``euclidean-1nn``, ``dtw-1nn``, ``minirocket-ridge``, their
``-privileged`` variants (input = observed trajectory minus its clean paired
no-intervention trajectory; the harness writes those pairs into the workspace
of these agents only) and ``random`` (uniform over the allowed labels, seeded
by the test file name).  ``dtw-1nn`` and ``minirocket-ridge`` use aeon (the
``baselines`` extra); numba's compilation cache for them is built once on the
host (:mod:`.numba_cache`) and mounted read-only into every sandbox.

Programmatic submission: ``euclidean-1nn``, ``minirocket-ridge`` and ``random``
write a ``rule.py`` with their fitted state embedded; the privileged variants
(``predict(df)`` gets no clean pair) and ``dtw-1nn`` (too slow on a 710-sample
held-out batch) refuse programmatic tasks before the run starts.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

from harness import Agent, AgentContext, AgentInvocation
from harness import hookimpl

#: method -> (agent name, needs aeon)
METHODS = {"euclidean": ("euclidean-1nn", False), "dtw": ("dtw-1nn", True),
           "minirocket": ("minirocket-ridge", True)}
PROGRAMMATIC = ("euclidean", "minirocket", "random")


class ClassicalAgent(Agent):
    """One Appendix E baseline: ``method`` in euclidean | dtw | minirocket | random, optionally privileged."""

    version = "2"
    needs_model = False
    image_capable = False  # runs the host's Python with the harness's own packages

    def __init__(self, name: str, method: str, privileged: bool = False, needs_aeon: bool = False):
        self.name = name
        self.method = method
        self.privileged_inputs = privileged
        self.needs_aeon = needs_aeon

    def refusal(self, params) -> str | None:
        if self.needs_aeon and importlib.util.find_spec("aeon") is None:
            return "needs aeon, which is not installed: pip install -e '.[baselines]'"
        if getattr(params, "submission", None) != "programmatic":
            return None
        if self.privileged_inputs:
            return ("a privileged baseline cannot submit rule.py: predict(df) gets no clean no-intervention "
                    "pair (TraceBench Table 22 is direct-answer only)")
        if self.method not in PROGRAMMATIC:
            return "1-NN under DTW over the 710-sample held-out batch is too slow for programmatic submission"
        return None

    def command(self, ctx: AgentContext) -> AgentInvocation:
        info = {k: ctx.task_info.get(k) for k in ("submission", "labels", "columns", "impulse_columns")}
        argv = [sys.executable, "-m", "tsagent_plugins.agents.classical.solve", "--task-info", json.dumps(info),
                "--method", self.method]
        if self.privileged_inputs:
            argv.append("--privileged")
        peak = impulse_peak(ctx.profile.options if ctx.profile else {})
        if peak != "residual":
            argv += ["--impulse-peak", peak]
        env = {"PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1"}
        binds = runtime_files()
        if self.needs_aeon:
            from tsagent_plugins.agents.classical.numba_cache import ensure_cache

            cache = ensure_cache()
            env["HARNESS_NUMBA_CACHE"] = str(cache)
            binds.append(cache)
        return AgentInvocation(argv=argv, env=env, ro_binds=binds)


class EuclideanNN(ClassicalAgent):
    """The ``euclidean-1nn`` agent."""

    def __init__(self):
        super().__init__("euclidean-1nn", "euclidean")


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
            argv=["python3", "-S", str(script), "--task-info", json.dumps(info),  # -S: standard library only
                  "--base-url", ctx.model_base_url or "", "--model", (ctx.profile.model if ctx.profile else None)
                  or "probe", "--turns", str(turns)],
            env={"PYTHONDONTWRITEBYTECODE": "1"},
            ro_binds=[script],
        )


def impulse_peak(options: dict) -> str:
    """The profile option ``impulse_peak`` (default ``"residual"``): whose maximum absolute impulse divides
    the impulse channels (:func:`tsagent_plugins.agents.classical.nn.features`; the other reading of
    Appendix E is ``"observed"``).  ValueError naming the option for another value."""
    from tsagent_plugins.agents.classical.nn import PEAKS

    value = (options or {}).get("impulse_peak", "residual")
    if value not in PEAKS:
        raise ValueError(f"options.impulse_peak: expected one of {', '.join(PEAKS)}, got {value!r}")
    return value


def runtime_files() -> list[Path]:
    """What the agent runs inside the sandbox: this package and its parents' ``__init__`` files only
    (never the simulators or pool generators)."""
    here = Path(__file__).resolve().parent
    return [here.parent.parent / "__init__.py", here.parent / "__init__.py", here]


def agents() -> list[ClassicalAgent]:
    """The seven Appendix E agents."""
    out = []
    for method, (name, aeon) in METHODS.items():
        out.append(EuclideanNN() if method == "euclidean" else ClassicalAgent(name, method, False, aeon))
        out.append(ClassicalAgent(f"{name}-privileged", method, True, aeon))
    out.append(ClassicalAgent("random", "random"))
    return out


@hookimpl
def register_agents(register):
    for agent in agents():
        register(agent)
    register(ProxyProbe())


@hookimpl
def register_agent_profiles(register):
    """The proxy-probe agent's profile ships with it (a tool for measuring the harness, not a baseline)."""
    register(Path(__file__).resolve().parent / "proxy-probe.yaml")

"""A third-party agent: a nearest-centroid TraceBench baseline that needs no model.

In the sandbox it runs ``solve.py`` (beside this file) with the harness's own Python: it z-normalises each
series, averages the labeled examples of each class into a centroid and labels each test sample by the
nearest one.  It answers directly (``results.json``) and needs labeled examples; it refuses other episodes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness import Agent, AgentContext, AgentInvocation, hookimpl

HERE = Path(__file__).resolve().parent
SOLVER = HERE / "solve.py"


class NearestCentroid(Agent):
    name = "nearest-centroid"
    version = "1"
    needs_model = False  # no model proxy is started, and the kit runs a real small episode
    image_capable = False  # runs the host's Python: local sandboxes (bubblewrap, unshare, none), not docker

    def refusal(self, params) -> str | None:
        if getattr(params, "submission", "direct") != "direct":
            return "answers in results.json only (direct submission), it writes no rule.py"
        if getattr(params, "examples_per_class", 1) == 0:
            return "needs labeled examples (train_samples/) to build its centroids"
        return None

    def command(self, ctx: AgentContext) -> AgentInvocation:
        # A local sandbox sees the Python installation (site-packages: numpy, pandas) but not this package's
        # folder when it is installed editable (`pip install -e .`): bind the program read-only.
        return AgentInvocation(argv=[sys.executable, str(SOLVER)], env={"OMP_NUM_THREADS": "1"},
                               ro_binds=[SOLVER])


@hookimpl
def register_agents(register):
    register(NearestCentroid())


@hookimpl
def register_agent_profiles(register):
    register(HERE / "nearest-centroid.yaml")  # `--agent nearest-centroid` names this profile

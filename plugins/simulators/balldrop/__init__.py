"""BallDrop: a ball dropped onto the ground under gravity, quadratic drag and restitution.

TraceBench Section 4.1 and Appendix A.  Registered as the simulator ``balldrop``.
"""

from harness import hookimpl
from tsagent_plugins.simulators.balldrop.simulator import BallDrop

__all__ = ["BallDrop", "register_simulators"]


@hookimpl
def register_simulators(register):
    register(BallDrop())

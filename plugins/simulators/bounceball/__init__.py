"""BounceBall: a damped mass on a tilted rail between two walls.

TraceBench Appendix A, Tables 8-12.  Registered as the simulator ``bounceball``.
"""

from harness import hookimpl
from tsagent_plugins.simulators.bounceball.simulator import BounceBall, BounceBallRadians

__all__ = ["BounceBall", "BounceBallRadians", "register_simulators"]


@hookimpl
def register_simulators(register):
    register(BounceBall())
    register(BounceBallRadians())  # the other reading of Table 10's inclination unit

"""MassSlide: a block on an inclined plane under periodic forcing and Coulomb friction.

TraceBench Appendix A, Tables 13-17.  Registered as the simulator ``massslide``.
"""

from harness import hookimpl
from tsagent_plugins.simulators.massslide.simulator import MassSlide

__all__ = ["MassSlide", "register_simulators"]


@hookimpl
def register_simulators(register):
    register(MassSlide())

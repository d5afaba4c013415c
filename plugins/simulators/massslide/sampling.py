"""MassSlide baseline marginals (TraceBench Table 15) and intervention settings.

Every variable is drawn from a two-piece (log-)uniform :class:`Marginal` on Table 15's
``[min, max]`` (see :mod:`tsagent_plugins.simulators.common.sampling`) with the sampling median below,
set so the retained pool lands near Table 15's medians (``benchmarks/pool_summary.py --simulator massslide``).

Choices the paper leaves open, with reasons:

* ``mass`` is a sampled baseline value but not an intervention class (Appendix A lists four
  candidate labels): it is carried as a state variable of the configuration, next to the initial
  velocity and the forcing's ``Amplitude`` and ``Period``; log-uniform (Table 15's median 2.24 is
  the geometric mean of [0.5, 10]).
* ``initial_velocity``, ``Amplitude``, ``Period``, ``gravity_constant``: linear pieces with
  Table 15's medians (ranges within one decade, or signed).
* ``plane_inclination``: linear pieces, sampling median 14 degrees: steep planes keep the block
  moving and pass the filter more often, which moves the retained median up towards Table 15's 20.9.
* ``coulomb_friction_coefficient`` (0.08 to 6.54) and ``breakaway_friction_coefficient`` (1.1 to
  42.3): log-uniform pieces (their medians sit near the geometric means of the ranges).
* Interventions: time uniform in [0.2, 0.8] of the 10 s horizon; new values in Table 15's range,
  ``min_srd = 0.3`` and ``min_abs = 0.06`` for every parameter (the reference generator's values).
"""

from __future__ import annotations

from tsagent_plugins.simulators.common.sampling import Marginal

MIN_SRD, MIN_ABS = 0.3, 0.06

#: Table 15 (min, median, max).
TABLE15 = {
    "initial_velocity": (-5.0, 1.0, 12.0),
    "Amplitude": (-352.94, -27.652, 360.0),
    "Period": (0.68753, 1.7104, 2.8184),
    "mass": (0.5, 2.2361, 10.0),
    "gravity_constant": (4.0, 6.0, 18.432),
    "plane_inclination": (5.0, 20.945, 65.938),
    "coulomb_friction_coefficient": (0.08, 0.7746, 6.5425),
    "breakaway_friction_coefficient": (1.095, 6.0, 42.31),
}

MARGINALS = {
    "initial_velocity": Marginal(-5.0, 1.0, 12.0),
    "Amplitude": Marginal(-352.94, -27.652, 360.0),
    "Period": Marginal(0.68753, 1.7104, 2.8184),
    "mass": Marginal(0.5, 2.2361, 10.0, log=True),
    "gravity_constant": Marginal(4.0, 6.0, 18.432),
    "plane_inclination": Marginal(5.0, 14.0, 65.938),
    "coulomb_friction_coefficient": Marginal(0.08, 0.7746, 6.5425, log=True),
    "breakaway_friction_coefficient": Marginal(1.095, 6.0, 42.31, log=True),
}

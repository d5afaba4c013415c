"""MassSlide pool summary against Tables 15 and 17: ``python benchmarks/pool_summary_massslide.py``."""

from tsagent_plugins.simulators.common.summary import main
from tsagent_plugins.simulators.massslide.sampling import TABLE15

#: Table 17 (mean, SD) in dB per channel: mass_velocity, friction_force, normal_force.
TABLE17 = {"low": [(35.64, 6.58), (42.03, 9.75), (59.90, 0.40)],
           "high": [(23.60, 6.58), (29.99, 9.75), (47.86, 0.40)]}

if __name__ == "__main__":
    main("massslide", TABLE15, TABLE17, ["mass_velocity", "friction_force", "normal_force"])

"""BounceBall pool summary against Tables 10 and 12: ``python benchmarks/pool_summary_bounceball.py``."""

from tsagent_plugins.simulators.bounceball.sampling import TABLE10
from tsagent_plugins.simulators.common.summary import main

#: Table 12 (mean, SD) in dB per channel: position, velocity, force.
TABLE12 = {"low": [(30.02, 1.91), (40.98, 2.46), (39.09, 2.45)],
           "high": [(17.97, 1.91), (28.94, 2.46), (27.05, 2.45)]}

if __name__ == "__main__":
    main("bounceball", TABLE10, TABLE12, ["Position", "Velocity", "Force"])

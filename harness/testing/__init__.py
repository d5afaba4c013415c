"""Conformance suites for plugin authors: subclass one class per plugin kind in your tests.

Each class documents its fixture contract.  The built-in plugins run these same
suites in the project's own tests.
"""

from harness.testing.agent import AgentTests
from harness.testing.forecaster import ForecasterTests
from harness.testing.judge import JudgeTests
from harness.testing.simulator import SimulatorTests

__all__ = ["AgentTests", "ForecasterTests", "JudgeTests", "SimulatorTests"]

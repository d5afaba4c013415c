"""Conformance suites for plugin authors: subclass one class per plugin kind in your tests.

Each aggregate class (``SimulatorTests``, ``TaskTemplateTests``, ``AgentTests``,
``ForecasterTests``, ``MetricExtractorTests``, ``ModelBackendTests``,
``SandboxBackendTests``) is built
from per-area base classes in its module, so an author can leave one area out
by subclassing the others.  Each documents its fixture contract.  The built-in
plugins run these same suites in the project's own tests.
"""

from harness.testing.agent import AgentTests
from harness.testing.forecaster import ForecasterTests
from harness.testing.metrics import MetricExtractorTests
from harness.testing.judge import JudgeTests
from harness.testing.model import ModelBackendTests
from harness.testing.sandbox import SandboxBackendTests
from harness.testing.simulator import SimulatorTests
from harness.testing.task import TaskTemplateTests

__all__ = ["AgentTests", "ForecasterTests", "JudgeTests", "MetricExtractorTests", "ModelBackendTests", "SandboxBackendTests", "SimulatorTests",
           "TaskTemplateTests"]

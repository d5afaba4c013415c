"""Conformance suites for plugin authors: subclass one class per plugin kind in your tests.

Each aggregate class (``SimulatorTests``, ``TaskTemplateTests``, ``AgentTests``,
``ForecasterTests``, ``MetricExtractorTests``, ``ModelBackendTests``,
``SandboxBackendTests``, ``JudgeTests``) is built from per-area base classes in its
module where it has areas, so an author can leave one area out by subclassing the
others.  Every class's docstring lists the fixtures its tests use, each with its scope
and as *required* (the kit's fixture fails until you override it), *optional* (a default
you may override) or *provided* (built by the kit from the others; a fixture of the same
name in your class replaces it).  Override a fixture by defining one of the same name and
scope in your subclass; the forecaster kit's fixtures are class-scoped, written as
``@pytest.fixture(scope="class")`` over ``@classmethod``.  The built-in plugins run these
same suites in the project's own tests.
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

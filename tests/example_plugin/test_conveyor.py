"""A plugin author's whole test file: run the harness's simulator conformance suite."""

import pytest

from harness.testing import SimulatorTests

from .conveyor import Conveyor


class TestConveyor(SimulatorTests):
    @pytest.fixture
    def simulator(self):
        return Conveyor()

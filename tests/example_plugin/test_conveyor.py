"""A plugin author's whole test file: run the harness's simulator conformance suite.

``conveyor`` is imported as a top-level module, so this folder works copied under any name
(``pytest`` puts the folder of a test file outside a package on ``sys.path``)."""

import pytest
from harness.testing import SimulatorTests
from conveyor import Conveyor


class TestConveyor(SimulatorTests):
    @pytest.fixture
    def simulator(self):
        return Conveyor()

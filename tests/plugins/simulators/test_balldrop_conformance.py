"""The built-in BallDrop simulator passes the conformance suite third parties run."""

import pytest

from harness.plugins import get
from harness.testing import SimulatorTests


class TestBallDropConformance(SimulatorTests):
    n_configurations = 4

    @pytest.fixture
    def simulator(self):
        return get("simulator", "balldrop")

import pytest

from harness.testing import ForecasterTests
from drift import Drift


class TestDrift(ForecasterTests):
    @pytest.fixture(scope="class")
    @classmethod
    def forecaster(cls):
        return Drift()

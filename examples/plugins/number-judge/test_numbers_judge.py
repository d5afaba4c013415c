import pytest

from harness.testing import JudgeTests
from numbers_judge import NumberJudge


class TestNumberJudge(JudgeTests):
    @pytest.fixture
    def judge(self):
        return NumberJudge()

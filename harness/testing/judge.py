"""Conformance tests every evidence judge must pass (a semantic match of one ground-truth evidence
item against the numbered top-K synthesized items of a deep-research agent).

Fixture contract: override ``judge`` to return an instance of your
:class:`harness.contracts.Judge`.  The cases are class attributes (:data:`CASES`), so a
test of a model-backed judge can script its model's answers on them.

::

    import pytest
    from harness.testing.judge import JudgeTests

    class TestMyJudge(JudgeTests):
        @pytest.fixture
        def judge(self):
            return MyJudge()
"""

from __future__ import annotations

import pytest

from harness.contracts import Judge, Verdict

#: A ground-truth item that one candidate restates.
MATCH_ITEM = "Due to a software bug, sales from 2025-10-12 to 2025-11-03 were significantly higher than normal."
MATCH_CANDIDATES = ("The store ran a loyalty programme in spring.",
                    "A software bug inflated the recorded sales between 2025-10-12 and 2025-11-03, well above normal.")
#: A ground-truth item that no candidate states (another date, another topic).
MISS_ITEM = "The firmware update on 2025-10-07 08:20 restored normal CPU loads."
MISS_CANDIDATES = ("Irradiance peaks around noon on clear days.", "The data center opened in 2024.")


class JudgeTests:
    """Aggregate conformance suite for :class:`harness.contracts.Judge`.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``judge`` (required, function scope): your :class:`harness.contracts.Judge` instance.
    """

    @pytest.fixture
    def judge(self) -> Judge:
        pytest.fail("override the `judge` fixture to return your Judge instance")

    def test_names_version_and_kind_are_non_empty_strings(self, judge):
        for attr in ("name", "version", "kind"):
            assert isinstance(getattr(judge, attr), str) and getattr(judge, attr), attr
        assert judge.name in judge.label and judge.version in judge.label and judge.kind in judge.label

    def test_a_restated_item_matches_its_candidate(self, judge):
        verdict = judge.judge(MATCH_ITEM, list(MATCH_CANDIDATES))
        assert isinstance(verdict, Verdict) and verdict.status == "ok"
        assert verdict.matched is True and verdict.index == 2

    def test_an_absent_item_does_not_match(self, judge):
        verdict = judge.judge(MISS_ITEM, list(MISS_CANDIDATES))
        assert verdict.status == "ok" and verdict.matched is False and verdict.index is None

    def test_no_candidates_is_no_match(self, judge):
        verdict = judge.judge(MATCH_ITEM, [])
        assert verdict.status == "ok" and verdict.matched is False

    def test_verdicts_repeat(self, judge):
        first = judge.judge(MATCH_ITEM, list(MATCH_CANDIDATES))
        again = judge.judge(MATCH_ITEM, list(MATCH_CANDIDATES))
        assert (first.matched, first.index, first.status) == (again.matched, again.index, again.status)

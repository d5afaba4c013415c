"""Conformance tests every metric extractor must pass: exactly its declared columns, on any episode.

Fixture contract: override ``extractor`` to return your
:class:`harness.contracts.MetricExtractor`; optionally ``artifacts`` to return
a list of further :class:`harness.contracts.EpisodeArtifacts` it must handle
(a real episode of yours).  An empty trajectory, no trajectory and an empty
workspace are always checked.

::

    import pytest
    from harness.testing import MetricExtractorTests

    class TestMyExtractor(MetricExtractorTests):
        @pytest.fixture
        def extractor(self):
            return MyExtractor()
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from harness.contracts import EpisodeArtifacts, MetricExtractor

SCALARS = (type(None), bool, int, float, str)


class MetricExtractorContractTests:
    """The declared columns: non-empty, unique names; the ``version``: a non-empty string.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``extractor`` (required, function scope): your :class:`harness.contracts.MetricExtractor` instance.
    """

    @pytest.fixture
    def extractor(self) -> MetricExtractor:
        pytest.fail("override the `extractor` fixture to return your MetricExtractor instance")

    def test_columns_are_declared_once(self, extractor):
        assert isinstance(extractor, MetricExtractor)
        assert isinstance(extractor.version, str) and extractor.version, "version must be a non-empty string"
        columns = tuple(extractor.columns)
        assert columns and all(isinstance(c, str) and c for c in columns), columns
        assert len(set(columns)) == len(columns), f"duplicate columns in {columns}"


class MetricExtractorOutputTests:
    """``extract`` returns exactly the declared columns, as scalars, also on empty episodes.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``extractor`` (required, function scope): your :class:`harness.contracts.MetricExtractor` instance;
    - ``artifacts`` (optional, function scope): a list of further :class:`harness.contracts.EpisodeArtifacts`
      (e.g. a real episode of yours) checked besides the empty ones (default ``[]``).
    """

    @pytest.fixture
    def extractor(self) -> MetricExtractor:
        pytest.fail("override the `extractor` fixture to return your MetricExtractor instance")

    @pytest.fixture
    def artifacts(self) -> list[EpisodeArtifacts]:
        return []

    @staticmethod
    def empty_episodes(folder: Path) -> list[EpisodeArtifacts]:
        folder.mkdir(parents=True, exist_ok=True)
        return [
            EpisodeArtifacts(trajectory=None, proxy_log=None, workspace=folder),
            EpisodeArtifacts(trajectory={"schema_version": "ATIF-v1.6", "session_id": "empty", "steps": []},
                             proxy_log=folder / "missing-proxy.jsonl", workspace=folder),
        ]

    def test_returns_exactly_its_columns(self, extractor, artifacts, tmp_path):
        for case in self.empty_episodes(tmp_path / "ws") + list(artifacts):
            values = extractor.extract(case)
            assert isinstance(values, dict), f"extract() returned {type(values).__name__}"
            assert set(values) == set(extractor.columns), \
                f"columns {sorted(values)} differ from the declared {sorted(extractor.columns)}"
            for column, value in values.items():
                assert isinstance(value, SCALARS), f"{column}: {type(value).__name__} is not a scalar"
                assert not (isinstance(value, float) and math.isinf(value)), f"{column} is infinite"


class MetricExtractorTests(MetricExtractorContractTests, MetricExtractorOutputTests):
    """Aggregate conformance suite for :class:`harness.contracts.MetricExtractor`.

    Fixtures (override one by defining a fixture of the same name and scope in your subclass):

    - ``extractor`` (required, function scope): your :class:`harness.contracts.MetricExtractor` instance;
    - ``artifacts`` (optional, function scope): a list of further :class:`harness.contracts.EpisodeArtifacts`
      (e.g. a real episode of yours) checked besides the empty ones (default ``[]``).
    """

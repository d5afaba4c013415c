"""Metric extractor contract: an episode's artifacts -> named numbers (e.g. tool calls, tokens)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class EpisodeArtifacts:
    """Where an episode's evidence lives: the ATIF ``trajectory`` dict (or None),
    the proxy log path (or None), the copied-out ``workspace``, and the agent profile."""

    trajectory: dict | None
    proxy_log: Path | None
    workspace: Path
    profile: Any = None


class MetricExtractor(ABC):
    """Contract every metric extractor implements.  ``columns``: the names it returns."""

    name: str
    columns: tuple[str, ...]

    @abstractmethod
    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        """Return a value (or None when undefined) for each of ``columns``."""

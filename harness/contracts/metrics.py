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
    """Contract every metric extractor implements.

    ``columns``: the results columns it returns, ``name -> (dtype, meaning)`` with dtype ``str``, ``int``,
    ``float`` or ``bool``; they join the results schema (:mod:`harness.columns`), and a name another owner
    declares (the harness, the task template, another extractor) is refused before a run starts.
    """

    name: str
    columns: dict[str, tuple[str, str]]

    @abstractmethod
    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        """Return a value (or None when undefined) for each of ``columns``."""

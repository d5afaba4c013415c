"""Metric extractor contract: an episode's artifacts -> named numbers (e.g. tool calls, tokens)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:
    from harness.proxy_records import ProxyRecords

T = TypeVar("T")


@dataclass
class EpisodeArtifacts:
    """Where an episode's evidence lives: the ATIF ``trajectory`` dict (or None), the proxy log path (or None;
    ``proxy.jsonl.zst``, or an older run's plain ``proxy.jsonl``), the copied-out ``workspace``, and the agent
    profile.

    One instance serves every extractor of an episode: :attr:`proxy_records` parses the proxy log once, and
    :meth:`shared` keeps any other value several extractors derive from the artifacts.
    """

    trajectory: dict | None
    proxy_log: Path | None
    workspace: Path
    profile: Any = None
    _shared: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @cached_property
    def proxy_records(self) -> ProxyRecords | None:
        """The request and response records of ``proxy_log`` (None when there is no such file), read
        leniently by :func:`harness.load_log` (broken lines skipped and counted) on first access, once."""
        if self.proxy_log is None or not Path(self.proxy_log).is_file():
            return None
        from harness.proxy_records import load_log

        return load_log(self.proxy_log, lenient=True)

    def shared(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, called on the first request for ``key`` of this episode only; later requests get the
        same value (e.g. a replay of the trajectory that several extractors read)."""
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]


class MetricExtractor(ABC):
    """Contract every metric extractor implements.

    ``columns``: the results columns it returns, ``name -> (dtype, meaning)`` with dtype ``str``, ``int``,
    ``float`` or ``bool``; they join the results schema (:mod:`harness.columns`), and a name another owner
    declares (the harness, the task template, another extractor) is refused before a run starts.

    ``version``: the version of what :meth:`extract` computes, changed whenever a value could change on the
    same episode (a definition, a parser, a tokenizer); every results row records it (``extractor_versions``,
    :mod:`harness.provenance`), ``harness report`` keeps rows of two versions apart and ``harness rescore``
    recomputes old rows with the current one.  Default ``"0"``: never versioned.
    """

    name: str
    columns: dict[str, tuple[str, str]]
    version: str = "0"

    @abstractmethod
    def extract(self, artifacts: EpisodeArtifacts) -> dict[str, Any]:
        """Return a value (or None when undefined) for each of ``columns``."""

"""Judge contract: does a ground-truth evidence item match one of an agent's synthesized items?

Evidence recall needs a judge of *semantic match* between one ground-truth evidence item and
the numbered top-K synthesized items of a deep-research agent.  Every judge says what it is (``kind``) and which prompt or rule it applies
(``version``), and results rows carry both, so a report never mixes two judges in one column.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Sequence

OK = "ok"
MALFORMED = "malformed"
ERROR = "error"


@dataclass(frozen=True)
class Verdict:
    """One judgement.  ``matched``: True/False, None when no valid answer was obtained
    (``status`` ``malformed``: the judge answered but not in the required form;
    ``error``: no answer, e.g. a refused or failed request).  ``index``: the 1-based
    position of the matching candidate (None when not matched).  ``reason``: why a
    verdict is malformed or an error; ``raw``: the judge's answer text (clipped);
    ``info``: free-form (scores, usage)."""

    matched: bool | None
    index: int | None = None
    status: str = OK
    reason: str | None = None
    raw: str | None = None
    info: dict[str, Any] = field(default_factory=dict)


class Judge(ABC):
    """Contract of every judge.  ``name``: the registry name; ``version``: the prompt or rule
    version (changes whenever a verdict could change); ``kind``: e.g. ``llm`` or a rule-based kind,
    shown in every report beside the judge's numbers."""

    name: str
    version: str
    kind: str

    @property
    def label(self) -> str:
        """``name@version (kind)``, the label reports print."""
        return f"{self.name}@{self.version} ({self.kind})"

    @abstractmethod
    def judge(self, item: str, candidates: Sequence[str]) -> Verdict:
        """Judge ``item`` against the numbered ``candidates`` (1-based, in the agent's order).

        Never raises for what a model or an agent wrote: a bad answer is a ``malformed``
        verdict, a failed call an ``error`` one.  An empty ``candidates`` list is not a
        match (status ``ok``)."""
